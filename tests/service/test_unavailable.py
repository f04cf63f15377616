"""An unreachable database answers 503 with Retry-After: 30, and the service recovers."""

import shutil

import pytest
import requests

from service import create_app
from tests.support.servers import LiveServer
from tests.support.world import UNLIMITED


@pytest.fixture
def detached(tmp_path, sqlite_template):
    """A service whose SQLite file lives in a folder that does not exist yet."""
    folder = tmp_path / "not-yet"
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{folder}/db.sqlite3",
                      "DEFAULT_LIMITS": UNLIMITED})
    server = LiveServer(app).start()
    yield server, folder
    server.stop()
    app.extensions["tagdesk_engine"].dispose()


def test_unreachable_database_is_503_with_retry_after(detached):
    server, _ = detached
    for method, path in (("GET", "/api/projects/list"), ("POST", "/api/queries/list")):
        response = requests.request(method, server.url + path, json={}, timeout=10,
                                    headers={"x-api-key": "tdk_live_whatever"})
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "30"
        assert response.json() == {
            "statusCode": 503,
            "message": "Service temporarily unavailable. Retry in 30 seconds.",
            "error": "Service Unavailable",
        }
        assert "X-RateLimit-Remaining" in response.headers


def test_service_recovers_when_the_database_returns(detached, sqlite_template):
    server, folder = detached
    url = server.url + "/api/projects/list"
    assert requests.get(url, headers={"x-api-key": "tdk_live_x"}, timeout=10).status_code == 503
    folder.mkdir()
    shutil.copy(sqlite_template, folder / "db.sqlite3")
    assert requests.get(url, headers={"x-api-key": "tdk_live_x"}, timeout=10).status_code == 401


@pytest.mark.postgres
def test_unreachable_postgres_is_503(tmp_path):
    app = create_app({"TESTING": True, "DEFAULT_LIMITS": UNLIMITED,
                      "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:1/none"
                                      "?connect_timeout=2"})
    server = LiveServer(app).start()
    try:
        response = requests.get(server.url + "/api/projects/list", timeout=20,
                                headers={"x-api-key": "tdk_live_x"})
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "30"
        assert "postgres" not in response.text.lower()
    finally:
        server.stop()
