"""Shared fixtures, in the style of Flask's tutorial: an app on a fresh database per test, a
live server on a free loopback port, and a small org/project/tag world to work in.

The optional suites (PostgreSQL, Redis, the browser, nginx) are switched on by variables, in
one hook below; PostgreSQL tests get a database of their own for the run, dropped at the end.

Only fixtures live here; the helpers they use (World, Api, LiveServer, the databases) are in
tests/support/, which test modules import instead of a conftest.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import flask
import pytest
from sqlalchemy import create_engine

from jobs.store import Store
from service import create_app as create_service_app
from service import schema
from service.org import accounts
from tests.support.api import Api
from tests.support.databases import close_service_app, database_for, postgres_database_of_its_own
from tests.support.ordering import (
    Durations,
    committed_seconds,
    longest_files_first,
    record_key,
)
from tests.support.servers import LiveServer
from tests.support.switches import wanted
from tests.support.templates import CompiledTemplates
from tests.support.world import UNLIMITED, World

# The one place that decides which optional suites run. A test that needs PostgreSQL, Redis,
# Chromium or nginx carries the marker; it runs only when its variable asks for it (CI sets all),
# and once asked for, a missing server or browser fails the test instead of skipping it.
OPT_IN = {
    "postgres": ("TAGDESK_TEST_POSTGRES", "PostgreSQL"),
    "redis": ("TAGDESK_TEST_REDIS", "Redis"),
    "browser": ("TAGDESK_TEST_BROWSER", "browser (Chromium)"),
    "nginx": ("TAGDESK_TEST_PROXY", "reverse proxy (nginx)"),
}


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores this process may use. Many tests wait on a
    server, a subprocess or a clock; with a worker a core, the cores idled a fifth of the run
    (2 cores, the README's run: 4:44-5:02 with 2 workers, 4:21-4:24 with 3 or 4).
    `--maxprocesses` still caps it."""
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """What the process holds once the tests are collected (modules, the plugins, the parsed
    OpenAPI document) lives to the end: frozen, the collector no longer walks it again at each
    full collection. Each test makes apps, engines and servers that become cyclic garbage
    after it; the full collections that free them took a fifth of the dashboard tests' time,
    most of it walking what was there from the start. Nothing made by a test is frozen."""
    gc.collect()
    gc.freeze()


def _looks_at_frozen(item) -> bool:
    code = getattr(getattr(item, "obj", None), "__code__", None)
    return code is not None and "get_freeze_count" in code.co_names


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test of what freezes the collector (gunicorn.conf.py's hook) starts with nothing
    frozen, as a process of its own would; what it leaves is frozen again after it."""
    if _looks_at_frozen(item):
        gc.unfreeze()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if _looks_at_frozen(item):
        gc.collect()
        gc.freeze()


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
    # The longest files first (tests/support/ordering.py); every xdist worker orders the same.
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    recorded = cache.get(_record_key(), {}) if cache is not None else {}
    items[:] = longest_files_first(items, recorded or committed_seconds(_record_key()))


def _record_key() -> str:
    return record_key([marker for marker, (variable, _) in OPT_IN.items() if wanted(variable)])


_DURATIONS = Durations()


def pytest_runtest_logreport(report):
    _DURATIONS.add(report)


def pytest_sessionfinish(session, exitstatus):
    """The controller (or a run without workers) records how long each file took."""
    config = session.config
    cache = getattr(config, "cache", None)
    if cache is None or hasattr(config, "workerinput") or not _DURATIONS.seconds:
        return
    key = _record_key()
    cache.set(key, _DURATIONS.merged_into(cache.get(key, {})))


@pytest.fixture(scope="session", autouse=True)
def compiled_templates():
    """Every app of the process compiles each template once (tests/support/templates.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flask.Flask, "jinja_options",
                      {**flask.Flask.jinja_options, "bytecode_cache": CompiledTemplates()})
        yield


@pytest.fixture(scope="session", autouse=True)
def cheap_passwords():
    """Password hashes of this process at a tiny scrypt cost: the default's ~0.1 s a hash was
    a third of the settings tests' time. tests/security/test_password_cost.py checks the
    default a fresh process uses."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(accounts, "HASH_METHOD", "scrypt:256:8:1")
        yield


# --- databases ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """One migrated SQLite file, copied for every test (migrating each time is slow)."""
    path = tmp_path_factory.mktemp("template") / "template.sqlite3"
    engine = create_engine(f"sqlite:///{path}")
    schema.upgrade(engine)
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def jobs_template(tmp_path_factory) -> Path:
    """One migrated jobs database (the dashboard's own), copied where each dashboard a test
    makes keeps its jobs by default: migrating a new one took ~40 ms of CPU a test."""
    path = tmp_path_factory.mktemp("jobs-template") / "dashboard.sqlite3"
    url = f"sqlite:///{path}"
    Store.for_url(url)
    Store.forget(url)  # closed: its write-ahead log is in the file
    return path


@pytest.fixture(scope="session")
def postgres_database():
    """A database of its own for this test run, migrated once and dropped at the end."""
    with postgres_database_of_its_own("tagdesk_test_") as url:
        engine = create_engine(url)
        schema.upgrade(engine)
        engine.dispose()
        yield url


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
    close_service_app(app)


@pytest.fixture
def live_service(service_app):
    server = LiveServer(service_app).start()
    yield server
    server.stop()


@pytest.fixture
def world(service_app) -> World:
    return World.made(service_app)


@pytest.fixture
def api(live_service, world) -> Api:
    return Api(live_service.url, world.key, world.project_id)


# The one browser of a test run (tests/browser.py), for every directory that needs it.
from tests.browser import browser  # noqa: E402, F401
