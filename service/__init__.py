"""The Query & Tag API service: `flask --app service <command>` or `create_app()`."""

from __future__ import annotations

import logging

from flask import Flask

from . import cli, db, errors, guard, routes
from .config import load_config


def create_app(test_config: dict | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(load_config(app.instance_path, test_config))
    app.json.sort_keys = False
    app.json.ensure_ascii = False
    if app.config["DATABASE_URL"].startswith("sqlite:///") and not test_config:
        import os

        os.makedirs(app.instance_path, exist_ok=True)

    db.init_app(app)
    guard.init_app(app, app.config["REDIS_URL"] or "memory://")
    errors.register(app)
    app.register_blueprint(routes.bp)
    cli.register(app)
    logging.getLogger("service").setLevel(logging.INFO)
    return app
