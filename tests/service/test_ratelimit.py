"""Rate limits per organization over real HTTP: 10/s, 300/min, 10,000/h by default."""

import re
import threading
import time
import types

import pytest
import requests

from service.config import DEFAULT_LIMITS
from tests.support.api import Api
from tests.support.waiting import wait_until

# A per-minute and per-hour amount no test comes near (see wait_for_an_empty_second).
NEVER = 10**9


@pytest.fixture
def service_config(service_config):
    return {**service_config, "DEFAULT_LIMITS": DEFAULT_LIMITS}


def burst(api, count):
    return [api.projects() for _ in range(count)]


def wait_for_an_empty_second(service_app, identity: str, per_second: int) -> None:
    """Wait until the identity's per-second window holds none of its requests, asking the
    service's own limiter (in this process; `peek` charges nothing): what a sleep of just over a
    second hoped for, checked instead of assumed. `limits` takes no clock a test could drive,
    so real time passes, but only as much as the window needs.

    The windows' storage keys leave the amount out (service/access/ratelimit.py), so peeking with
    NEVER per minute and per hour reads the real windows and reports the per-second one."""
    limiter = service_app.extensions["tagdesk_ratelimiter"]

    def empty() -> bool:
        window = limiter.peek(identity, (per_second, NEVER, NEVER)).window
        return window.limit == per_second and window.remaining == per_second

    assert wait_until(empty, timeout=5, interval=0.01), "the per-second window never emptied"


def burst_within_a_second(service_app, identity: str, per_second: int, api, count: int,
                          attempts: int = 5) -> list[requests.Response]:
    """`count` requests that all reach the service within one second, from an empty
    per-second window: only then does the per-second limit decide their answers. A busy
    machine can stretch a burst past the second (the moving window then lets the last one
    through); such a burst is tried again, after its window has emptied."""
    for _ in range(attempts):
        wait_for_an_empty_second(service_app, identity, per_second)
        started = time.monotonic()
        responses = burst(api, count)
        if time.monotonic() - started < 1:
            return responses
    pytest.fail(f"no burst of {count} requests fit in one second in {attempts} attempts")


def org(world) -> str:
    return "org:" + world.org_id


def test_eleventh_request_within_a_second_is_429_with_exact_body(service_app, api, world):
    responses = burst_within_a_second(service_app, org(world), 10, api, 11)
    assert [r.status_code for r in responses] == [200] * 10 + [429]
    rejected = responses[-1]
    body = rejected.json()
    assert set(body) == {"statusCode", "message", "error"}
    assert body["statusCode"] == 429 and body["error"] == "Too Many Requests"
    assert body["message"] == "Rate limit exceeded. Retry in 1 second."
    assert rejected.headers["Retry-After"] == "1"
    assert rejected.headers["X-RateLimit-Limit"] == "10"
    assert rejected.headers["X-RateLimit-Remaining"] == "0"


def test_headers_on_every_response_and_retry_after_only_on_429(api, world):
    responses = [api.projects(), api.queries(), api.tags(), api.call("GET", "/api/nothing"),
                 api.queries(limit=5000)]
    for response in responses:
        assert response.status_code != 429
        for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            assert response.headers[name].isdigit(), name
        assert "Retry-After" not in response.headers
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in responses]
    assert remaining == [9, 8, 7, 6, 5]
    reset = int(responses[0].headers["X-RateLimit-Reset"])
    assert time.time() <= reset <= time.time() + 2


def test_headers_report_the_window_closest_to_exhaustion(service_app, live_service, world):
    world.set_limits(10, 300, 11)
    api = Api(live_service.url, world.key, world.project_id)
    api.projects()
    second = api.projects()
    # per-hour has 9 left, per-second 8: the per-second window is closest.
    assert (second.headers["X-RateLimit-Limit"], second.headers["X-RateLimit-Remaining"]) == (
        "10", "8")
    wait_for_an_empty_second(service_app, org(world), 10)
    for _ in range(5):
        last = api.projects()
    # per-second has 5 left, per-hour 4: per-hour is reported, resetting in about an hour.
    assert (last.headers["X-RateLimit-Limit"], last.headers["X-RateLimit-Remaining"]) == (
        "11", "4")
    assert int(last.headers["X-RateLimit-Reset"]) >= time.time() + 3500


def test_on_a_tie_the_longer_window_is_reported(live_service, world):
    world.set_limits(10, 10, 1000)
    response = Api(live_service.url, world.key, world.project_id).projects()
    assert response.headers["X-RateLimit-Remaining"] == "9"
    assert int(response.headers["X-RateLimit-Reset"]) >= time.time() + 55


def test_rejected_requests_do_not_consume_quota(service_app, live_service, world):
    world.set_limits(2, 4, 100)
    api = Api(live_service.url, world.key, world.project_id)
    assert [r.status_code for r in burst(api, 6)] == [200, 200, 429, 429, 429, 429]
    wait_for_an_empty_second(service_app, org(world), 2)
    # Only the two accepted requests count against the minute: two more fit.
    assert [r.status_code for r in burst(api, 2)] == [200, 200]
    wait_for_an_empty_second(service_app, org(world), 2)
    rejected = api.projects()
    assert rejected.status_code == 429
    assert rejected.headers["X-RateLimit-Limit"] == "4"
    assert 55 <= int(rejected.headers["Retry-After"]) <= 60


def test_keys_of_one_organization_share_a_budget(live_service, world):
    # The minute decides here: a slow machine cannot stretch the burst out of it.
    world.set_limits(1000, 10, 10_000)
    other_key = world.new_key()
    first = Api(live_service.url, world.key, world.project_id)
    second = Api(live_service.url, other_key, world.project_id)
    assert all(r.status_code == 200 for r in burst(first, 5) + burst(second, 5))
    assert first.projects().status_code == 429
    assert second.projects().status_code == 429


def test_organizations_have_separate_budgets(live_service, world):
    _, their_key, their_project = world.new_org()
    ours = Api(live_service.url, world.key, world.project_id)
    theirs = Api(live_service.url, their_key, their_project)
    world.set_limits(1000, 10, 10_000)  # ours: the minute decides, however slow the machine
    assert burst(ours, 11)[-1].status_code == 429
    assert [r.status_code for r in burst(theirs, 10)] == [200] * 10


def test_custom_limits_apply(service_app, live_service, world):
    world.set_limits(3, 100, 1000)
    api = Api(live_service.url, world.key, world.project_id)
    statuses = [r.status_code for r in burst_within_a_second(service_app, org(world), 3, api, 4)]
    assert statuses == [200, 200, 200, 429]
    assert api.projects().headers["X-RateLimit-Limit"] == "3"


def test_requests_without_a_valid_key_are_limited_per_address(service_app, live_service, world):
    anonymous = Api(live_service.url, "tdk_live_guess", None)
    responses = burst_within_a_second(service_app, "addr:127.0.0.1", 10, anonymous, 11)
    assert [r.status_code for r in responses] == [401] * 10 + [429]
    # The organization's own budget is untouched.
    assert Api(live_service.url, world.key, None).projects().status_code == 200


def test_changing_limits_keeps_what_was_already_counted(live_service, world):
    # The minute decides here: a slow machine cannot stretch the bursts out of it.
    world.set_limits(1000, 5, 10_000)
    api = Api(live_service.url, world.key, world.project_id)
    assert [r.status_code for r in burst(api, 4)] == [200] * 4
    world.set_limits(1000, 6, 10_000)
    # The four requests already made still count against the new limit of six.
    assert [r.status_code for r in burst(api, 3)] == [200, 200, 429]


def test_the_wait_in_the_message_and_in_retry_after_agree():
    """The message is written when the request is refused and the header a little later: both
    count from the decision, so a wait that crosses a whole second in between is not told
    as 2 seconds in one and 1 in the other."""
    from service.access.ratelimit import Decision, WindowState

    # A decision taken 5 ms ago, its window freeing 1.002 s after it: 2 seconds counted from
    # the decision, 1 counted from now. No time needs to pass: it already has.
    decided_at = time.time() - 0.005
    decision = Decision(False, WindowState(10, 0, decided_at + 1.002, 1), decided_at)
    in_message = decision.retry_after
    assert decision.headers()["Retry-After"] == str(in_message) == "2"


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    import service.access.ratelimit

    fake = FakeClock()
    monkeypatch.setattr(service.access.ratelimit, "time", types.SimpleNamespace(time=fake.time))
    return fake


def test_in_memory_windows_start_no_thread_even_for_spaced_requests(monkeypatch, clock):
    """`limits`' MemoryStorage would start a new timer thread on a hit more than 10 ms after
    the last one, and the request would wait for it: the service's storage starts none.

    The hits are spaced on the limiter's clock, not by sleeping: every thread started from the
    storage's creation on is recorded (MemoryStorage starts its first timer when it is made),
    so real time passing between the hits would add nothing to what this catches."""
    from service.access.ratelimit import InProcessWindows, RateLimiter

    started = []
    original = threading.Thread.start

    def start(thread, *args, **kwargs):
        started.append(thread)
        return original(thread, *args, **kwargs)

    monkeypatch.setattr(threading.Thread, "start", start)
    limiter = RateLimiter("memory://")
    assert isinstance(limiter.storage, InProcessWindows)
    decisions = []
    for _ in range(4):
        decisions.append(limiter.hit("org:spaced", (3, 100, 1000)))
        clock.now += 0.015
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert started == []


def test_in_memory_moving_windows_are_exact(clock):
    """Random traffic, limits changing on the way: every decision and every reported window
    is the one a plain list of the admitted requests' times gives."""
    import random

    from service.access.ratelimit import RateLimiter

    limiter = RateLimiter("memory://")
    rng = random.Random(3)
    admitted: list[float] = []
    limits = (4, 20, 200)
    for step in range(3000):
        clock.now += rng.choice((0.0, 0.001, 0.05, 0.2, 0.3, 1.0, 7.0, 30.0))
        if step % 500 == 499:
            limits = (rng.randint(1, 6), rng.randint(5, 30), rng.randint(100, 400))
        counts = [sum(1 for t in admitted if t > clock.now - seconds)
                  for seconds in (1, 60, 3600)]
        expected = all(c < limit for c, limit in zip(counts, limits, strict=True))
        decision = limiter.hit("org:exact", limits)
        assert decision.allowed == expected, step
        if expected:
            admitted.append(clock.now)
        states = []
        for seconds, limit in zip((1, 60, 3600), limits, strict=True):
            in_window = [t for t in admitted if t > clock.now - seconds]
            reset = in_window[0] + seconds if in_window else clock.now + seconds
            states.append((limit, max(limit - len(in_window), 0), reset, seconds))
        limit, remaining, reset, seconds = min(states, key=lambda s: (s[1], -s[3]))
        window = limiter.peek("org:exact", limits).window
        assert (window.limit, window.remaining, window.seconds) == (limit, remaining, seconds)
        assert window.reset_at == pytest.approx(reset), step


def test_in_memory_windows_with_no_hit_left_are_forgotten(clock):
    """Without a thread: later charges of windows of the same length drop them, a few each."""
    from service.access.ratelimit import FORGET_PER_CHARGE, RateLimiter

    limiter = RateLimiter("memory://")
    for i in range(40):
        assert limiter.hit(f"addr:10.0.0.{i}", (10, 300, 10_000)).allowed
    assert len(limiter.storage) == 40 * 3
    clock.now += 61  # the second and minute windows of all forty have emptied
    assert limiter.hit("org:busy", (10, 300, 10_000)).allowed
    assert len(limiter.storage) == 41 * 3 - 2 * FORGET_PER_CHARGE
    for _ in range(40):
        clock.now += 0.2
        limiter.hit("org:busy", (10, 300, 10_000))
    # Only the hour windows of the forty are left, and the busy organization's three.
    assert len(limiter.storage) == 40 + 3
    # A forgotten window counts as empty; the hour still counts its one request.
    assert limiter.peek("addr:10.0.0.7", (10, 300, 10_000)).window.remaining == 10
    hour = limiter.peek("addr:10.0.0.7", (10, 300, 2)).window
    assert (hour.seconds, hour.remaining) == (3600, 1)


def test_in_memory_storage_reads_clears_and_resets(clock):
    from service.access.ratelimit import InProcessWindows

    storage = InProcessWindows()
    start = clock.now
    assert storage.get_moving_window("k", 3, 10) == (start, 0)
    assert not storage.acquire_entry("k", 3, 10, amount=4)
    assert storage.acquire_entry("k", 3, 10, amount=2)
    clock.now += 4
    assert storage.acquire_entry("k", 3, 10)
    assert not storage.acquire_entry("k", 3, 10)
    assert storage.get_moving_window("k", 3, 10) == (start, 3)
    clock.now = start + 10  # the first two leave the window exactly now
    assert storage.get_moving_window("k", 3, 10) == (start + 4, 1)
    assert storage.acquire_entry("k", 3, 10, amount=2)
    assert storage.acquire_entry("other", 5, 60)
    storage.clear("k")
    assert storage.get_moving_window("k", 3, 10) == (clock.now, 0)
    assert storage.reset() == 1 and len(storage) == 0
    assert storage.check()


def first_429(api: Api, attempts: int = 5) -> requests.Response:
    for _ in range(attempts):
        answer = api.projects()
        if answer.status_code == 429:
            return answer
    pytest.fail("no 429")


def test_a_wait_of_one_second_reads_in_the_singular(live_service, world):
    world.set_limits(1, 100, 1000)
    rejected = first_429(Api(live_service.url, world.key, None))
    assert rejected.json()["message"] == "Rate limit exceeded. Retry in 1 second."
    assert rejected.headers["Retry-After"] == "1"


def test_longer_waits_read_in_the_plural(live_service, world):
    world.set_limits(100, 1, 1000)
    rejected = first_429(Api(live_service.url, world.key, None))
    seconds = int(re.fullmatch(r"Rate limit exceeded\. Retry in (\d+) seconds\.",
                               rejected.json()["message"]).group(1))
    assert 2 <= seconds <= 60
    assert rejected.headers["Retry-After"] == str(seconds)
