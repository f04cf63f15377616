"""What a client did: requests sent, 429s and 503s received, seconds spent waiting."""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class ClientStats:
    """A snapshot. `requests` counts every attempt on the wire, retries included."""

    requests: int = 0
    rate_limited: int = 0  # answers with 429
    unavailable: int = 0  # answers with 503
    slept: float = 0.0  # seconds spent waiting: pacing, Retry-After, backoff


class StatsCounter:
    """Thread-safe counters behind `Client.stats`."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests = self._rate_limited = self._unavailable = 0
        self._slept = 0.0

    def attempt(self, status: int | None) -> None:
        """One request went out; `status` is its answer's, or None if none came back."""
        with self._lock:
            self._requests += 1
            if status == 429:
                self._rate_limited += 1
            elif status == 503:
                self._unavailable += 1

    def slept(self, seconds: float) -> None:
        with self._lock:
            self._slept += seconds

    def snapshot(self) -> ClientStats:
        with self._lock:
            return ClientStats(self._requests, self._rate_limited, self._unavailable,
                               self._slept)
