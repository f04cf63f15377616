"""Shared fixtures, in the style of Flask's tutorial: an app on a fresh database per test, a
live server on a free loopback port, and a small org/project/tag world to work in.

The optional suites (PostgreSQL, Redis, the browser) are switched on by variables, in one hook
below; PostgreSQL tests get a database of their own for the run, dropped at the end.
"""

from __future__ import annotations

import os
import secrets
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, text
from werkzeug.serving import make_server

from service import admin, schema
from service import create_app as create_service_app
from service.db import session_scope

POSTGRES_ADMIN_URL = os.environ.get(
    "TAGDESK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("TAGDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
# Generous limits so that tests about something else never meet a 429.
UNLIMITED = (100_000, 1_000_000, 10_000_000)


def wanted(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")


# The one place that decides which optional suites run. A test that needs PostgreSQL, Redis or
# Chromium carries the marker; it runs only when its variable asks for it (CI sets all three),
# and once asked for, a missing server or browser fails the test instead of skipping it.
OPT_IN = {
    "postgres": ("TAGDESK_TEST_POSTGRES", "PostgreSQL"),
    "redis": ("TAGDESK_TEST_REDIS", "Redis"),
    "browser": ("TAGDESK_TEST_BROWSER", "browser (Chromium)"),
}


def pytest_collection_modifyitems(config, items):
    skips = {
        marker: pytest.mark.skip(reason=f"{what} tests are off (set {variable}=1 to run them)")
        for marker, (variable, what) in OPT_IN.items() if not wanted(variable)
    }
    for item in items:
        for marker, skip in skips.items():
            if marker in item.keywords:
                item.add_marker(skip)
                break


# --- databases ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """One migrated SQLite file, copied for every test (migrating each time is slow)."""
    path = tmp_path_factory.mktemp("template") / "template.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    schema.upgrade(engine)
    engine.dispose()
    return path


@contextmanager
def postgres_database_of_its_own(prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    name = prefix + secrets.token_hex(4)
    admin_engine = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin_engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin_engine.dispose()


@pytest.fixture(scope="session")
def postgres_database():
    """A database of its own for this test run, migrated once and dropped at the end."""
    with postgres_database_of_its_own("tagdesk_test_") as url:
        engine = create_engine(url)
        schema.upgrade(engine)
        engine.dispose()
        yield url


def empty_postgres(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "TRUNCATE query_tags, queries, tags, api_keys, projects, organizations "
            "RESTART IDENTITY CASCADE"))
    engine.dispose()


def database_for(kind: str, request, tmp_path, sqlite_template) -> str:
    if kind == "postgres":
        url = request.getfixturevalue("postgres_database")
        empty_postgres(url)
        return url
    path = tmp_path / "service.sqlite3"
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


@pytest.fixture
def database_url(request, tmp_path, sqlite_template) -> str:
    """SQLite by default; tests/service/conftest.py runs the service suite on both."""
    return database_for("sqlite", request, tmp_path, sqlite_template)


# --- the service -------------------------------------------------------------------------


@pytest.fixture
def service_config(database_url, tmp_path) -> dict:
    return {
        "TESTING": True,
        "DATABASE_URL": database_url,
        "REDIS_URL": None,
        "DEFAULT_LIMITS": UNLIMITED,
    }


@pytest.fixture
def service_app(service_config):
    app = create_service_app(service_config)
    yield app
    app.extensions["tagdesk_engine"].dispose()


class LiveServer:
    """A WSGI app served on a free loopback port from a thread."""

    def __init__(self, app):
        self.app = app
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        # A short poll interval keeps shutdown (and so each test's teardown) quick.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def start(self) -> LiveServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def live_service(service_app):
    server = LiveServer(service_app).start()
    yield server
    server.stop()


@dataclass
class World:
    """An organization with a key, two projects and tags, created through the admin layer."""

    app: object
    org_id: str = ""
    key: str = ""
    project_id: str = ""
    other_project_id: str = ""
    tags: dict[str, int] = field(default_factory=dict)

    def run(self, operation):
        with session_scope(self.app) as session:
            return operation(session)

    def new_org(self, name="Other org") -> tuple[str, str, str]:
        """Another organization: (org id, key, project id)."""
        def make(session):
            org_id = admin.create_org(session, name)
            key = admin.create_key(session, org_id, "tdk")
            return org_id, key, admin.create_project(session, org_id, "Their project")
        return self.run(make)

    def new_key(self, org_id=None, project_id=None) -> str:
        return self.run(lambda s: admin.create_key(s, org_id or self.org_id, "tdk", project_id))

    def add_queries(self, rows, project_id=None) -> int:
        """rows: (query, language, country, [tag names])."""
        normalized = [
            (*admin.normalize_query(q, lang, country), [self.tags[n] for n in names], None)
            for q, lang, country, names in rows
        ]
        return self.run(
            lambda s: admin.insert_queries(s, project_id or self.project_id, normalized))

    def set_limits(self, per_second, per_minute, per_hour, org_id=None):
        self.run(lambda s: admin.set_limits(
            s, org_id or self.org_id, per_second, per_minute, per_hour))


TAG_COLORS = {"brand": "#1f77b4", "sale": "#ff7f0e", "question": "#2ca02c", "local": "#d62728"}


@pytest.fixture
def world(service_app) -> World:
    w = World(service_app)

    def make(session):
        w.org_id = admin.create_org(session, "Acme")
        w.key = admin.create_key(session, w.org_id, "tdk")
        w.project_id = admin.create_project(session, w.org_id, "Shop search")
        w.other_project_id = admin.create_project(session, w.org_id, "Help centre")
        for name, color in TAG_COLORS.items():
            w.tags[name] = admin.create_tag(session, w.project_id, name, color)

    w.run(make)
    return w


class Api:
    """requests against a live service with a key and project preset."""

    def __init__(self, base_url: str, key: str | None, project_id: str | None):
        self.base_url = base_url
        self.session = requests.Session()
        self.headers = {}
        if key is not None:
            self.headers["x-api-key"] = key
        if project_id is not None:
            self.headers["x-project-id"] = project_id

    def call(self, method: str, path: str, json=None, headers=None, **kwargs):
        merged = {**self.headers, **(headers or {})}
        return self.session.request(method, self.base_url + path, json=json,
                                    headers=merged, timeout=30, **kwargs)

    def queries(self, **body):
        return self.call("POST", "/api/queries/list", json=body)

    def tags(self, **body):
        return self.call("POST", "/api/tags/list", json=body)

    def projects(self, **params):
        return self.call("GET", "/api/projects/list", params=params)

    def set_tags(self, items):
        return self.call("PATCH", "/api/queries/many/tags-only", json={"queries": items})


@pytest.fixture
def api(live_service, world) -> Api:
    return Api(live_service.url, world.key, world.project_id)


# The one browser of a test run (tests/browser.py), for every directory that needs it.
from tests.browser import browser  # noqa: E402, F401
