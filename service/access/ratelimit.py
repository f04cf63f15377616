"""Per-organization rate limits over three sliding windows, on the `limits` library.

`limits` gives the moving-window strategy and its counters in Redis (so that every service
process shares one budget); in memory the counters are `InProcessWindows`, a storage of ours
on `limits`' public interface for storages. What `limits` does not give, and this module adds:
all three windows are checked before any is charged, so a rejected request costs nothing; and
the headers describe the window closest to exhaustion, with Retry-After only on a 429.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from functools import lru_cache

from limits import RateLimitItemPerHour, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import MovingWindowSupport, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

FORGET_PER_CHARGE = 4


class InProcessWindows(Storage, MovingWindowSupport):
    """Moving windows in this process's memory, for `limits`' `MovingWindowRateLimiter`.

    Written on the interface `limits` documents for custom storages, because its own
    `MemoryStorage` starts a new `threading.Timer` on a hit whenever the last one has run (on
    nearly every request when they come more than 10 ms apart, and the request waits for the
    thread to start), and every run of that timer walks every key ever charged. Here there is
    no thread and the work per call does not grow with the number of keys: a window's expired
    hits are dropped when the window is next read or charged, and windows with no hit left are
    forgotten, a few at a time, by the next charges of windows of the same length. Only moving
    windows are kept: the counters of the other strategies are not implemented.
    """

    STORAGE_SCHEME = None  # made by make_storage, not looked up by URI

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self._lock = threading.Lock()
        # Per window length: each key's hits still in its window, oldest first. Keys stay in
        # the order of their latest hit, so those whose hits have all expired come first.
        self._windows: defaultdict[int, OrderedDict[str, deque[float]]] = defaultdict(
            OrderedDict)

    def __len__(self) -> int:
        """How many windows are held."""
        with self._lock:
            return sum(len(keys) for keys in self._windows.values())

    @property
    def base_exceptions(self) -> tuple[type[Exception], ...]:
        return ()  # nothing here fails the way a store out of reach does

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = time.time()
        with self._lock:
            keys = self._windows[expiry]
            _forget_expired(keys, now - expiry)
            hits = keys.setdefault(key, deque())
            _drop_expired(hits, now - expiry)
            if len(hits) + amount > limit:
                return False
            hits.extend([now] * amount)
            keys.move_to_end(key)
            return True

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = time.time()
        with self._lock:
            hits = self._windows[expiry].get(key)
            if hits:
                _drop_expired(hits, now - expiry)
            if not hits:
                return now, 0
            return hits[0], len(hits)

    def clear(self, key: str) -> None:
        with self._lock:
            for keys in self._windows.values():
                keys.pop(key, None)

    def reset(self) -> int | None:
        with self._lock:
            held = sum(len(keys) for keys in self._windows.values())
            self._windows.clear()
            return held

    def check(self) -> bool:
        return True

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        raise NotImplementedError("InProcessWindows keeps moving windows only")

    def get(self, key: str) -> int:
        raise NotImplementedError("InProcessWindows keeps moving windows only")

    def get_expiry(self, key: str) -> float:
        raise NotImplementedError("InProcessWindows keeps moving windows only")


def _drop_expired(hits: deque[float], cutoff: float) -> None:
    if hits and hits[-1] <= cutoff:
        hits.clear()  # all of them (a window long unused)
    while hits and hits[0] <= cutoff:
        hits.popleft()


def _forget_expired(keys: OrderedDict[str, deque[float]], cutoff: float) -> None:
    """Forget up to FORGET_PER_CHARGE windows, all of one length, whose latest hit is at or
    before `cutoff`: a charge adds one window at most, so those left over go on later ones, and
    no request pays for the many windows a burst of new callers leaves to expire at once."""
    for _ in range(FORGET_PER_CHARGE):
        if not keys:
            return
        key, hits = next(iter(keys.items()))
        if hits and hits[-1] > cutoff:
            return
        del keys[key]


def make_storage(storage_uri: str):
    if storage_uri == "memory://":
        return InProcessWindows(storage_uri)
    return storage_from_string(storage_uri)


def _stable_key(kind):
    """A window whose storage key leaves out the amount: `limits` puts the amount in the key,
    so changing an organization's limit would otherwise start its windows from zero."""

    class Window(kind):
        def key_for(self, *identifiers: str) -> str:
            return "/".join(["tagdesk", self.GRANULARITY.name, str(self.multiples), *identifiers])

    Window.__name__ = kind.__name__
    return Window


WINDOW_TYPES = tuple(_stable_key(kind) for kind in (
    RateLimitItemPerSecond, RateLimitItemPerMinute, RateLimitItemPerHour))


@dataclass(frozen=True)
class WindowState:
    limit: int
    remaining: int
    reset_at: float  # when the oldest counted request leaves the window
    seconds: int

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.remaining, 0)),
            "X-RateLimit-Reset": str(math.ceil(self.reset_at)),
        }


@dataclass(frozen=True)
class Decision:
    allowed: bool
    window: WindowState  # the one reported in the headers
    # The wait is counted from the decision, so the 429's message (written when the request
    # is refused) and its Retry-After header (written later) always give the same number.
    decided_at: float = field(default_factory=lambda: time.time())  # this module's clock

    def headers(self) -> dict[str, str]:
        headers = self.window.headers()
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.window.reset_at - self.decided_at))


@lru_cache(maxsize=1024)
def _window_items(limits: tuple[int, int, int]) -> tuple:
    """The three windows of a set of limits (an organization's, the defaults), made once."""
    return tuple(kind(amount) for kind, amount in zip(WINDOW_TYPES, limits, strict=True))


def closest_to_exhaustion(windows: list[WindowState]) -> WindowState:
    # Fewest requests left; on a tie the longest window, whose wait is the one that matters.
    return min(windows, key=lambda w: (w.remaining, -w.seconds))


class RateLimiter:
    def __init__(self, storage_uri: str):
        self.storage = make_storage(storage_uri)
        self.strategy = MovingWindowRateLimiter(self.storage)
        # Check-then-charge is exact within a process; across processes sharing Redis a request
        # racing for the very last slot may still be charged to a window it was refused by.
        self._lock = threading.Lock()

    def _items(self, limits: tuple[int, int, int]) -> tuple:
        return _window_items(tuple(limits))

    def _states(self, identity: str, limits: tuple[int, int, int]) -> list[WindowState]:
        states, now = [], time.time()
        for item in self._items(limits):
            stats = self.strategy.get_window_stats(item, identity)
            # Expired entries can make the reported start lie in the past: a window with
            # nothing in it resets a full window from now.
            reset = stats.reset_time if stats.reset_time > now else now + item.get_expiry()
            states.append(WindowState(item.amount, max(stats.remaining, 0), reset,
                                      item.get_expiry()))
        return states

    def peek(self, identity: str, limits: tuple[int, int, int]) -> Decision:
        """The current state without charging a request (for responses that bypass `hit`)."""
        states = self._states(identity, limits)
        window = closest_to_exhaustion(states)
        return Decision(window.remaining > 0, window)

    def hit(self, identity: str, limits: tuple[int, int, int]) -> Decision:
        with self._lock:
            return self._hit(identity, limits)

    def _hit(self, identity: str, limits: tuple[int, int, int]) -> Decision:
        states = self._states(identity, limits)
        exhausted = [s for s in states if s.remaining <= 0]
        if exhausted:
            # The window that frees last is the one the caller must wait for.
            return Decision(False, max(exhausted, key=lambda s: s.reset_at))
        now = time.time()
        charged = []
        for item, state in zip(self._items(limits), states, strict=True):
            if not self.strategy.hit(item, identity):
                # Another process took the last request between our check and our charge.
                return Decision(False, WindowState(state.limit, 0, state.reset_at,
                                                   state.seconds))
            empty_before = state.remaining >= state.limit
            charged.append(WindowState(
                state.limit,
                state.remaining - 1,
                now + state.seconds if empty_before else state.reset_at,
                state.seconds,
            ))
        return Decision(True, closest_to_exhaustion(charged))
