"""Dashboard fixtures, in the style of Flask's tutorial: the dashboard with its embedded
service on this test's database (tests/conftest.py's `world`), a test client, an `auth`
helper that signs in and out (and the client `signed_in` with it), a counter of the service's
requests, and the configuration `flask run` would start with. The helpers behind them are in
tests/support/dashboard.py.
"""

from __future__ import annotations

import shutil

import pytest

import app as app_module
from app import create_app
from tests.support.dashboard import FILLER, SAMPLE, AuthActions, ServiceRequests, close_app
from tests.support.reference_proxy import WithoutExtensions
from tests.support.servers import LiveServer


@pytest.fixture
def dashboard_config(service_config, tmp_path, jobs_template) -> dict:
    instance = tmp_path / "instance"
    instance.mkdir()
    shutil.copy(jobs_template, instance / "dashboard.sqlite3")  # its jobs, migrated
    return {
        "TESTING": True,
        "INSTANCE_PATH": str(instance),
        "SECRET_KEY": "dashboard-test-secret",
        "SERVICE_CONFIG": service_config,
        "DEMO_QUERIES": 60,
    }


@pytest.fixture
def flask_run_config(dashboard_config, monkeypatch) -> dict:
    """The dashboard's configuration as `flask run` starts it (not TESTING, FLASK_RUN_FROM_CLI
    set), in a process that has not printed the start-up banner yet."""
    monkeypatch.setattr(app_module, "_announced", False)
    monkeypatch.setenv("FLASK_RUN_FROM_CLI", "true")
    return {key: value for key, value in dashboard_config.items() if key != "TESTING"}


@pytest.fixture
def shop(world):
    """The world with queries in its first project."""
    world.add_queries(SAMPLE)
    world.add_queries([(f"filler query {i:03d}", "en", "US", []) for i in range(FILLER)])
    return world


@pytest.fixture
def app(shop, dashboard_config):
    app = create_app(dashboard_config)
    yield app
    close_app(app)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def api_calls(app) -> ServiceRequests:
    return ServiceRequests(app.extensions["tagdesk_embedded"].service_app)


@pytest.fixture
def auth(client, shop) -> AuthActions:
    return AuthActions(client, shop)


@pytest.fixture
def signed_in(auth):
    """The test client, signed in with the world's key."""
    auth.sign_in()
    return auth.client


# --- a deployment without the extensions ----------------------------------------------------


@pytest.fixture
def reference_only(service_app):
    """This test's service as a deployment of the reference alone answers: every extension's
    path is a 404 and missing from its OpenAPI document (a live server in front of it)."""
    proxy = WithoutExtensions(service_app)
    server = LiveServer(proxy).start()
    server.proxy = proxy
    yield server
    server.stop()


@pytest.fixture
def external(dashboard_config, reference_only, shop):
    """The dashboard against `reference_only`."""
    app = create_app({**dashboard_config, "API_URL": reference_only.url})
    yield app
    close_app(app)
