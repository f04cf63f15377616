"""What the settings area's pages share: the session cookie, safe response headers, calm HTML
error pages, and static URLs that carry a hash of the file's content.

Only paths under /settings have a session: the JSON API (/api) authenticates by header, never
by cookie, and its responses never set one.
"""

from __future__ import annotations

import secrets
import threading

from flask import Flask, current_app, g, render_template, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError
from werkzeug.routing import IntegerConverter

from weblib import assets, error_pages, security_headers
from weblib.static_urls import static_url_function

from ..bodies.validation import MAX_ID
from .secret import instance_secret_key

PREFIX = "/settings"

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])

PAGES = {
    **error_pages.PAGES,
    503: ("Temporarily unavailable",
          "The service cannot reach its database right now. Please try again in a little "
          "while."),
}
CSRF_PAGE = ("That form has expired",
             "For your safety, forms work only for a while and only from this site. Please go "
             "back, reload the page and try again.")

_secret_lock = threading.Lock()


def is_settings_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def ensure_secret_key(app: Flask) -> None:
    """TAGDESK_SERVICE_SECRET_KEY (or a test's SECRET_KEY); else, on first use, the key kept in
    the instance folder — a test app without one gets a fresh random key instead."""
    if app.config.get("SECRET_KEY"):
        return
    with _secret_lock:
        if not app.config.get("SECRET_KEY"):
            app.config["SECRET_KEY"] = (secrets.token_hex(32) if app.testing
                                        else instance_secret_key(app.instance_path))


class RowId(IntegerConverter):
    """`<id:…>` in a route: a row's integer id, 1 to MAX_ID (PostgreSQL's `integer`, the same
    bound as the API's ids). Any other number (0, one too large for the database's integer, a
    negative one) matches no route, so it is 404 like an id nobody has, before any view or
    database sees it."""

    def __init__(self, url_map):
        super().__init__(url_map, min=1, max=MAX_ID)


def has_session(path: str) -> bool:
    return is_settings_path(path) and not path.startswith(PREFIX + "/static/")


class SettingsSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, for the settings area's pages only."""

    def open_session(self, app, request):
        if not has_session(request.path):
            return self.session_class()
        ensure_secret_key(app)
        return super().open_session(app, request)

    def save_session(self, app, session, response):
        if not has_session(request.path):
            return
        super().save_session(app, session, response)

    def get_cookie_secure(self, app) -> bool:
        # Secure whenever the page came over HTTPS (or always, if configured).
        return bool(app.config.get("SESSION_COOKIE_SECURE")) or request.is_secure


def error_page(status: int, error: Exception | None = None, headers: dict | None = None):
    """The settings area's HTML error page, or None for paths that are not its own (the API
    keeps its JSON errors)."""
    if not is_settings_path(request.path):
        return None
    heading, sentence = (CSRF_PAGE if isinstance(error, CSRFError)
                         else error_pages.wording(status, PAGES))
    if "user" not in g:
        # Refused before the blueprint knew who is signed in (CSRF, an unknown page): look,
        # so that the page keeps its navigation — unless the database is the trouble.
        g.user = None
        if status < 500:
            from .views import load_user

            try:
                load_user()
            except Exception:
                g.user = None
    try:
        body = render_template("settings/error.html", heading=heading, sentence=sentence,
                               status=status)
    except Exception:  # the template needs the database (the signed-in user): plain text
        current_app.logger.warning("settings error page rendered without its layout")
        body = f"<!doctype html><title>{heading}</title><h1>{heading}</h1><p>{sentence}</p>"
    response = current_app.make_response((body, status))
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def init_app(app: Flask) -> None:
    """Before the settings blueprint is registered: its routes use the `id` converter."""
    app.url_map.converters["id"] = RowId
    app.session_interface = SettingsSessionInterface()
    # Pages show an organization's keys (and once, a whole key): never stored or shared.
    security_headers.init_app(app, CONTENT_SECURITY_POLICY, applies=is_settings_path)
    app.extensions["tagdesk_error_page"] = error_page
    assets.init_app(app, url_prefix=PREFIX)  # the stylesheet shared with the dashboard
    app.jinja_env.globals["static_url"] = static_url_function(app)
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
