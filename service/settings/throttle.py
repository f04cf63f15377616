"""Sign-in throttling: at most SETTINGS_SIGNIN_LIMIT attempts per client address and, apart
from that, per email address (memory, or Redis when configured, so that every process of
the service shares the counts). The check comes before any password is looked at.
"""

from __future__ import annotations

import hashlib

from weblib.throttle import Throttle

PREFIX = "tagdesk-settings-signin"


class SignInThrottle(Throttle):
    def __init__(self, storage_uri: str, per_address: str, per_email: str):
        super().__init__(storage_uri, [(per_address, (PREFIX, "addr")),
                                       (per_email, (PREFIX, "email"))])

    def attempt(self, address: str | None, email: str) -> int:
        """Count an attempt. 0 if it may go ahead, else the seconds to wait (nothing counted)."""
        # The email is hashed: the counters' store need not hold people's addresses.
        digest = hashlib.sha256(email.encode("utf-8", "surrogatepass")).hexdigest()
        return super().attempt(address, digest)
