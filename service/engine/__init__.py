"""The count engine: the one write path of queries and their tags, and the bitmaps it keeps
beside them, from which every count, facet and filtered page is read, with the same code on
SQLite and PostgreSQL (docs/architecture.md)."""

from __future__ import annotations

from flask import current_app

from .held import Held


def init_app(app) -> None:
    app.extensions["tagdesk_engine_held"] = Held()


def held() -> Held:
    return current_app.extensions["tagdesk_engine_held"]
