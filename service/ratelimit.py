"""Per-organization rate limits over three sliding windows, on the `limits` library.

`limits` gives the counters (memory, or Redis so that every service process shares one
budget). What it does not give, and this module adds: all three windows are checked before any
is charged, so a rejected request costs nothing; and the headers describe the window closest
to exhaustion, with Retry-After only on a 429.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from dataclasses import dataclass, field

from limits import RateLimitItemPerHour, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

SWEEP_SECONDS = 1.0


class SweptMemoryStorage(MemoryStorage):
    """`limits`' in-memory counters, with expired entries swept by one long-lived thread.

    `MemoryStorage` starts a new `threading.Timer` on a hit whenever the previous one has run,
    that is on nearly every request when they come more than 10 ms apart, and the request
    waits for the new thread to be scheduled. `limits` has no option for this. Expired entries
    never count either way (each read filters by time): the sweep only frees memory.
    """

    def __init__(self, uri: str | None = None, **options):
        super().__init__(uri, **options)
        self._stop = threading.Event()
        weakref.finalize(self, self._stop.set)  # the thread ends with its storage
        threading.Thread(target=_sweep, args=(weakref.ref(self), self._stop),
                         name="ratelimit-sweeper", daemon=True).start()

    def _MemoryStorage__schedule_expiry(self) -> None:
        pass  # the sweeper thread does it


def _sweep(storage_ref, stop: threading.Event) -> None:
    while not stop.wait(SWEEP_SECONDS):
        storage = storage_ref()
        if storage is None:
            return
        storage._MemoryStorage__expire_events()
        del storage


def _memory_storage_is_as_expected() -> bool:
    # The two names are private to `limits`: should they change, keep its own behaviour.
    return all(hasattr(MemoryStorage, name) for name in (
        "_MemoryStorage__schedule_expiry", "_MemoryStorage__expire_events"))


def make_storage(storage_uri: str):
    if storage_uri == "memory://" and _memory_storage_is_as_expected():
        return SweptMemoryStorage(storage_uri)
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

    def _items(self, limits: tuple[int, int, int]):
        return [kind(amount) for kind, amount in zip(WINDOW_TYPES, limits, strict=True)]

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
