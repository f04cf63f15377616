"""Pacing for background jobs: send each request as soon as the rate limit has room, not before.

The service counts an organization's requests in three sliding windows (per second, minute
and hour) and reports, after each request, only the window closest to exhaustion:
X-RateLimit-Limit, -Remaining, and -Reset, the Unix time (rounded *up* to whole seconds) at
which that window's oldest request leaves it. Two consequences shape this module:

1. Waiting for Reset alone is too slow: under 10/s it wastes up to a second in every second.
   So the pacer keeps its own log of when its requests were counted and *learns* the windows:
   for each report it finds which window length (1, 60 or 3600 s) makes "our (Limit -
   Remaining)-th latest request + length" agree with Reset, and remembers that window's Limit.
   A known window is then enforced exactly from the log: the next request waits until the
   Limit-th latest one has left the window.
   When was a request counted? Somewhere between sending it and receiving the answer. The log
   keeps the answer's arrival, which is never too early, but at most LATENCY_ALLOWANCE after
   the sending, so that a slow answer (a big batch) does not hold the next request back.
2. The reported window switches (per-second early on, per-minute later, per-hour in long
   runs), and on a tie only the longest window is shown, so a window can be full while
   another is reported. Remembering every window learned so far covers that.

Whatever cannot be learned (another client of the same organization is spending the budget,
clocks disagree) falls back to the service's word: Remaining 0 means wait until Reset, and a
429 means wait Retry-After. A 429 we did not expect widens the jitter margin.

urllib3's Retry has no hook to delay the *first* attempt of a request, and this is state shared
across requests, so it is plain code rather than a Retry setting.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

WINDOW_SECONDS = (1.0, 60.0, 3600.0)  # the reference's per-second, per-minute, per-hour
# A report agrees with a window length when Reset is this close to our own figure (Reset is
# rounded up, so it may exceed it by up to a second more; clocks may differ a little).
AGREEMENT = 1.0
# Server clocks are taken into account only when they differ from ours by more than this.
SKEW_THRESHOLD = 1.5
MAX_MARGIN = 0.25
# How long after sending we assume the service counted a request at the latest (network and
# authentication before the rate limiter); beyond that, the answer's arrival is not waited for.
LATENCY_ALLOWANCE = 0.25
MAX_LOG = 200_000


class Pacer:
    def __init__(self, *, margin: float = 0.01, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self._wall_clock = wall_clock
        self.margin = margin
        self._counted: deque[float] = deque()  # when our requests were counted, on `clock`
        self.windows: dict[float, int] = {}  # learned: window length in seconds -> limit
        self._not_before = 0.0  # on `clock`: from Retry-After, or Reset when nothing is known
        self._skew = 0.0  # server wall clock minus ours, when they clearly differ

    def delay(self) -> float:
        """Seconds to wait before the next request."""
        with self._lock:
            wake = self._not_before
            for seconds, limit in self.windows.items():
                if len(self._counted) >= limit:
                    wake = max(wake, self._counted[-limit] + seconds + self.margin)
            return max(0.0, wake - self._clock())

    def observe(self, started: float, finished: float, status: int | None,
                headers: Mapping[str, str], retry_after: float | None = None) -> None:
        """Learn from one answer. `started`/`finished`: request sent/answer read, on `clock`."""
        with self._lock:
            now, wall_now = self._clock(), self._wall_clock()
            self._learn_skew(headers.get("Date"), wall_now)
            if status == 429:
                if self.windows and self._not_before <= started:
                    # We thought there was room: jitter is larger than the margin allows for.
                    self.margin = min(MAX_MARGIN, self.margin * 2)
                self._not_before = max(self._not_before, now + (retry_after or 1.0))
            elif status is not None and status not in (401, 403, 503):
                # 401/403/503 answers come before the organization is charged; their headers,
                # if any, describe another budget (the caller's address).
                self._record(min(finished, started + LATENCY_ALLOWANCE), now)
            else:
                return
            report = _report(headers)
            if report is None:
                return
            limit, remaining, reset = report
            reset_here = now + (reset - (wall_now + self._skew))
            seconds = self._window_of(limit, remaining, reset_here)
            if seconds is not None:
                self.windows[seconds] = limit
            elif remaining <= 0:
                self._not_before = max(self._not_before, reset_here + self.margin)

    # -- internals (called with the lock held) --------------------------------------------

    def _record(self, counted: float, now: float) -> None:
        self._counted.append(counted)
        horizon = now - WINDOW_SECONDS[-1] - 1
        while self._counted and (self._counted[0] < horizon or len(self._counted) > MAX_LOG):
            self._counted.popleft()

    def _window_of(self, limit: int, remaining: int, reset_here: float) -> float | None:
        """The window length the report is about, if our log explains it, else None."""
        held = limit - max(remaining, 0)  # requests in that window, the latest included
        if held < 1 or held > len(self._counted):
            return None
        oldest = self._counted[-held]
        for seconds in WINDOW_SECONDS:
            gap = reset_here - (oldest + seconds)
            if -AGREEMENT <= gap <= 1 + AGREEMENT:
                return seconds
        return None

    def _learn_skew(self, date: str | None, wall_now: float) -> None:
        if not date:
            return
        try:
            server = email.utils.parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError, IndexError, OverflowError):
            return
        # Date has whole seconds: the server's clock read between Date and Date + 1.
        skew = server + 0.5 - wall_now
        self._skew = skew if abs(skew) > SKEW_THRESHOLD else 0.0


def _report(headers: Mapping[str, str]) -> tuple[int, int, float] | None:
    try:
        return (int(headers["X-RateLimit-Limit"]), int(headers["X-RateLimit-Remaining"]),
                float(headers["X-RateLimit-Reset"]))
    except (KeyError, TypeError, ValueError):
        return None
