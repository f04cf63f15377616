"""When to answer with a partial, and the response headers htmx understands — on flask-htmx.

A partial is only for a genuine htmx request that is not a history restore: a URL htmx pushed
can be loaded directly, reloaded or restored from history, and each of those must get the
whole page. Responses that differ by these headers say so with `Vary`.

flask-htmx reads the HX-* request headers (`htmx`, a proxy of the current request) and writes
the HX-* response headers (`flask_htmx.make_response`); the small functions here keep the
dashboard's callers simple.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Response, request
from flask_htmx import HTMX
from flask_htmx import make_response as htmx_response

VARY = ("HX-Request", "HX-History-Restore-Request")

# The extension: `bool(htmx)` is "this is an htmx request"; `.boosted`,
# `.history_restore_request`, `.current_url`, … read the other request headers.
htmx = HTMX()


def init_app(app) -> None:
    htmx.init_app(app)


def is_htmx() -> bool:
    return bool(htmx)


def wants_partial() -> bool:
    return is_htmx() and not htmx.history_restore_request and not htmx.boosted


def page_on_screen() -> str | None:
    """The path and query of the page an htmx request came from (HX-Current-URL), when it is
    one of this site's; not yet checked as a place to send anyone (signin.safe_next does)."""
    if not is_htmx():
        return None
    parts = urlsplit(request.headers.get("HX-Current-URL", ""))
    if not parts.path or (parts.netloc and parts.netloc != request.host):
        return None
    return parts.path + ("?" + parts.query if parts.query else "")


def hx_redirect(url: str) -> Response:
    """Make htmx load `url` as a whole page (never a page swapped into a fragment)."""
    return htmx_response("", redirect=url)


def add_vary(response: Response) -> Response:
    for header in VARY:
        response.vary.add(header)
    return response
