"""The organization's API key: kept in one place, sent in one header, shown only masked.

The key is the whole of an organization's access. It lives in an `ApiKey` whose repr is the
masked form, and reaches the wire only through `KeyAuth`, a requests auth hook that writes the
`x-api-key` header while a request is prepared. Nothing else in the package holds it, so it
cannot end up in a repr, a log line or an exception message by accident.
"""

from __future__ import annotations

import re

from requests.auth import AuthBase

from .errors import AuthError

LIVE_MARK = "_live_"
SHOWN_TAIL = 4
# Below this many secret characters, even the last four would give away too much.
SHORTEST_MASKABLE = 12
# Visible ASCII only: anything else either cannot go in a header or is a pasting accident.
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")


def mask(key: str) -> str:
    """`tdk_live_…9f2c`: the part up to `_live_`, an ellipsis, the last four characters."""
    head, mark, secret = key.rpartition(LIVE_MARK)
    if not mark:
        head, secret = "", key
    tail = secret[-SHOWN_TAIL:] if len(secret) >= SHORTEST_MASKABLE else ""
    return f"{head}{mark}…{tail}"


class ApiKey:
    """An API key that shows itself masked; `reveal()` is the one way to the real value."""

    __slots__ = ("_value", "masked")

    def __init__(self, value: str):
        if not isinstance(value, str):
            raise AuthError("The API key must be text.")
        value = value.strip()
        if not value:
            raise AuthError("The API key is empty.")
        if not _HEADER_SAFE.fullmatch(value):
            # Never echo the value: requests would, in the message of its InvalidHeader.
            raise AuthError("The API key contains spaces or characters that no API key has.")
        self._value = value
        self.masked = mask(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"ApiKey({self.masked!r})"

    __str__ = __repr__


class KeyAuth(AuthBase):
    """requests auth hook: puts the key in `x-api-key` on every request of the session."""

    def __init__(self, key: ApiKey):
        self._key = key

    def __call__(self, request):
        request.headers["x-api-key"] = self._key.reveal()
        return request

    def __repr__(self) -> str:
        return f"KeyAuth({self._key.masked!r})"
