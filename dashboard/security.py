"""Response headers that keep pages safe (weblib.security_headers, with the dashboard's own
policy), cookies that are Secure behind HTTPS, and a cap on the size of request bodies.

The Content-Security-Policy allows scripts and styles from this site only; no inline script
exists. Inline style *attributes* are allowed (`style-src-attr`) because tag chips carry their
colour that way — and only a validated #RRGGBB colour ever reaches one (chips.py).
"""

from __future__ import annotations

from flask import request
from werkzeug.middleware.proxy_fix import ProxyFix

from weblib import security_headers

from .htmx import add_vary

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-elem 'self'",
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

# The largest form the dashboard sends (Apply with 200 selected rows of 1,000-character
# queries, percent-encoded) stays under 2 MiB; a larger body is refused (413) before it is read.
MAX_REQUEST_BYTES = 4 * 1024 * 1024


def init_app(app) -> None:
    if app.config.get("MAX_CONTENT_LENGTH") is None:
        app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    hops = int(app.config.get("TRUSTED_PROXIES") or 0)
    if hops > 0:
        # Behind a reverse proxy: the client's address (sign-in throttling) and https
        # (Secure cookies) come from its X-Forwarded-* headers.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)
    # Partials and pages at the same URL are told apart by the htmx headers (Vary).
    security_headers.init_app(app, CONTENT_SECURITY_POLICY, on_page=add_vary)

    # The session cookie is Secure whenever the page came over HTTPS.
    interface = app.session_interface
    configured = app.config.get("SESSION_COOKIE_SECURE", False)

    def get_cookie_secure(_app):
        return bool(configured) or request.is_secure

    interface.get_cookie_secure = get_cookie_secure
