"""The Query & Tag API service: `flask --app service <command>` or `create_app()`."""

from __future__ import annotations

import logging

from flask import Flask

from weblib.request_bodies import guard_request_bodies

from . import cli, engine, settings
from .access import guard
from .api import protocol, query_filters, routes
from .bodies import errors
from .config import load_config
from .engine import entry_rules
from .store import db

# Rules on entry read their kept conditions as every other kept filter is read.
entry_rules.read_conditions_with(query_filters.stored)


def create_app(test_config: dict | None = None) -> Flask:
    # The settings area's stylesheet and script live under its own path (/settings/static).
    app = protocol.ServiceFlask(__name__, instance_relative_config=True,
                                static_url_path="/settings/static")
    app.config.from_mapping(settings.DEFAULTS)
    app.config.from_mapping(load_config(app.instance_path, test_config))
    app.json.sort_keys = False
    app.json.ensure_ascii = False
    if app.config["DATABASE_URL"].startswith("sqlite:///") and not test_config:
        import os

        os.makedirs(app.instance_path, exist_ok=True)

    db.init_app(app)
    engine.init_app(app)
    guard.init_app(app, app.config["REDIS_URL"] or "memory://")
    errors.register(app)
    protocol.init_app(app)
    guard_request_bodies(app)  # a body gunicorn cannot decode: 400, not 500
    app.register_blueprint(routes.bp)
    settings.init_app(app, routes.bp)
    cli.register(app)
    logging.getLogger("service").setLevel(logging.INFO)
    return app
