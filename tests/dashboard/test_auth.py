"""Signing in and out: the key is checked, kept server-side only, never shown or logged."""

from __future__ import annotations

import base64
import logging
import os
import stat
from pathlib import Path

import pytest

from app import create_app
from service.org import admin
from tests.support.dashboard import AuthActions, close_app, csrf_token, project_url

COOKIE = "tagdesk_session"


def session_cookie(client):
    return client.get_cookie(COOKIE)


def test_sign_in_page_has_the_named_controls(client):
    html = client.get("/signin").get_data(as_text=True)
    assert '<label for="api-key">API key</label>' in html
    assert 'type="password" id="api-key"' in html
    assert ">Sign in</button>" in html
    # The world's database has an organization of its own: no demo, no demo key.
    assert "Use the demo key" not in html


def test_wrong_key_gets_a_sentence_on_the_same_page_and_is_not_echoed(auth, caplog):
    wrong = "tdk_live_" + "W" * 43
    with caplog.at_level(logging.DEBUG):
        response = auth.sign_in(wrong)
    html = response.get_data(as_text=True)
    assert response.status_code == 401
    assert "That API key was not accepted" in html
    assert wrong not in html
    assert wrong not in caplog.text
    assert session_cookie(auth.client) is None or wrong not in session_cookie(auth.client).value


@pytest.mark.parametrize("value, sentence", [
    ("", "Please enter your API key."),
    ("   ", "Please enter your API key."),
    ("x" * 600, "far too long"),
    ("tdk live with spaces", "was not accepted"),
])
def test_unusable_keys_get_sentences(auth, value, sentence):
    response = auth.sign_in(value)
    assert response.status_code in (400, 401)
    assert sentence in response.get_data(as_text=True)


def test_sign_in_lands_on_projects_and_shows_the_masked_key(auth, shop):
    response = auth.sign_in()
    assert response.status_code == 303
    assert response.headers["Location"] == "/"
    home = auth.client.get("/")
    assert home.headers["Location"] == "/projects"
    html = auth.client.get("/projects").get_data(as_text=True)
    assert ">Shop search</a>" in html and ">Help centre</a>" in html
    assert "tdk_live_…" + shop.key[-4:] in html
    assert shop.key not in html
    assert ">Sign out</button>" in html


def test_the_key_lives_only_in_the_server_side_store(auth, shop, app):
    auth.client.get("/signin")
    before = session_cookie(auth.client).value
    auth.sign_in()
    cookie = session_cookie(auth.client)
    assert cookie.value != before  # a new session id at sign-in (no fixation)
    assert cookie.http_only
    assert cookie.same_site == "Lax"
    assert not cookie.secure  # plain http in this test
    assert shop.key not in cookie.value
    padded = cookie.value + "=" * (-len(cookie.value) % 4)
    assert shop.key.encode() not in base64.urlsafe_b64decode(padded.encode())
    # The session store holds it, in files only their owner can read.
    folder = os.path.join(app.instance_path, "sessions")
    files = [os.path.join(folder, name) for name in os.listdir(folder)]
    assert files
    assert all(stat.S_IMODE(os.stat(path).st_mode) == 0o600 for path in files)
    assert any(shop.key.encode() in Path(path).read_bytes() for path in files)


def test_session_cookie_is_secure_over_https(shop, app):
    client = app.test_client()
    page = client.get("/signin", base_url="https://localhost")
    token = csrf_token(page.get_data(as_text=True))
    client.post("/signin", data={"csrf_token": token, "api_key": shop.key},
                base_url="https://localhost")
    cookie = client.get_cookie(COOKIE, domain="localhost")
    assert cookie.secure
    assert cookie.http_only


def test_sign_out_clears_the_server_side_data(auth, app):
    auth.sign_in()
    old_cookie = session_cookie(auth.client).value
    files_before = set(os.listdir(os.path.join(app.instance_path, "sessions")))
    response = auth.sign_out()
    assert response.status_code == 303
    assert response.headers["Location"] == "/signin"
    assert "You are signed out." in auth.client.get("/signin").get_data(as_text=True)
    # The old session id is worth nothing any more.
    replay = app.test_client()
    replay.set_cookie(COOKIE, old_cookie)
    assert replay.get("/projects").status_code == 302
    files_after = set(os.listdir(os.path.join(app.instance_path, "sessions")))
    assert len(files_before - files_after) >= 1


def test_pages_ask_for_sign_in_and_return_to_the_view_afterwards(auth, shop):
    view = project_url(shop, query="q=shoes&lang=en&sort=query")
    response = auth.client.get(view)
    assert response.status_code == 302
    location = response.headers["Location"]
    assert location.startswith("/signin?next=")
    signin_page = auth.client.get(location).get_data(as_text=True)
    assert "Please sign in to see that page." in signin_page
    token = csrf_token(signin_page)
    landed = auth.client.post(location, data={"csrf_token": token, "api_key": shop.key})
    assert landed.status_code == 303
    assert landed.headers["Location"] == view


UNSAFE_NEXT = [
    "//evil.example/", "https://evil.example/", "/\\evil.example", "\\\\evil.example",
    "javascript:alert(1)", "/signin", "/api/projects/list", "/%0d%0aSet-Cookie:x=y",
    "http:/evil.example", "/\t/evil.example",
]


def test_unsafe_next_is_ignored(app, shop):
    """Each address of UNSAFE_NEXT given as where to go after signing in is not followed: one
    app for them all (a new browser each), every failing one named."""
    failing = []
    for hostile in UNSAFE_NEXT:
        response = AuthActions(app.test_client(), shop).sign_in(next_url=hostile)
        if (response.status_code != 303
                or response.headers["Location"] not in ("/", "/%0d%0aSet-Cookie:x=y")):
            failing.append((hostile, response.status_code, response.headers.get("Location")))
    assert not failing


def test_htmx_requests_when_signed_out_redirect_the_whole_page(client, shop):
    response = client.get(project_url(shop, query="q=shoes"), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.headers["HX-Redirect"].startswith("/signin?next=")
    assert response.get_data() == b""


def test_sign_in_attempts_are_throttled_per_address(auth, api_calls):
    for _ in range(10):
        auth.sign_in("tdk_live_" + "x" * 43)
    api_calls.reset()
    response = auth.sign_in()
    assert response.status_code == 429
    assert "Too many sign-in attempts" in response.get_data(as_text=True)
    assert api_calls.total == 0  # the key was not even tried
    # Another address is not held back.
    other = auth.client.application.test_client()
    token = csrf_token(other.get("/signin").get_data(as_text=True))
    allowed = other.post("/signin", data={"csrf_token": token, "api_key": auth.world.key},
                         environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert allowed.status_code == 303


def test_sign_in_without_a_csrf_token_is_refused_with_a_sentence(client, shop):
    response = client.post("/signin", data={"api_key": shop.key})
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "security check expired" in html
    assert 'id="api-key"' in html  # the form is back, with a fresh token
    assert shop.key not in html


def test_a_revoked_key_returns_to_sign_in_with_a_sentence(auth, shop):
    auth.sign_in()
    view = project_url(shop, query="q=shoes")
    assert auth.client.get(view).status_code == 200
    shop.run(lambda s: admin.revoke_key(s, shop.key))
    response = auth.client.get(view)
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/signin?next=")
    html = auth.client.get(response.headers["Location"]).get_data(as_text=True)
    assert "no longer accepted" in html
    assert auth.client.get("/projects").status_code == 302  # signed out for good


def test_a_revoked_key_in_an_htmx_request_redirects_instead_of_swapping(auth, shop):
    auth.sign_in()
    auth.client.get(project_url(shop))
    shop.run(lambda s: admin.revoke_key(s, shop.key))
    response = auth.client.get(project_url(shop, query="q=lauf"),
                               headers={"HX-Request": "true"})
    assert response.headers["HX-Redirect"].startswith("/signin?next=")
    assert "q%3Dlauf" in response.headers["HX-Redirect"]
    assert response.get_data() == b""


def test_a_revoked_key_seen_by_the_counts_request_leaves_the_sentence_for_the_page(auth, shop):
    """The counts are fetched by counts.js for the page on screen: a redirect would be followed
    by the fetch itself, whose sign-in page (never shown) took the sentence. The fetch gets a
    401 instead; the person's next step shows the sign-in page with the sentence, and returns
    to the page on screen afterwards."""
    auth.sign_in()
    view = project_url(shop, query="q=shoes")
    assert auth.client.get(view).status_code == 200
    shop.run(lambda s: admin.revoke_key(s, shop.key))
    counts = auth.client.get(f"/projects/{shop.project_id}/queries/counts?q=shoes",
                             headers={"Accept": "application/json",
                                      "Referer": "http://localhost" + view})
    assert counts.status_code == 401
    assert counts.get_json()["signin"].startswith("/signin?next=")
    assert "q%3Dshoes" in counts.get_json()["signin"]
    assert "counts" not in counts.get_json()["signin"]
    html = auth.client.get(counts.get_json()["signin"]).get_data(as_text=True)
    assert "no longer accepted" in html
    assert auth.client.get("/projects").status_code == 302  # signed out for good


def test_a_counts_request_after_the_session_ended_gets_a_401_not_a_sign_in_page(auth, shop):
    counts = auth.client.get(f"/projects/{shop.project_id}/queries/counts",
                             headers={"Accept": "application/json"})
    assert counts.status_code == 401
    assert counts.get_json()["signin"].startswith("/signin")


def test_csrf_failure_on_sign_out_leaves_a_working_button(auth):
    auth.sign_in()
    response = auth.client.post("/signout", data={"csrf_token": "stale"},
                                headers={"Referer": "http://localhost/projects"})
    assert response.status_code == 303
    assert response.headers["Location"] == "/projects"
    page = auth.client.get("/projects").get_data(as_text=True)
    assert "security check expired" in page
    assert auth.client.post("/signout", data={"csrf_token": csrf_token(page)}).status_code == 303


def test_expired_csrf_token_in_an_htmx_post_gets_a_fresh_token(auth):
    auth.sign_in()
    response = auth.client.post("/signout", headers={"HX-Request": "true",
                                                     "X-CSRFToken": "expired"})
    assert response.status_code == 400
    assert response.headers["HX-Retarget"] == "#notices"
    fresh = response.headers["X-CSRFToken"]
    assert "security check expired" in response.get_data(as_text=True)
    retry = auth.client.post("/signout", headers={"HX-Request": "true", "X-CSRFToken": fresh})
    assert retry.status_code == 303


# --- the demo ------------------------------------------------------------------------------------


@pytest.fixture
def demo_app(dashboard_config):
    """A dashboard on an empty database: the first start seeds the demo."""
    app = create_app(dashboard_config)
    yield app
    close_app(app)


def test_first_start_seeds_the_demo_and_offers_its_key_without_showing_it(demo_app):
    key = demo_app.config["DEMO_KEY"]
    assert key and key.startswith("tdk_live_")
    path = demo_app.extensions["tagdesk_embedded"].kept_file("demo-key")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    secret = os.path.join(demo_app.instance_path, "secret-key")
    assert not os.path.exists(secret)  # the test configuration brings its own secret

    client = demo_app.test_client()
    html = client.get("/signin").get_data(as_text=True)
    assert "This is a demo" in html and "Use the demo key" in html
    assert key not in html
    response = client.post("/signin", data={"csrf_token": csrf_token(html), "demo": "1"})
    assert response.status_code == 303
    projects = client.get("/projects").get_data(as_text=True)
    assert ">Online shop search</a>" in projects
    assert key not in projects


def test_a_second_start_keeps_the_demo_and_its_key(dashboard_config, demo_app):
    again = create_app(dashboard_config)
    try:
        assert again.config["DEMO_KEY"] == demo_app.config["DEMO_KEY"]
    finally:
        close_app(again)


def test_secret_key_is_generated_once_with_mode_600(dashboard_config, shop):
    config = {**dashboard_config, "SECRET_KEY": None}
    first = create_app(config)
    second = create_app(config)
    try:
        path = os.path.join(first.instance_path, "secret-key")
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert first.secret_key == second.secret_key and len(first.secret_key) >= 64
    finally:
        close_app(first)
        close_app(second)


# --- against a separate API deployment -----------------------------------------------------------


@pytest.fixture
def external_app(dashboard_config, live_service, shop):
    app = create_app({**dashboard_config, "API_URL": live_service.url})
    yield app
    close_app(app)


def test_with_an_api_url_there_is_no_embedded_service_and_no_demo(external_app, shop):
    assert "tagdesk_embedded" not in external_app.extensions
    client = external_app.test_client()
    html = client.get("/signin").get_data(as_text=True)
    assert "Use the demo key" not in html
    assert client.get("/api/projects/list").status_code == 404
    response = client.post("/signin", data={"csrf_token": csrf_token(html), "api_key": shop.key})
    assert response.status_code == 303
    assert ">Shop search</a>" in client.get("/projects").get_data(as_text=True)


def test_an_unreachable_api_is_said_so(dashboard_config, shop):
    app = create_app({**dashboard_config, "API_URL": "http://127.0.0.1:9"})
    try:
        client = app.test_client()
        html = client.get("/signin").get_data(as_text=True)
        response = client.post("/signin", data={"csrf_token": csrf_token(html),
                                                "api_key": shop.key})
        assert response.status_code == 502
        assert "cannot be reached" in response.get_data(as_text=True)
    finally:
        close_app(app)
