"""End-to-end fixtures: a live dashboard (werkzeug, threaded, on a free loopback port) with the
embedded service seeded with the demo; the service alone with a settings administrator; the
browser is tests/browser.py's. The helpers behind them (the Dashboard, the administrator,
organizations of the bulk tests) are in tests/support/e2e.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from app import create_app
from tests.support.dashboard import close_app
from tests.support.e2e import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    DEMO_QUERIES,
    LAPTOP,
    PHONE,
    SCREENSHOTS,
    WAIT_MS,
    Dashboard,
)
from tests.support.reference_proxy import WithoutExtensions
from tests.support.servers import LiveServer
from tests.support.world import UNLIMITED

# Assertions wait as long as actions do (the contexts' default timeout below).
expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="session")
def live_dashboard(tmp_path_factory, sqlite_template):
    folder = tmp_path_factory.mktemp("e2e")
    database = folder / "e2e.sqlite3"
    shutil.copy(sqlite_template, database)
    app = create_app({
        "TESTING": True,
        "INSTANCE_PATH": str(folder / "instance"),
        "SECRET_KEY": "e2e-secret",
        "DEMO_QUERIES": DEMO_QUERIES,
        # Every test signs in from 127.0.0.1; the throttle has route tests of its own.
        "SIGNIN_LIMIT": "1000/minute",
        "SERVICE_CONFIG": {"TESTING": True, "DATABASE_URL": f"sqlite:///{database}",
                           "REDIS_URL": None, "DEFAULT_LIMITS": UNLIMITED},
    })
    server = LiveServer(app).start()
    yield Dashboard(server.url, app, app.config["DEMO_KEY"])
    server.stop()
    close_app(app)


@pytest.fixture
def site(live_service, world):
    """The service on a live port (its settings pages), with an administrator of the world's
    organization: ADMIN_EMAIL, ADMIN_PASSWORD."""
    live_service.world = world.with_administrator(ADMIN_EMAIL, ADMIN_PASSWORD)
    return live_service


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(WAIT_MS)
    yield context
    context.close()


@pytest.fixture
def phone(browser):
    """A page on a phone: 390 px wide, touch, no hover; its console messages kept."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    page.console_messages = []
    page.on("console", lambda message: page.console_messages.append(message.text))
    yield page
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    page.console_messages = []
    page.on("console", lambda message: page.console_messages.append(message.text))
    return page


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="module")
def plain_dashboard(live_dashboard, tmp_path_factory):
    """A second dashboard, against the same service answering as the reference alone (every
    extension's path a 404, missing from its OpenAPI document)."""
    api = LiveServer(WithoutExtensions(live_dashboard.service_app)).start()
    app = create_app({"TESTING": True, "SECRET_KEY": "e2e-plain-secret",
                      "INSTANCE_PATH": str(tmp_path_factory.mktemp("plain") / "instance"),
                      "SIGNIN_LIMIT": "1000/minute", "API_URL": api.url})
    server = LiveServer(app).start()
    yield server.url
    server.stop()
    close_app(app)
    api.stop()
