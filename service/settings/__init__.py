"""Organization settings, inside the service: people of an organization sign in with email
and password and manage its API keys (generate, shown once; revoke) under /settings.

Server-rendered (Jinja templates in service/templates/settings, a stylesheet and a small
script in service/static), in the Tagdesk dashboard's visual language but independent of its
code. The JSON API under /api is untouched: it is exempt from CSRF and never has a session.
"""

from __future__ import annotations

from datetime import timedelta

from flask import Flask
from flask_wtf.csrf import CSRFProtect

from . import projects, web  # noqa: F401 (projects: importing it adds its routes to the blueprint)
from .throttle import SignInThrottle
from .views import bp

csrf = CSRFProtect()

DEFAULTS = {
    "SESSION_COOKIE_NAME": "tagdesk_settings",
    "SESSION_COOKIE_PATH": "/settings",
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "SESSION_COOKIE_SECURE": False,  # and Secure whenever the request came over HTTPS
    "PERMANENT_SESSION_LIFETIME": timedelta(hours=8),
    # A form stays usable as long as the session does (no surprise expiry after an hour).
    "WTF_CSRF_TIME_LIMIT": None,
    # Sign-in attempts, per client address and per email address.
    "SETTINGS_SIGNIN_LIMIT": "5/minute",
    "SETTINGS_SIGNIN_LIMIT_PER_EMAIL": "5/minute",
}


def init_app(app: Flask, api_blueprint) -> None:
    """Mount the settings area. The app's configuration starts from DEFAULTS (create_app)."""
    web.init_app(app)
    csrf.init_app(app)
    csrf.exempt(api_blueprint)  # the API authenticates by header, not by cookie
    app.extensions["tagdesk_settings_throttle"] = SignInThrottle(
        app.config["REDIS_URL"] or "memory://",
        app.config["SETTINGS_SIGNIN_LIMIT"], app.config["SETTINGS_SIGNIN_LIMIT_PER_EMAIL"])
    app.register_blueprint(bp)


from . import imports, people  # noqa: E402, F401 (importing them adds their routes to bp)
