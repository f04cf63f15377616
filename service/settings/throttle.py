"""Sign-in throttling: at most SETTINGS_SIGNIN_LIMIT attempts per client address and, apart
from that, per email address (memory, or Redis when configured, so that every process of
the service shares the counts). The check comes before any password is looked at.
"""

from __future__ import annotations

import hashlib
import math
import time

from limits import parse as parse_limit
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter


class SignInThrottle:
    def __init__(self, storage_uri: str, per_address: str, per_email: str):
        self.limiter = MovingWindowRateLimiter(storage_from_string(storage_uri))
        self.per_address = parse_limit(per_address)
        self.per_email = parse_limit(per_email)

    def _checks(self, address: str, email: str):
        # The email is hashed: the counters' store need not hold people's addresses.
        digest = hashlib.sha256(email.encode("utf-8", "surrogatepass")).hexdigest()
        return [(self.per_address, ("tagdesk-settings-signin", "addr", address or "unknown")),
                (self.per_email, ("tagdesk-settings-signin", "email", digest))]

    def attempt(self, address: str, email: str) -> int:
        """Count an attempt. 0 if it may go ahead, else the seconds to wait (nothing counted)."""
        checks = self._checks(address, email)
        waits = []
        for item, identifiers in checks:
            if not self.limiter.test(item, *identifiers):
                reset = self.limiter.get_window_stats(item, *identifiers).reset_time
                waits.append(max(1, math.ceil(reset - time.time())))
        if waits:
            return max(waits)
        for item, identifiers in checks:
            self.limiter.hit(item, *identifiers)
        return 0
