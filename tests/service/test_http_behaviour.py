"""HTTP behaviour every route shares, over real HTTP: streamed (chunked) bodies over 1 MiB are
413 like sized ones (werkzeug's server, gunicorn, and the dashboard's /api).
"""

from __future__ import annotations

import json

import pytest
import requests

from app import create_app as create_dashboard_app
from service.config import MAX_BODY_BYTES
from tests.conftest import Api, LiveServer
from tests.dashboard.conftest import close_app
from tests.faults.processes import Gunicorn

TOO_LARGE = {"statusCode": 413, "message": "Request body is larger than 1 MiB.",
             "error": "Payload Too Large"}
JSON = {"content-type": "application/json"}


def padded(prefix: bytes, size: int, tail: bytes = b"") -> bytes:
    """`prefix`, spaces up to `size` bytes, then `tail`."""
    return prefix + b" " * (size - len(prefix)) + tail


def chunked(body: bytes, chunk: int = 65536):
    """A generator: requests sends it with Transfer-Encoding: chunked and no Content-Length."""
    return (body[start:start + chunk] for start in range(0, len(body), chunk))


def oversize_bodies(world) -> dict[tuple[str, str], bytes]:
    """Per route, valid JSON in the first mebibyte followed by garbage: cut at the limit, each
    would be accepted (and the PATCH would change a query's tags)."""
    change = {"queries": [{"query": "running shoes", "language": "en", "country": "US",
                           "tagIds": [world.tags["sale"]]}]}
    return {
        ("POST", "/api/queries/list"): padded(b'{"query":"x"}', MAX_BODY_BYTES, b"garbage"),
        ("POST", "/api/tags/list"): padded(b'{"name":"b"}', MAX_BODY_BYTES, b"garbage"),
        ("PATCH", "/api/queries/many/tags-only"): padded(
            json.dumps(change).encode(), MAX_BODY_BYTES, b"garbage"),
    }


def tags_of_running_shoes(api) -> list:
    rows = api.queries(query="running shoes").json()["results"]
    return [row["tags"] for row in rows]


@pytest.fixture
def seeded(world):
    world.add_queries([("running shoes", "en", "US", ["brand"])])
    return world


def assert_chunked_oversize_is_413(world, api: Api) -> None:
    before = tags_of_running_shoes(api)
    # A connection of their own: the server stops reading at the limit, so what is left of
    # the body makes a connection unfit for another request (gunicorn closes it).
    once = {**JSON, "Connection": "close"}
    for (method, path), body in oversize_bodies(world).items():
        streamed = api.call(method, path, data=chunked(body), headers=once)
        assert streamed.request.headers.get("Transfer-Encoding") == "chunked"
        assert "Content-Length" not in streamed.request.headers
        assert streamed.status_code == 413, (path, streamed.text[:300])
        assert streamed.headers["Content-Type"] == "application/json"
        assert streamed.json() == TOO_LARGE
        sized = api.call(method, path, data=body, headers=once)
        assert (sized.status_code, sized.json()) == (413, TOO_LARGE)
    assert tags_of_running_shoes(api) == before  # the PATCH changed nothing


# --- 1. chunked bodies over 1 MiB ---------------------------------------------------------


def test_chunked_bodies_over_one_mebibyte_are_413_like_sized_ones(live_service, seeded):
    api = Api(live_service.url, seeded.key, seeded.project_id)
    assert_chunked_oversize_is_413(seeded, api)


def test_a_chunked_body_of_exactly_one_mebibyte_is_read_whole(api, seeded):
    exactly = padded(b'{"query":"running"}', MAX_BODY_BYTES)
    answer = api.call("POST", "/api/queries/list", data=chunked(exactly), headers=JSON)
    assert answer.status_code == 200, answer.text[:300]
    assert answer.json()["page"]["totalRecords"] == 1
    one_more = api.call("POST", "/api/queries/list", data=chunked(exactly + b" "),
                        headers=JSON)
    assert (one_more.status_code, one_more.json()) == (413, TOO_LARGE)
    # A chunked body that is not JSON but fits is still judged by its content.
    small = api.call("POST", "/api/queries/list", data=chunked(b'{"query": 5}'), headers=JSON)
    assert small.status_code == 400


def test_a_chunked_form_over_one_mebibyte_to_the_settings_area_is_413(live_service, world):
    form = padded(b"email=a%40example.com&password=", MAX_BODY_BYTES, b"x")
    answer = requests.post(live_service.url + "/settings/signin", data=chunked(form),
                           headers={"content-type": "application/x-www-form-urlencoded"},
                           timeout=30)
    assert answer.status_code == 413
    assert answer.headers["Content-Type"].startswith("text/html")
    assert "too large" in answer.text


@pytest.fixture
def gunicorn_service(database_url, tmp_path, world):
    """The service as deployed: `gunicorn --threads 4 'service:create_app()'`, on this test's
    database, started from the process's environment (TAGDESK_* of the test: none)."""
    world.set_limits(1000, 10_000, 100_000)
    servers = []

    def start(**env) -> Gunicorn:
        server = Gunicorn("service:create_app()", {"TAGDESK_DATABASE_URL": database_url, **env},
                          tmp_path / "gunicorn.log", "/api/openapi.json", workers=1, threads=4)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def test_chunked_bodies_over_one_mebibyte_are_413_under_gunicorn(gunicorn_service, seeded):
    server = gunicorn_service()
    api = Api(server.url, seeded.key, seeded.project_id)
    assert_chunked_oversize_is_413(seeded, api)


@pytest.fixture
def dashboard(service_config, tmp_path, world):
    """The dashboard with the service embedded under /api, served on a loopback port."""
    apps = []

    def start(dashboard_extra=None, service_extra=None) -> LiveServer:
        app = create_dashboard_app({
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path / "instance"),
            "SECRET_KEY": "dashboard-test-secret",
            "SERVICE_CONFIG": {**service_config, **(service_extra or {})},
            **(dashboard_extra or {}),
        })
        server = LiveServer(app).start()
        apps.append((app, server))
        return server

    yield start
    for app, server in apps:
        server.stop()
        close_app(app)


def test_chunked_bodies_over_one_mebibyte_are_413_through_the_dashboards_api(
        dashboard, seeded):
    server = dashboard()
    api = Api(server.url, seeded.key, seeded.project_id)
    assert_chunked_oversize_is_413(seeded, api)
