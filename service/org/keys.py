"""API keys: `<prefix>_live_` + 43 URL-safe random characters, stored only as SHA-256."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def generate(prefix: str) -> str:
    return f"{prefix}_live_{secrets.token_urlsafe(32)}"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def visible_prefix(key: str) -> str:
    """The part of a key that may be shown: everything up to and including `_live_`."""
    head, sep, _ = key.rpartition("_live_")
    return head + sep if sep else ""


def matches(stored_digest: str, presented_key: str) -> bool:
    # The lookup is by digest; this second, constant-time comparison guards against an index
    # or collation that compares loosely.
    return hmac.compare_digest(stored_digest, digest(presented_key))


def mask(key_prefix: str, last_four: str) -> str:
    return f"{key_prefix}…{last_four}"
