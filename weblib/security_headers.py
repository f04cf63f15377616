"""Response headers that keep pages safe: a Content-Security-Policy of the app's own, the same
set of further headers for every UI, HSTS over HTTPS, and `Cache-Control: no-store` on pages
(an organization's data is never kept in shared or stored copies; static files, whose URLs
carry a hash of their content, may be kept).

Each app calls `init_app` with its own policy; a header a view has set already is kept.

A module of its own rather than Flask-Talisman: Talisman would have to be told not to redirect
to HTTPS, not to force Secure session cookies, not to add includeSubDomains to HSTS and to use
DENY framing and a same-origin referrer policy; it sets neither the Cross-Origin-* headers nor
Cache-Control, and it applies to every path (the service wants its settings pages only).
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, Response, request

HSTS = "max-age=31536000"


def headers_for(content_security_policy: str) -> dict[str, str]:
    """The headers of every page, with the app's own Content-Security-Policy."""
    return {
        "Content-Security-Policy": content_security_policy,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    }


def is_static_request() -> bool:
    """A static file of the app's or of a blueprint's (weblib's shared stylesheet, say)."""
    endpoint = request.endpoint or ""
    return endpoint == "static" or endpoint.endswith(".static")


def init_app(app: Flask, content_security_policy: str, *,
             applies: Callable[[str], bool] | None = None,
             on_page: Callable[[Response], object] | None = None) -> None:
    """Add the headers to the responses of `app` — of the paths `applies` accepts, if given.
    `on_page` is called with every response that is not a static file's."""
    headers = headers_for(content_security_policy)

    def _secure_headers(response: Response) -> Response:
        if applies is not None and not applies(request.path):
            return response
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        if request.is_secure:
            response.headers.setdefault("Strict-Transport-Security", HSTS)
        if not is_static_request():
            response.headers["Cache-Control"] = "no-store"
            if on_page is not None:
                on_page(response)
        return response

    app.after_request(_secure_headers)
