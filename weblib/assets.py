"""The static files and templates both UIs share — the base stylesheet
(weblib/static/base.css: colours, type, header, layout, buttons, fields, notices, cards,
tables' frame, pagination), which each UI's own stylesheet builds on, and the page frame it
styles (weblib/templates/weblib/page.html), which each UI's base.html extends.

A blueprint with a static and a template folder: each app registers it under its own static
path, so the files are served like the app's own (same origin for the CSP's `style-src
'self'`, long caching of hashed URLs, no session). Templates link them with
`static_url("base.css", "weblib.static")` (weblib.static_urls); the templates are found as
"weblib/…" after the app's own.
"""

from __future__ import annotations

from flask import Blueprint, Flask

ENDPOINT = "weblib.static"

bp = Blueprint("weblib", __name__, static_folder="static", static_url_path="/static/weblib",
               template_folder="templates")


def init_app(app: Flask, url_prefix: str | None = None) -> None:
    """Serve the shared files at <url_prefix>/static/weblib/ (the dashboard: /static/weblib/;
    the service: /settings/static/weblib/, beside its own /settings/static/)."""
    app.register_blueprint(bp, url_prefix=url_prefix)
