"""The pacer against the service's own rate limiter (service.access.ratelimit, on the `limits`
library) in simulated time: hours of traffic in a second, with the reported window switching
between per-second, per-minute and per-hour."""

from __future__ import annotations

import email.utils
import heapq
import itertools
import random
import threading
import types

import limits.storage.memory
import pytest

import service.access.ratelimit
from queryapi.pacing import LATENCY_ALLOWANCE, Pacer
from service.access.ratelimit import RateLimiter

START = 1_800_000_000.25


class FakeTime:
    def __init__(self):
        self.now = START

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


@pytest.fixture
def fake_time(monkeypatch):
    clock = FakeTime()
    fake = types.SimpleNamespace(time=clock.time, monotonic=clock.time, sleep=clock.advance)
    monkeypatch.setattr(limits.storage.memory, "time", fake)
    monkeypatch.setattr(service.access.ratelimit, "time", fake)
    return clock


def earliest_starts(calls: int, limits_: tuple[int, int, int]) -> list[float]:
    """When each call could start at the earliest, calls taking no time (the floor)."""
    starts: list[float] = []
    for k in range(calls):
        start = 0.0
        for seconds, limit in zip((1, 60, 3600), limits_, strict=True):
            if k >= limit:
                start = max(start, starts[k - limit] + seconds)
        starts.append(start)
    return starts


def simulate(clock: FakeTime, limits_, calls: int, *, latency=(0.001, 0.004),
             service_time=(0.005, 0.03), rng=None, limiter=None, skew=0.0):
    """`calls` successful requests through pacer and limiter; (rejections, last start, pacer).

    `skew`: how far the client's wall clock is ahead of the service's (which then sends Date).
    """
    rng = rng or random.Random(7)
    limiter = limiter or RateLimiter("memory://")
    pacer = Pacer(clock=clock.time, wall_clock=lambda: clock.time() + skew)

    def headers(decision):
        date = {"Date": email.utils.formatdate(clock.now, usegmt=True)} if skew else {}
        return {**decision.headers(), **date}

    rejected = done = 0
    last_start = clock.now
    while done < calls:
        clock.advance(pacer.delay())
        sent = clock.now
        clock.advance(rng.uniform(*latency))
        decision = limiter.hit("org:simulated", limits_)
        clock.advance(rng.uniform(*service_time))
        if decision.allowed:
            done += 1
            last_start = sent
            pacer.observe(sent, clock.now, 200, headers(decision))
        else:
            rejected += 1
            pacer.observe(sent, clock.now, 429, headers(decision), float(decision.retry_after))
    return rejected, last_start - START, pacer


def test_default_limits_over_an_hour_and_a_bit_without_a_429(fake_time):
    limits_ = (10, 300, 10_000)
    calls = 10_300  # past the hourly budget: second, minute and hour windows all bind
    rejected, elapsed, pacer = simulate(fake_time, limits_, calls)
    floor = earliest_starts(calls, limits_)[-1]
    assert rejected == 0
    assert pacer.windows == {1.0: 10, 60.0: 300, 3600.0: 10_000}
    assert floor <= elapsed <= floor * 1.02 + 2, (elapsed, floor)


@pytest.mark.parametrize("limits_", [(3, 100, 1000), (5, 60, 200), (20, 30, 1000), (7, 7, 50)])
def test_custom_limits_without_a_429(fake_time, limits_):
    calls = 400
    rejected, elapsed, _ = simulate(fake_time, limits_, calls)
    floor = earliest_starts(calls, limits_)[-1]
    assert rejected == 0
    assert floor <= elapsed <= floor * 1.05 + 2, (elapsed, floor)


def test_network_jitter_costs_no_429(fake_time):
    # One-way delays between 0 and 80 ms: a request is logged when its answer is back, which
    # is never before the service counted it.
    rejected, _, pacer = simulate(fake_time, (10, 300, 10_000), 600, latency=(0.0, 0.08),
                                  rng=random.Random(3))
    assert rejected == 0 and pacer.margin == 0.01


def test_slow_links_and_big_batches_are_absorbed(fake_time):
    # Counted up to 0.6 s after sending, answered a second later: beyond what the pacer
    # assumes, so a few 429s; each widens the margin, and the run completes.
    limits_ = (2, 300, 10_000)
    rejected, elapsed, pacer = simulate(fake_time, limits_, 300, latency=(0.0, 0.6),
                                        service_time=(0.0, 0.2), rng=random.Random(5))
    assert 0 < rejected <= 10
    assert pacer.margin > 0.01
    # slower than the floor: every cycle now waits out the worst latency seen
    assert elapsed <= earliest_starts(300, limits_)[-1] * 1.6


@pytest.mark.parametrize("skew", [-42.0, 30.0])
def test_a_wrong_client_clock_is_corrected_from_the_date_header(fake_time, skew):
    limits_ = (10, 300, 10_000)
    rejected, elapsed, pacer = simulate(fake_time, limits_, 700, skew=skew)
    assert rejected == 0
    assert pacer.windows == {1.0: 10, 60.0: 300}
    assert elapsed <= earliest_starts(700, limits_)[-1] * 1.02 + 2


def test_budget_spent_by_someone_else_falls_back_to_the_service_word(fake_time):
    limits_ = (10, 300, 10_000)
    limiter = RateLimiter("memory://")
    for _ in range(295):  # another job spent most of this minute's budget
        assert limiter.hit("org:simulated", limits_).allowed
        fake_time.advance(0.11)
    rejected, elapsed, _ = simulate(fake_time, limits_, 100, limiter=limiter)
    assert rejected <= 1
    assert elapsed < 3 * 60


def simulate_concurrent(clock: FakeTime, limits_, calls: int, *, callers: int = 2,
                        latency=(0.001, 0.004), service_time=((0.005, 0.03), (0.2, 0.6)),
                        rng=None, reserve=True):
    """`calls` successful requests made by `callers` callers at once sharing one pacer, as
    events in simulated time: caller i's requests take `service_time[i % len]` to be served
    (a job reads small pages quickly while the previous big batch is written). `reserve`:
    take the place before sending (try_reserve), else the old way (delay, then send).
    (rejections, last start, pacer)."""
    rng = rng or random.Random(11)
    limiter = RateLimiter("memory://")
    pacer = Pacer(clock=clock.time, wall_clock=clock.time)
    events: list[tuple[float, int, int, str, tuple]] = []
    order = itertools.count()

    def at(moment, caller, kind, *data):
        heapq.heappush(events, (moment, next(order), caller, kind, data))

    for caller in range(callers):
        at(clock.now, caller, "ready")
    rejected = done = started = 0
    last_start = clock.now
    while events:
        moment, _, caller, kind, data = heapq.heappop(events)
        clock.now = max(clock.now, moment)
        if kind == "ready":
            if started >= calls:
                continue
            if reserve:
                ticket, wait = pacer.try_reserve()
            else:
                ticket, wait = None, pacer.delay()
            if wait > 0:
                at(clock.now + wait, caller, "ready")
                continue
            started += 1
            at(clock.now + rng.uniform(*latency), caller, "counted", clock.now, ticket)
        elif kind == "counted":
            sent, ticket = data
            decision = limiter.hit("org:simulated", limits_)
            served = service_time[caller % len(service_time)]
            at(clock.now + rng.uniform(*served), caller, "answered", sent, ticket, decision)
        else:
            sent, ticket, decision = data
            if decision.allowed:
                done += 1
                last_start = max(last_start, sent)
                pacer.observe(sent, clock.now, 200, decision.headers(), ticket=ticket)
            else:
                rejected += 1
                started -= 1  # to be made again
                pacer.observe(sent, clock.now, 429, decision.headers(),
                              float(decision.retry_after), ticket=ticket)
            at(clock.now, caller, "ready")
    assert done == calls
    return rejected, last_start - START, pacer


def test_two_callers_sharing_a_pacer_get_no_429(fake_time):
    # A pipelined job: one thread reads pages (fast), the other writes batches (slow), both
    # through one BACKGROUND client. Past the hourly budget, so every window binds.
    limits_ = (10, 300, 10_000)
    calls = 10_300
    rejected, elapsed, pacer = simulate_concurrent(fake_time, limits_, calls)
    floor = earliest_starts(calls, limits_)[-1]
    assert rejected == 0
    assert pacer.windows == {1.0: 10, 60.0: 300, 3600.0: 10_000}
    assert not pacer._pending
    assert floor <= elapsed <= floor * 1.02 + 2, (elapsed, floor)


@pytest.mark.parametrize("callers", [2, 4])
@pytest.mark.parametrize("limits_", [(10, 300, 10_000), (3, 100, 1000), (7, 7, 50)])
def test_concurrent_callers_with_jitter_get_no_429(fake_time, limits_, callers):
    calls = 400
    rejected, elapsed, _ = simulate_concurrent(
        fake_time, limits_, calls, callers=callers, latency=(0.0, 0.08),
        service_time=((0.0, 0.05), (0.05, 0.4)), rng=random.Random(callers))
    floor = earliest_starts(calls, limits_)[-1]
    assert rejected == 0
    assert floor <= elapsed <= floor * 1.05 + 2, (elapsed, floor)


def test_without_reservations_concurrent_callers_overshoot(fake_time):
    # What reserving prevents: counting a request only once answered lets the other caller
    # send into a window that is already full.
    rejected, _, _ = simulate_concurrent(fake_time, (10, 300, 10_000), 2000, reserve=False)
    assert rejected > 0


def test_reservations_are_atomic_across_threads():
    frozen = START
    pacer = Pacer(clock=lambda: frozen)
    pacer.windows = {1.0: 3, 60.0: 100, 3600.0: 1000}
    granted = []
    barrier = threading.Barrier(16)

    def try_once():
        barrier.wait()
        ticket, _ = pacer.try_reserve()
        if ticket is not None:
            granted.append(ticket)

    threads = [threading.Thread(target=try_once) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(granted) == 3
    assert pacer.delay() == pytest.approx(LATENCY_ALLOWANCE + 1.0 + pacer.margin)


def test_a_failed_request_keeps_its_place_and_an_uncharged_one_gives_it_back(fake_time):
    pacer = Pacer(clock=fake_time.time)
    pacer.windows = {1.0: 2, 60.0: 100, 3600.0: 1000}
    first = pacer.acquire(sleep=fake_time.advance)
    second = pacer.acquire(sleep=fake_time.advance)
    assert pacer.delay() > 1.0  # both in flight: the window is full
    pacer.observe(START, START + 0.01, 503, {}, 30.0, ticket=first)  # not charged
    assert pacer.delay() == 0.0
    pacer.abandon(second)  # connection dropped: it may have been counted
    third = pacer.acquire(sleep=fake_time.advance)
    assert fake_time.now == START  # one place was free
    pacer.acquire(sleep=fake_time.advance)  # waits for the abandoned request's second
    assert fake_time.now == pytest.approx(START + 1.0 + pacer.margin)
    assert third is not None and not pacer._pending.keys() - {third, third + 1}


def test_while_a_window_is_unknown_only_the_reported_room_is_used_concurrently(fake_time):
    pacer = Pacer(clock=fake_time.time, wall_clock=fake_time.time)
    first, _ = pacer.try_reserve()
    assert first is not None
    assert pacer.try_reserve()[0] is None  # nothing known yet: one request at a time
    reset = str(int(START) + 2)
    pacer.observe(START, START + 0.01, 200, {"X-RateLimit-Limit": "10",
                                             "X-RateLimit-Remaining": "3",
                                             "X-RateLimit-Reset": reset}, ticket=first)
    assert pacer.windows == {}  # someone else spends this budget too: not explained
    # Three requests left in the reported window: three may be out at once, not four.
    tickets = [pacer.try_reserve()[0] for _ in range(3)]
    assert None not in tickets
    assert pacer.try_reserve()[0] is None
    pacer.abandon(tickets[0])
    assert pacer.try_reserve()[0] is None  # still at most three after the report
