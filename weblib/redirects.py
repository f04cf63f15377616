"""Where people may be sent back to after signing in: one rule for the dashboard's `next` (and
the Referer and HX-Current-URL it falls back to) and the settings area's, each UI naming its
own pages."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from .text_rules import has_forbidden_character

# The page to return to is quoted once more into the sign-in page's address ("%" becomes
# "%25"): a longer one could make that address longer than the 4,094-byte request line
# gunicorn accepts, and the sign-in page itself would be refused.
LONGEST_NEXT = 2000


def safe_next(value: str | None, *, within: str = "/", refused: Iterable[str] = ()) -> \
        str | None:
    """`value` if it is a path of this site under `within` to return to, else None.

    Refused: more than LONGEST_NEXT characters (signing in then lands on the start page), a
    scheme or a host (other sites, "//host" and "https:/host"), a backslash anywhere
    (browsers read it as a slash), a character no text may hold (weblib.text_rules: tabs and
    line breaks, which browsers drop), and the paths of `refused`: an entry ending in "/" is
    a prefix ("/static/"), any other one an exact path ("/signin")."""
    if not value or len(value) > LONGEST_NEXT:
        return None
    if not value.startswith("/") or value.startswith("//") or "\\" in value:
        return None
    if has_forbidden_character(value):
        return None
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not parts.path.startswith(within):
        return None
    for path in refused:
        if parts.path.startswith(path) if path.endswith("/") else parts.path == path:
            return None
    return value
