"""HTTP behaviour every route shares, over real HTTP: streamed (chunked) bodies over 1 MiB are
413 like sized ones (werkzeug's server, gunicorn, and the dashboard's /api), OPTIONS answers
JSON, every response says `nosniff`, and client addresses come from X-Forwarded-For only
behind TAGDESK_TRUSTED_PROXIES.
"""

from __future__ import annotations

import json
import re

import pytest
import requests

from app import create_app as create_dashboard_app
from service import create_app as create_service_app
from service.config import MAX_BODY_BYTES
from tests.faults.processes import Gunicorn
from tests.support.api import Api
from tests.support.dashboard import close_app
from tests.support.servers import live_servers

TOO_LARGE = {"statusCode": 413, "message": "Request body is larger than 1 MiB.",
             "error": "Payload Too Large"}
JSON = {"content-type": "application/json"}
# Per hour is the smallest: the rate-limit headers then report it, whatever the clock says.
HOURLY_50 = (1000, 1000, 50)


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

    def make(dashboard_extra=None, service_extra=None):
        return create_dashboard_app({
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path / "instance"),
            "SECRET_KEY": "dashboard-test-secret",
            "SERVICE_CONFIG": {**service_config, **(service_extra or {})},
            **(dashboard_extra or {}),
        })

    with live_servers(make, close_app) as start:
        yield start


def test_chunked_bodies_over_one_mebibyte_are_413_through_the_dashboards_api(
        dashboard, seeded):
    server = dashboard()
    api = Api(server.url, seeded.key, seeded.project_id)
    assert_chunked_oversize_is_413(seeded, api)


# --- 2. OPTIONS -------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "allowed"), [
    ("/api/projects/list", ["GET", "HEAD", "OPTIONS"]),
    ("/api/queries/list", ["OPTIONS", "POST"]),
    ("/api/tags/list", ["OPTIONS", "POST"]),
    ("/api/queries/many/tags-only", ["OPTIONS", "PATCH"]),
    ("/api/openapi.json", ["GET", "HEAD", "OPTIONS"]),
])
def test_options_answers_json_with_the_allowed_methods(api, path, allowed):
    answer = api.call("OPTIONS", path)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.json() == {"allow": allowed}
    assert sorted(m.strip() for m in answer.headers["Allow"].split(",")) == allowed
    assert answer.headers["X-RateLimit-Remaining"].isdigit()


def test_options_of_unknown_paths_and_without_a_key_are_json_errors(live_service, world):
    assert Api(live_service.url, world.key, None).call(
        "OPTIONS", "/api/nothing").json()["statusCode"] == 404
    anonymous = Api(live_service.url, None, None).call("OPTIONS", "/api/queries/list")
    assert anonymous.status_code == 401
    assert anonymous.headers["Content-Type"] == "application/json"


# --- 3. nosniff ---------------------------------------------------------------------------


def test_every_response_says_nosniff(live_service, seeded):
    seeded.set_limits(100, 6, 1000)  # six a minute: the seventh is the 429
    api = Api(live_service.url, seeded.key, seeded.project_id)
    answers = {
        "success": api.queries(),
        "openapi": api.call("GET", "/api/openapi.json"),
        "400": api.queries(page="x"),
        "404": api.call("GET", "/api/nothing"),
        "405": api.call("GET", "/api/queries/list"),
        "413": api.call("POST", "/api/queries/list", headers=JSON,
                        data=chunked(padded(b"{}", MAX_BODY_BYTES, b" "))),
        "415": api.call("POST", "/api/queries/list", data=b"{}",
                        headers={"content-type": "text/plain"}),
    }
    answers["429"] = api.projects()
    _, other_key, _ = seeded.new_org()
    answers["OPTIONS"] = Api(live_service.url, other_key, None).call(
        "OPTIONS", "/api/projects/list")
    answers["401"] = Api(live_service.url, "tdk_live_guess", None).projects()
    answers["settings page"] = requests.get(live_service.url + "/settings/signin", timeout=10)
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {"success": 200, "openapi": 200, "400": 400, "404": 404, "405": 405,
                        "413": 413, "415": 415, "429": 429, "OPTIONS": 200, "401": 401,
                        "settings page": 200}
    for name, answer in answers.items():
        assert answer.headers.get("X-Content-Type-Options") == "nosniff", name


# --- 4. trusted proxies -------------------------------------------------------------------


def anonymous_remaining(base_url: str, forwarded_for: str | None) -> int:
    headers = {"x-api-key": "tdk_live_guess"}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    answer = requests.get(base_url + "/api/projects/list", headers=headers, timeout=10)
    assert answer.status_code == 401
    return int(answer.headers["X-RateLimit-Remaining"])


@pytest.fixture
def service_with(service_config):
    """A live service with some configuration of its own."""
    with live_servers(lambda **config: create_service_app({**service_config, **config}),
                      lambda app: app.extensions["tagdesk_engine"].dispose()) as start:
        yield start


def test_behind_one_trusted_proxy_each_client_address_has_its_own_budget(service_with):
    server = service_with(TRUSTED_PROXIES=1, DEFAULT_LIMITS=HOURLY_50)
    assert anonymous_remaining(server.url, "203.0.113.7") == 49
    assert anonymous_remaining(server.url, "203.0.113.8") == 49
    assert anonymous_remaining(server.url, "203.0.113.7") == 48
    # Only the address the proxy saw counts: what the client wrote before it does not.
    assert anonymous_remaining(server.url, "198.51.100.1, 203.0.113.8") == 48
    # Without the header (a request that bypassed the proxy): the connection's address.
    assert anonymous_remaining(server.url, None) == 49


def test_without_trusted_proxies_x_forwarded_for_is_ignored(service_with):
    server = service_with(DEFAULT_LIMITS=HOURLY_50)
    assert anonymous_remaining(server.url, "203.0.113.7") == 49
    assert anonymous_remaining(server.url, "203.0.113.8") == 48
    assert anonymous_remaining(server.url, None) == 47


def test_the_sign_in_throttle_counts_the_forwarded_address(service_with, world):
    server = service_with(TRUSTED_PROXIES=1, SETTINGS_SIGNIN_LIMIT="2/minute",
                          SETTINGS_SIGNIN_LIMIT_PER_EMAIL="100/minute")

    def sign_in(address: str) -> int:
        browser = requests.Session()
        page = browser.get(server.url + "/settings/signin", timeout=10).text
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        return browser.post(server.url + "/settings/signin", timeout=10,
                            headers={"X-Forwarded-For": address},
                            data={"csrf_token": token, "email": "nobody@example.com",
                                  "password": "wrong password"}).status_code

    assert [sign_in("203.0.113.7") for _ in range(3)] == [401, 401, 429]
    assert sign_in("203.0.113.8") == 401


def test_trusted_proxies_from_the_environment_under_gunicorn(gunicorn_service):
    server = gunicorn_service(TAGDESK_TRUSTED_PROXIES="1")
    # The default limits: 10 a second is the window closest to exhaustion.
    assert anonymous_remaining(server.url, "203.0.113.7") == 9
    assert anonymous_remaining(server.url, "203.0.113.8") == 9
    assert anonymous_remaining(server.url, "203.0.113.7") == 8


def test_embedded_the_dashboards_proxy_setting_applies_once(dashboard, world):
    # The dashboard trusts one proxy; the embedded service's own setting (two) must not
    # re-read the header behind it.
    server = dashboard({"TRUSTED_PROXIES": 1},
                       {"TRUSTED_PROXIES": 2, "DEFAULT_LIMITS": HOURLY_50})
    assert anonymous_remaining(server.url, "198.51.100.1, 203.0.113.7") == 49
    assert anonymous_remaining(server.url, "198.51.100.2, 203.0.113.7") == 48
    assert anonymous_remaining(server.url, "203.0.113.8") == 49
