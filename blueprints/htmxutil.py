"""When to answer with a partial, and the response headers htmx understands.

A partial is only for a genuine htmx request that is not a history restore: a URL htmx pushed
can be loaded directly, reloaded or restored from history, and each of those must get the
whole page. Responses that differ by these headers say so with `Vary`.
"""

from __future__ import annotations

from flask import Response, request

VARY = ("HX-Request", "HX-History-Restore-Request")


def is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


def wants_partial() -> bool:
    return (is_htmx()
            and request.headers.get("HX-History-Restore-Request") != "true"
            and request.headers.get("HX-Boosted") != "true")


def hx_redirect(url: str) -> Response:
    """Make htmx load `url` as a whole page (never a page swapped into a fragment)."""
    response = Response("", status=200)
    response.headers["HX-Redirect"] = url
    return response


def add_vary(response: Response) -> Response:
    for header in VARY:
        response.vary.add(header)
    return response
