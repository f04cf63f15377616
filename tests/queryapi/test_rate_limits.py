"""429s and pacing against the service's real rate limiter, with custom low limits."""

from __future__ import annotations

import threading
import time

import pytest

from queryapi import Mode, RateLimited, TagAssignment
from queryapi.pacing import LATENCY_ALLOWANCE
from tests.support.clients import FAST
from tests.support.world import UNLIMITED


def test_background_completes_through_real_429s(make_client, world, many_queries, api):
    world.set_limits(3, 1000, 100_000)
    rival_key = world.new_key()  # another job of the same organization, sharing the budget
    rival = api.__class__(api.base_url, rival_key, world.project_id)
    stop = threading.Event()
    job = make_client(Mode.BACKGROUND, **FAST)

    def spend_budget():  # until the job has met a few 429s
        while not stop.is_set() and job.stats.rate_limited < 3:
            rival.tags()
            stop.wait(0.15)

    for _ in range(3):  # the window is full before the job starts
        assert rival.tags().status_code == 200
    thread = threading.Thread(target=spend_budget, daemon=True)
    thread.start()
    brand = world.tags["brand"]
    try:
        updated = job.set_tags(world.project_id, [
            TagAssignment(q, lang, country, (brand,)) for q, lang, country, _ in many_queries])
    finally:
        stop.set()
        thread.join(5)

    stats = job.stats
    assert stats.rate_limited >= 1  # the service really said 429
    assert stats.requests - stats.rate_limited == 3  # and each batch went through once
    assert stats.slept >= 1  # Retry-After was honoured
    assert len(updated) == 2500 and all(q.tags == (brand,) for q in updated)
    world.set_limits(*UNLIMITED)
    assert api.queries(tagNames=["brand"], limit=1).json()["page"]["totalRecords"] == 2500
    assert api.queries(tagNames=["sale"], limit=1).json()["page"]["totalRecords"] == 0


def test_interactive_raises_rate_limited_with_the_wait(client, world):
    world.set_limits(1000, 2, 100_000)  # two a minute
    client.list_projects()
    client.list_projects()
    started = time.monotonic()
    with pytest.raises(RateLimited) as caught:
        client.list_projects()
    assert time.monotonic() - started < 1  # did not sit out a minute
    error = caught.value
    assert error.status == 429 and 2 < error.retry_after <= 60
    assert f"retry in {round(error.retry_after)} seconds" in error.message
    assert client.stats.rate_limited == 1 and client.stats.slept == 0


def test_interactive_waits_out_a_short_retry_after(client, world):
    world.set_limits(2, 1000, 100_000)
    started = time.monotonic()
    for _ in range(3):
        client.list_tags(world.project_id)
    stats = client.stats
    assert stats.rate_limited == 1 and stats.requests == 4
    assert 0 < stats.slept <= 2
    assert time.monotonic() - started < 3


def test_interactive_budget_is_shared_by_the_retries_of_one_call(make_client, world):
    world.set_limits(1, 1000, 100_000)
    impatient = make_client(interactive_budget=0.5)
    impatient.list_projects()
    with pytest.raises(RateLimited) as caught:
        impatient.list_projects()
    assert caught.value.retry_after == 1
    assert impatient.stats.slept == 0


def test_background_paces_itself_without_a_single_429(make_client, world, monkeypatch):
    world.set_limits(5, 60, 100_000)
    job = make_client(Mode.BACKGROUND, **FAST)
    pacer = job._transport.pacer
    late = answers_slower_than_the_allowance(pacer, monkeypatch)
    started = time.monotonic()
    for _ in range(40):
        job.list_tags(world.project_id, limit=1)
    elapsed = time.monotonic() - started
    assert pacer.windows == {1.0: 5}
    # The pacer takes a request as counted LATENCY_ALLOWANCE after its sending at the latest.
    # An answer slower than that (a starved machine) may have been counted later, and the
    # request a window after it may then meet a 429, which the pacer waits out. Otherwise none.
    assert job.stats.rate_limited <= len(late), late
    assert job.stats.requests == 40 + job.stats.rate_limited
    # 40 calls under 5/s: the 36th cannot start before 7 s; allow for the jitter margin.
    assert 7 <= elapsed < 9.5 + sum(late) + job.stats.slept * (job.stats.rate_limited > 0)


def answers_slower_than_the_allowance(pacer, monkeypatch) -> list[float]:
    """The round trips, in seconds, of the answers the pacer sees that take longer than
    LATENCY_ALLOWANCE: when those were counted is beyond what the pacer assumes."""
    late = []
    observe = pacer.observe

    def observe_and_time(started, finished, *args, **kwargs):
        if finished - started > LATENCY_ALLOWANCE:
            late.append(round(finished - started, 3))
        return observe(started, finished, *args, **kwargs)

    monkeypatch.setattr(pacer, "observe", observe_and_time)
    return late
