"""Throttles for attempts such as signing in: at most so many per key (a client address, an
account) in a moving window, counted by `limits` in memory or in Redis (then every process
shares the counts).

Each UI configures one: the limits, and the prefix of each limit's counters in the store.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from limits import RateLimitItem, parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

UNKNOWN = "unknown"


class Throttle:
    """`rules`: for each key `attempt` takes, in order, a limit ("5/minute") and the names its
    counters start with, e.g. ("tagdesk-signin",)."""

    def __init__(self, storage_uri: str, rules: Sequence[tuple[str, Sequence[str]]]):
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))
        self.rules: list[tuple[RateLimitItem, tuple[str, ...]]] = [
            (parse(limit), tuple(prefix)) for limit, prefix in rules]

    def attempt(self, *keys: str | None) -> int:
        """Count an attempt against every limit (an empty key, such as a missing client address,
        counts as "unknown"): 0 if it may go ahead, else the whole seconds until every limit
        allows one. An attempt one limit refuses is counted by none."""
        if len(keys) != len(self.rules):
            raise TypeError(f"{len(self.rules)} keys expected, {len(keys)} given")
        checks = [(item, (*prefix, key or UNKNOWN))
                  for (item, prefix), key in zip(self.rules, keys, strict=True)]
        waits = [self._wait(item, identifiers) for item, identifiers in checks
                 if not self.limiter.test(item, *identifiers)]
        if waits:
            return max(waits)
        for item, identifiers in checks:
            if not self.limiter.hit(item, *identifiers):
                return self._wait(item, identifiers)  # another process took the last one
        return 0

    def _wait(self, item: RateLimitItem, identifiers: tuple[str, ...]) -> int:
        reset = self.limiter.get_window_stats(item, *identifiers).reset_time
        return max(1, math.ceil(reset - time.time()))
