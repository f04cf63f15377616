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
   Several threads may share one client (a job reading a page while the previous one is
   written), so a request takes its place in the log *before* it is sent: `acquire()` waits
   for room and reserves it in one step, under the lock. Until its answer arrives, a reserved
   request counts as counted at the latest moment it could be (sending + LATENCY_ALLOWANCE);
   the answer (`observe(..., ticket=)`) then settles it as above, or gives the place back when
   the service did not charge it (429, 401/403, 503). A request that got no answer at all
   (`abandon`) keeps its place: it may have been counted before the connection failed.
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
# How often a request held back for lack of knowledge (see try_reserve) asks again.
ROOM_POLL = 0.01


class Pacer:
    def __init__(self, *, margin: float = 0.01, clock: Callable[[], float] = time.monotonic,
                 wall_clock: Callable[[], float] = time.time):
        self._lock = threading.Lock()
        self._clock = clock
        self._wall_clock = wall_clock
        self.margin = margin
        # When our answered requests were counted, on `clock`, in ascending order.
        self._counted: deque[float] = deque()
        # Requests reserved and not yet answered: ticket -> when they were sent, on `clock`.
        self._pending: dict[int, float] = {}
        self._tickets = 0
        # Requests the windows not learned yet are known to have room for, from the latest
        # report on (see _note_room); it limits only requests sent while others are in flight.
        self._room = 0
        self.windows: dict[float, int] = {}  # learned: window length in seconds -> limit
        self._not_before = 0.0  # on `clock`: from Retry-After, or Reset when nothing is known
        self._skew = 0.0  # server wall clock minus ours, when they clearly differ

    def delay(self) -> float:
        """Seconds to wait before the next request (reserved requests included)."""
        with self._lock:
            return max(0.0, self._wake() - self._clock())

    def try_reserve(self) -> tuple[int | None, float]:
        """(ticket, 0.0) when the next request may be sent now, its place in the log taken;
        else (None, seconds to wait before asking again)."""
        with self._lock:
            now = self._clock()
            wait = self._wake() - now
            if wait > 0:
                return None, wait
            if self._pending and self._room < 1 and len(self.windows) < len(WINDOW_SECONDS):
                # A window we do not know yet may be full once those in flight are counted:
                # wait for their answers (reports) rather than risk a 429.
                return None, ROOM_POLL
            self._room -= 1
            self._tickets += 1
            self._pending[self._tickets] = now
            return self._tickets, 0.0

    def acquire(self, sleep: Callable[[float], None] = time.sleep) -> int:
        """Wait until the next request may be sent and reserve its place; a ticket for
        `observe` or `abandon`. Safe to call from several threads at once."""
        while True:
            ticket, wait = self.try_reserve()
            if ticket is not None:
                return ticket
            sleep(wait)

    def abandon(self, ticket: int) -> None:
        """The reserved request got no answer (connection refused, timeout, dropped): keep
        its place as if counted at the latest moment it could have been."""
        with self._lock:
            sent = self._pending.pop(ticket, None)
            if sent is not None:
                now = self._clock()
                self._record(min(now, sent + LATENCY_ALLOWANCE), now)

    def observe(self, started: float, finished: float, status: int | None,
                headers: Mapping[str, str], retry_after: float | None = None,
                ticket: int | None = None) -> None:
        """Learn from one answer. `started`/`finished`: request sent/answer read, on `clock`;
        `ticket`: from `acquire`/`try_reserve`, when the request was reserved."""
        with self._lock:
            if ticket is not None:
                self._pending.pop(ticket, None)
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
            self._note_room(seconds, remaining)

    # -- internals (called with the lock held) --------------------------------------------

    def _wake(self) -> float:
        """When the next request may be sent, on `clock`."""
        wake = self._not_before
        if self.windows:
            # A request in flight may be counted as late as LATENCY_ALLOWANCE after sending.
            pending = sorted((sent + LATENCY_ALLOWANCE for sent in self._pending.values()),
                             reverse=True)
            for seconds, limit in self.windows.items():
                latest = self._latest(limit, pending)
                if latest is not None:
                    wake = max(wake, latest + seconds + self.margin)
        return wake

    def _latest(self, n: int, pending: list[float]) -> float | None:
        """The n-th latest count among the log and `pending` (descending), if there are n."""
        counted = self._counted
        if len(counted) + len(pending) < n:
            return None
        best = None
        # The n-th largest of two sorted sequences: the best split between them.
        for j in range(max(0, n - len(counted)), min(len(pending), n) + 1):
            candidate = min(pending[j - 1] if j else float("inf"),
                            counted[j - n] if j < n else float("inf"))
            if best is None or candidate > best:
                best = candidate
        return best

    def _record(self, counted: float, now: float) -> None:
        # Answers may arrive out of order (several threads): keep the log sorted.
        later = []
        while self._counted and self._counted[-1] > counted:
            later.append(self._counted.pop())
        self._counted.append(counted)
        self._counted.extend(reversed(later))
        horizon = now - WINDOW_SECONDS[-1] - 1
        while self._counted and (self._counted[0] < horizon or len(self._counted) > MAX_LOG):
            self._counted.popleft()

    def _note_room(self, seconds: float | None, remaining: int) -> None:
        """The report shows the window closest to exhaustion (on a tie, the longest): every
        window not yet learned has at least `remaining` left, one more if it is longer than
        the (known) reported one. Those still in flight may be counted after this report."""
        unknown = [length for length in WINDOW_SECONDS if length not in self.windows]
        room = max(remaining, 0)
        if seconds is not None and all(length > seconds for length in unknown):
            room += 1
        self._room = room - len(self._pending)

    def _window_of(self, limit: int, remaining: int, reset_here: float) -> float | None:
        """The window length the report is about, if our log explains it, else None."""
        held = limit - max(remaining, 0)  # requests in that window, the latest included
        # Requests still in flight may have been counted already: without them, the first
        # time a window fills would go unexplained while another thread's request is out.
        pending = sorted(self._pending.values(), reverse=True)
        oldest = self._latest(held, pending) if held >= 1 else None
        if oldest is None:
            return None
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
