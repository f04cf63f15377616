"""Organization settings → API, as routes: sign-in (throttled, CSRF), keys generated and shown
once, revoked after a confirmation, project-scoped keys, and the record of every key action.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote

import pytest
from sqlalchemy import inspect, select, text

from service.org import accounts, admin, audit, keys
from service.settings.throttle import SignInThrottle
from service.store.models import ApiKey, KeyEvent, SettingsSession, User
from tests.service.migrating import (
    engine_of_its_own,
    migrate,
    migrated_with_rows,
    model_differences,
)
from tests.support.api import Api
from tests.support.dashboard import csrf_token

EMAIL = "Ann.Admin@Example.com"
PASSWORD = "correct horse battery staple"
FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')
KEY_IN_PAGE = re.compile(r'id="new-key" value="([^"]+)"')
ANY_KEY = re.compile(r"tdk_live_[A-Za-z0-9_-]{32,}")


class Settings:
    """A browser-like test client for /settings, signed in or not."""

    def __init__(self, app, world):
        self.app = app
        self.world = world
        self.client = app.test_client()

    def page(self, path: str, **kwargs):
        return self.client.get(path, **kwargs)

    def token(self, path: str = "/settings/signin") -> str:
        return csrf_token(self.page(path).get_data(as_text=True))

    def sign_in(self, email=EMAIL, password=PASSWORD, address="127.0.0.1", next_url=None):
        token = self.token()
        url = "/settings/signin" + (f"?next={next_url}" if next_url else "")
        return self.client.post(url, data={"csrf_token": token, "email": email,
                                           "password": password},
                                environ_base={"REMOTE_ADDR": address})

    def generate(self, name="Nightly export", project="", **extra):
        html = self.page("/settings/api/generate").get_data(as_text=True)
        data = {"csrf_token": csrf_token(html), "form_token": FORM_TOKEN.search(html).group(1),
                "name": name, "project": project, **extra}
        return self.client.post("/settings/api/generate", data=data), data

    def generated_key(self, name="Nightly export", project="") -> str:
        response, _ = self.generate(name, project)
        assert response.status_code == 200, response.get_data(as_text=True)
        return KEY_IN_PAGE.search(response.get_data(as_text=True)).group(1)

    def revoke(self, key_id: int):
        token = self.token(f"/settings/api/{key_id}/revoke")
        return self.client.post(f"/settings/api/{key_id}/revoke", data={"csrf_token": token})

    def session_data(self) -> dict:
        cookie = self.client.get_cookie("tagdesk_settings", path="/settings")
        if cookie is None:
            return {}
        serializer = self.app.session_interface.get_signing_serializer(self.app)
        return serializer.loads(cookie.value)


@pytest.fixture
def person(world):
    return world.with_administrator(EMAIL, PASSWORD)


@pytest.fixture
def settings(service_app, person) -> Settings:
    return Settings(service_app, person)


@pytest.fixture
def signed_in(settings) -> Settings:
    response = settings.sign_in()
    assert response.status_code == 303, response.get_data(as_text=True)
    return settings


def key_row(world, key: str) -> ApiKey:
    return world.run(lambda s: s.scalar(select(ApiKey).where(
        ApiKey.key_hash == keys.digest(key))))


def events(world) -> list[KeyEvent]:
    return world.run(lambda s: list(s.scalars(select(KeyEvent).order_by(KeyEvent.id))))


def api_status(app, key: str, path="/api/projects/list", project_id=None, method="GET",
               json=None) -> int:
    headers = {"x-api-key": key}
    if project_id:
        headers["x-project-id"] = project_id
    return app.test_client().open(path, method=method, headers=headers, json=json).status_code


# --- signing in -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/settings/api", "/settings/activity",
                                  "/settings/api/generate", "/settings/api/1/revoke"])
def test_every_page_asks_to_sign_in_first(settings, path):
    response = settings.page(path)
    assert response.status_code == 303
    assert response.headers["Location"] == f"/settings/signin?next={path}"
    page = settings.page(response.headers["Location"]).get_data(as_text=True)
    assert "Please sign in to see that page." in page


def test_sign_in_with_email_and_password_and_out_again(settings):
    assert settings.page("/settings").headers["Location"] == "/settings/signin"
    response = settings.sign_in(email="  ann.admin@EXAMPLE.com ")  # any case, any spaces
    assert (response.status_code, response.headers["Location"]) == (303, "/settings/api")
    page = settings.page("/settings/api").get_data(as_text=True)
    assert "ann.admin@example.com" in page and "Acme" in page and "Sign out" in page
    assert settings.page("/settings").headers["Location"] == "/settings/api"
    assert settings.page("/settings/signin").headers["Location"] == "/settings/api"

    out = settings.client.post("/settings/signout", data={"csrf_token": csrf_token(page)})
    assert (out.status_code, out.headers["Location"]) == (303, "/settings/signin?signed_out=1")
    assert "You are signed out." in settings.page(out.headers["Location"]).get_data(
        as_text=True)
    assert settings.page("/settings/api").status_code == 303


def test_sign_in_returns_to_the_page_asked_for_but_only_within_settings(settings):
    # Six sign-ins in a row: more than the throttle allows (every attempt counts).
    settings.app.extensions["tagdesk_settings_throttle"] = SignInThrottle(
        "memory://", "100/minute", "100/minute")
    response = settings.sign_in(next_url="/settings/activity")
    assert response.headers["Location"] == "/settings/activity"
    other = Settings(settings.app, settings.world)
    for target in ("https://evil.example/", "//evil.example/", "/api/projects/list",
                   "/settings/signout", "/\\evil.example"):
        assert other.sign_in(next_url=target).headers["Location"] == "/settings/api"
        other.client.post("/settings/signout", data={"csrf_token": other.token("/settings/api")})


@pytest.mark.parametrize("email,password", [
    (EMAIL, "wrong password, but long"), ("nobody@example.com", PASSWORD), (EMAIL, ""),
    ("not an email", PASSWORD), (EMAIL, "x" * 5000),
])
def test_wrong_credentials_are_one_sentence_and_nothing_more(settings, email, password):
    response = settings.sign_in(email=email, password=password)
    assert response.status_code in (400, 401)
    page = response.get_data(as_text=True)
    assert 'role="alert"' in page
    if response.status_code == 401:
        assert "That email and password do not match an account." in page
    assert settings.session_data().get("session") is None
    assert password not in page or not password
    assert settings.page("/settings/api").status_code == 303


def test_the_session_cookie_holds_only_a_session_secret_and_the_csrf_token(settings):
    settings.page("/settings/signin")
    assert set(settings.session_data()) == {"csrf_token"}
    before = settings.session_data()["csrf_token"]
    response = settings.sign_in()
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("tagdesk_settings=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/settings" in cookie
    assert "Secure" not in cookie  # plain HTTP here; see the HTTPS test below
    key = settings.generated_key()
    data = settings.session_data()
    assert set(data) <= {"session", "csrf_token", "_permanent"}
    # The secret of a session the server keeps, stored there only as its SHA-256.
    stored = settings.world.run(lambda s: s.scalars(select(SettingsSession)).all())
    assert [(row.token_hash, row.user_id) for row in stored] == [
        (hashlib.sha256(data["session"].encode()).hexdigest(), settings.world.user_id)]
    assert len(data["session"]) >= 43 and data["session"] not in repr(
        [vars(row) for row in stored])
    assert data["csrf_token"] != before  # a new session at sign-in
    assert key not in str(data)


def test_the_cookie_is_secure_over_https(settings):
    response = settings.client.get("/settings/signin", base_url="https://localhost")
    assert "Secure" in response.headers["Set-Cookie"]


def test_passwords_are_kept_as_scrypt_hashes(person):
    user = person.run(lambda s: s.get(User, person.user_id))
    assert user.email == "ann.admin@example.com"
    assert user.password_hash.startswith("scrypt:")
    assert PASSWORD not in user.password_hash


# --- throttling -----------------------------------------------------------------------------


def test_wrong_passwords_are_throttled_per_address_before_the_password_is_checked(
        settings, monkeypatch):
    for attempt in range(5):
        response = settings.sign_in(password=f"wrong password number {attempt}")
        assert response.status_code == 401
    checked = []
    real_check = accounts.check_credentials
    monkeypatch.setattr("service.settings.views.check_credentials",
                        lambda *a: checked.append(a) or real_check(*a))
    throttled = settings.sign_in()  # the right password, too late
    assert throttled.status_code == 429
    assert 1 <= int(throttled.headers["Retry-After"]) <= 60
    page = throttled.get_data(as_text=True)
    assert "Too many sign-in attempts." in page and "please wait" in page
    assert checked == []  # refused before any password was looked at
    assert settings.page("/settings/api").status_code == 303
    # Another address, another person: not affected.
    settings.world.run(lambda s: accounts.create_user(
        s, settings.world.org_id, "bob@example.com", PASSWORD))
    other = Settings(settings.app, settings.world)
    assert other.sign_in(email="bob@example.com", address="10.0.0.9").status_code == 303


def test_wrong_passwords_are_throttled_per_email_from_any_address(settings):
    for attempt in range(5):
        response = settings.sign_in(password="wrong password again", address=f"10.0.0.{attempt}")
        assert response.status_code == 401
    throttled = settings.sign_in(address="10.0.0.200")
    assert throttled.status_code == 429
    assert "Too many sign-in attempts." in throttled.get_data(as_text=True)
    # The same email in another case is the same account, and the same budget.
    assert settings.sign_in(email=EMAIL.upper(), address="10.0.0.201").status_code == 429


# --- CSRF -----------------------------------------------------------------------------------


def test_forms_without_the_csrf_token_are_rejected(signed_in):
    world = signed_in.world
    client = signed_in.client
    html = client.get("/settings/api/generate").get_data(as_text=True)
    form_token = FORM_TOKEN.search(html).group(1)
    for token in (None, "", "forged-token", csrf_token(html) + "x"):
        data = {"name": "Sneaky", "project": "", "form_token": form_token}
        if token is not None:
            data["csrf_token"] = token
        response = client.post("/settings/api/generate", data=data)
        assert response.status_code == 400
        assert response.content_type.startswith("text/html")
        assert "That form has expired" in response.get_data(as_text=True)
        assert "Sign out" in response.get_data(as_text=True)
        assert not ANY_KEY.search(response.get_data(as_text=True))
    assert world.run(lambda s: s.query(ApiKey).count()) == 1  # only the world's own key

    key_id = key_row(world, world.key).id
    assert client.post(f"/settings/api/{key_id}/revoke").status_code == 400
    assert key_row(world, world.key).revoked_at is None
    assert client.post("/settings/signout").status_code == 400
    assert client.get("/settings/api").status_code == 200  # still signed in

    other = Settings(signed_in.app, world)
    other.page("/settings/signin")
    response = other.client.post("/settings/signin", data={"email": EMAIL, "password": PASSWORD})
    assert response.status_code == 400
    assert other.session_data().get("session") is None


def test_a_token_from_before_sign_in_no_longer_works_after_it(settings):
    old = settings.token()
    settings.sign_in()
    html = settings.page("/settings/api/generate").get_data(as_text=True)
    response = settings.client.post("/settings/api/generate", data={
        "csrf_token": old, "name": "x", "project": "",
        "form_token": FORM_TOKEN.search(html).group(1)})
    assert response.status_code == 400


# --- generate: shown once -------------------------------------------------------------------


def test_a_generated_key_is_shown_exactly_once_and_stored_only_as_its_hash(signed_in):
    world, app = signed_in.world, signed_in.app
    response, data = signed_in.generate("Nightly export")
    assert response.status_code == 200
    assert "no-store" in response.headers["Cache-Control"]
    assert "Location" not in response.headers
    page = response.get_data(as_text=True)
    key = KEY_IN_PAGE.search(page).group(1)
    assert key.startswith("tdk_live_") and len(key) >= len("tdk_live_") + 32
    assert page.count(key) == 1
    assert "It cannot be shown again" in page
    assert 'data-copy="new-key"' in page and "settings.js" in page  # the copy button
    assert "Set-Cookie" not in response.headers or key not in response.headers["Set-Cookie"]

    # The key works, organization-wide.
    assert api_status(app, key) == 200
    assert api_status(app, key, "/api/queries/list", world.other_project_id, "POST", {}) == 200

    # Stored as its SHA-256 only: no column of any table holds the key.
    row = key_row(world, key)
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert (row.prefix, row.last_four, row.name) == ("tdk_live_", key[-4:], "Nightly export")

    def every_value(session):
        engine = session.get_bind()
        found = []
        for table in inspect(engine).get_table_names():
            if table.startswith(("queries_fts", "alembic")):
                continue
            for record in session.execute(text(f'SELECT * FROM "{table}"')):  # noqa: S608
                found.extend(str(value) for value in record)
        return found

    assert not [value for value in world.run(every_value) if key in value]

    # Revisiting and reloading: only the ends of the key, never the key.
    listing = signed_in.page("/settings/api").get_data(as_text=True)
    assert key not in listing
    assert f"tdk_live_…{key[-4:]}" in listing
    assert "Nightly export" in listing and "All projects" in listing
    assert key not in signed_in.page("/settings/activity").get_data(as_text=True)
    assert key not in signed_in.page("/settings/api/generate").get_data(as_text=True)
    assert key not in str(signed_in.session_data())

    # Sending the same form again (a reload of the POST) makes no second key, shows none.
    again = signed_in.client.post("/settings/api/generate", data=data)
    assert again.status_code == 200
    body = again.get_data(as_text=True)
    assert "This key was already generated" in body and "cannot be shown again" in body
    assert not ANY_KEY.search(body)
    assert world.run(lambda s: s.query(ApiKey).count()) == 2
    assert [e.action for e in events(world)] == ["generated"]


@pytest.mark.parametrize("name,project,message", [
    ("", "", "Please give the key a name"),
    ("   ", "", "Please give the key a name"),
    ("x" * 201, "", "at most 200 characters"),
    ("tab\tname", "", "control characters"),
    ("Fine", "00000000-0000-4000-8000-000000000000", "Choose one of your organization"),
])
def test_the_generate_form_explains_what_is_wrong(signed_in, name, project, message):
    response, _ = signed_in.generate(name, project)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert message in page and 'aria-invalid="true"' in page
    assert not ANY_KEY.search(page)
    assert signed_in.world.run(lambda s: s.query(ApiKey).count()) == 1


def test_a_200_character_name_is_fine(signed_in):
    key = signed_in.generated_key("n" * 200)
    assert key_row(signed_in.world, key).name == "n" * 200


def test_another_organizations_project_cannot_be_chosen(signed_in):
    _, _, their_project = signed_in.world.new_org()
    response, _ = signed_in.generate("Theirs", their_project)
    assert response.status_code == 400
    assert "Their project" not in signed_in.page("/settings/api/generate").get_data(as_text=True)


# --- project-scoped keys --------------------------------------------------------------------


def test_a_project_scoped_key_reaches_only_its_project(signed_in, live_service):
    world = signed_in.world
    key = signed_in.generated_key("Shop only", world.project_id)
    listing = signed_in.page("/settings/api").get_data(as_text=True)
    row = re.search(r'<tr role="row" data-key-id="\d+">(.*?)</tr>', listing, re.S).group(1)
    assert "Shop only" in row and "Shop search" in row and "All projects" not in row
    assert key_row(world, key).project_id == world.project_id

    api = Api(live_service.url, key, world.project_id)
    listed = api.projects().json()
    assert [p["id"] for p in listed["results"]] == [world.project_id]
    assert listed["page"]["totalRecords"] == 1
    assert api.queries().status_code == 200
    assert api.tags().status_code == 200
    assert api.set_tags([]).status_code == 200
    other = Api(live_service.url, key, world.other_project_id)
    for response in (other.queries(), other.tags(), other.set_tags([])):
        assert response.status_code == 404
        assert response.json() == {"statusCode": 404, "message": "Project not found.",
                                   "error": "Not Found"}
    _, _, foreign = world.new_org()
    assert Api(live_service.url, key, foreign).queries().status_code == 404

    # An organization-wide key, as before: every project.
    wide = signed_in.generated_key("Everything")
    assert len(Api(live_service.url, wide, None).projects().json()["results"]) == 2
    assert Api(live_service.url, wide, world.other_project_id).queries().status_code == 200


# --- revoke ---------------------------------------------------------------------------------


def test_revoking_asks_first_and_then_the_key_answers_401_at_once(signed_in):
    world, app = signed_in.world, signed_in.app
    key = signed_in.generated_key("To be revoked")
    key_id = key_row(world, key).id
    listing = signed_in.page("/settings/api").get_data(as_text=True)
    assert f'href="/settings/api/{key_id}/revoke"' in listing

    confirm = signed_in.page(f"/settings/api/{key_id}/revoke")
    page = confirm.get_data(as_text=True)
    assert confirm.status_code == 200
    assert "Revoke this key?" in page and f"tdk_live_…{key[-4:]}" in page
    assert "cannot be undone" in page and ">Revoke</button>" in page
    assert api_status(app, key) == 200  # asking is not doing

    done = signed_in.revoke(key_id)
    assert (done.status_code, done.headers["Location"]) == (
        303, f"/settings/api?revoked={key_id}")
    assert api_status(app, key) == 401
    listing = signed_in.page(done.headers["Location"]).get_data(as_text=True)
    assert "is revoked. Requests that use it are refused from now on." in listing
    assert "Revoked" in listing
    assert f'href="/settings/api/{key_id}/revoke"' not in listing
    assert api_status(app, world.key) == 200  # the other keys work on

    # Once is enough: a second POST changes nothing and records nothing.
    assert signed_in.revoke(key_id).status_code == 200
    assert [e.action for e in events(world)] == ["generated", "revoked"]
    assert "This key is revoked" in signed_in.page(
        f"/settings/api/{key_id}/revoke").get_data(as_text=True)


def test_keys_of_other_organizations_are_not_there(signed_in):
    world = signed_in.world
    _, their_key, _ = world.new_org()
    their_id = key_row(world, their_key).id
    assert f"…{their_key[-4:]}" not in signed_in.page("/settings/api").get_data(as_text=True)
    for key_id in (their_id, 999_999):
        page = signed_in.page(f"/settings/api/{key_id}/revoke")
        assert page.status_code == 404
        assert page.content_type.startswith("text/html")
        assert "Page not found" in page.get_data(as_text=True)
        token = signed_in.token("/settings/api")
        response = signed_in.client.post(f"/settings/api/{key_id}/revoke",
                                         data={"csrf_token": token})
        assert response.status_code == 404
    assert key_row(world, their_key).revoked_at is None
    assert api_status(signed_in.app, their_key) == 200


# --- the record of key actions --------------------------------------------------------------


def test_every_key_action_is_recorded_and_shown(signed_in, service_app):
    world = signed_in.world
    key = signed_in.generated_key("Recorded", world.project_id)
    signed_in.revoke(key_row(world, key).id)
    runner = service_app.test_cli_runner()
    made = runner.invoke(args=["create-key", world.org_id, "--name", "From the shell"])
    assert made.exit_code == 0, made.output
    cli_key = made.stdout.strip().splitlines()[-1]
    assert runner.invoke(args=["revoke-key", cli_key]).exit_code == 0
    assert runner.invoke(args=["revoke-key", cli_key]).exit_code == 0  # no second record

    recorded = events(world)
    assert [(e.action, e.user_id, e.key_prefix, e.key_last_four, e.key_name)
            for e in recorded] == [
        ("generated", world.user_id, "tdk_live_", key[-4:], "Recorded"),
        ("revoked", world.user_id, "tdk_live_", key[-4:], "Recorded"),
        ("generated", None, "tdk_live_", cli_key[-4:], "From the shell"),
        ("revoked", None, "tdk_live_", cli_key[-4:], "From the shell"),
    ]
    assert all(e.at is not None and e.org_id == world.org_id for e in recorded)

    page = signed_in.page("/settings/activity").get_data(as_text=True)
    rows = re.findall(r"<tr[^>]*>\s*<td[^>]* class=\"col-time\">(.*?)</tr>", page, re.S)
    assert len(rows) == 4
    newest = rows[0]
    assert "Command line" in newest and "Key revoked" in newest and f"…{cli_key[-4:]}" in newest
    oldest = rows[-1]
    assert "ann.admin@example.com" in oldest and "Key generated" in oldest
    assert f"tdk_live_…{key[-4:]}" in oldest and "UTC" in oldest
    assert "Recent key activity" in signed_in.page("/settings/api").get_data(as_text=True)
    assert key not in page and cli_key not in page


def test_the_activity_page_pages(signed_in):
    world = signed_in.world
    for number in range(55):
        world.run(lambda s, n=number: audit.record(
            s, s.scalar(select(ApiKey)), audit.GENERATED if n % 2 else audit.REVOKED))
    first = signed_in.page("/settings/activity").get_data(as_text=True)
    assert "Page 1 of 2" in first and 'rel="next"' in first
    second = signed_in.page("/settings/activity?page=2").get_data(as_text=True)
    assert second.count('class="col-time"><time') == 5
    assert signed_in.page("/settings/activity?page=99").status_code == 200
    assert "All key activity" in signed_in.page("/settings/api").get_data(as_text=True)


def test_the_activity_log_holds_every_change_with_who_made_it(signed_in):
    """Key events and other changes in one log, newest first; who made a change stays named
    after they are removed."""
    world = signed_in.world
    world.run(lambda s: audit.record(s, s.scalar(select(ApiKey)), audit.GENERATED,
                                     user_id=world.user_id))
    world.run(lambda s: audit.record_change(s, world.org_id, "project.created", "Spring <sale>",
                                            user_id=world.user_id))
    world.run(lambda s: audit.record_change(s, world.org_id, "tag.deleted", "brand",
                                            "It was on 12 queries."))
    with pytest.raises(ValueError):
        world.run(lambda s: audit.record_change(s, world.org_id, "made.up", "x"))
    page = signed_in.page("/settings/activity").get_data(as_text=True)
    rows = re.findall(r"<tr[^>]*>\s*<td[^>]* class=\"col-time\">(.*?)</tr>", page, re.S)
    assert len(rows) == 3
    assert "Tag deleted" in rows[0] and "Command line" in rows[0]
    assert "It was on 12 queries." in rows[0]
    assert "Project created" in rows[1] and "ann.admin@example.com" in rows[1]
    assert "Spring &lt;sale&gt;" in rows[1] and "Spring <sale>" not in page
    assert "Key generated" in rows[2]
    assert world.run(lambda s: audit.log_count(s, world.org_id)) == 3


def test_a_change_made_through_the_api_names_its_key_and_who_made_it(signed_in):
    """Rules and tags changed through the API (as the dashboard changes them) are not the
    command line's: the log names the key, and the person its caller says made the change."""
    world = signed_in.world
    key = world.run(lambda s: admin.create_key(s, world.org_id, "tdk", name="Staff laptops"))
    api = signed_in.app.test_client()
    headers = {"x-api-key": key, "x-project-id": world.project_id}
    made = api.post("/api/rules/create", headers={**headers, "X-Tagdesk-Actor": quote("Ana Núñez")},
                    json={"name": "Brand it", "condition": {}, "tagIds": [world.tags["brand"]]})
    assert made.status_code == 201, made.get_json()
    paused = api.post("/api/rules/pause", headers=headers,
                      json={"id": made.get_json()["id"], "paused": True})
    assert paused.status_code == 200, paused.get_json()
    page = signed_in.page("/settings/activity").get_data(as_text=True)
    rows = re.findall(r"<tr[^>]*>\s*<td[^>]* class=\"col-time\">(.*?)</tr>", page, re.S)
    who = [re.search(r'class="col-who">(.*?)</td>', row, re.S).group(1) for row in rows]
    assert "Rule paused" in rows[0] and "Rule created" in rows[1]
    assert "Command line" not in who[0] + who[1]
    assert "Ana Núñez" in who[1] and "Staff laptops" in who[1] and f"…{key[-4:]}" in who[1]
    assert "Ana" not in who[0] and "Staff laptops" in who[0]
    assert key not in page


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0034_adds_the_key_and_person_of_an_api_change_and_takes_them_away(
        kind, tmp_path):
    added = {"key_prefix", "key_last_four", "key_name", "actor_name"}
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_org_events_") as engine:
        migrated_with_rows(engine, "0033", [])
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO org_events (org_id, action, subject, detail, at) "
                "VALUES ('o', 'rule.created', 'Brand it', '', '2026-01-01')"))
        migrate(engine, "0034")
        assert added <= {c["name"] for c in inspect(engine).get_columns("org_events")}
        assert not [d for d in model_differences(engine) if "org_events" in str(d)]
        with engine.connect() as connection:
            kept = connection.execute(text(
                "SELECT subject, key_name, actor_name FROM org_events")).one()
        assert tuple(kept) == ("Brand it", None, None)
        migrate(engine, "0033", down=True)
        assert not added & {c["name"] for c in inspect(engine).get_columns("org_events")}
        migrate(engine, "head")


# --- the settings area and the API side by side ---------------------------------------------


def test_settings_errors_are_pages_and_api_errors_stay_json(signed_in):
    client = signed_in.client
    missing = client.get("/settings/no-such-page")
    assert missing.status_code == 404 and missing.content_type.startswith("text/html")
    assert "Page not found" in missing.get_data(as_text=True)
    assert "Go to API keys" in missing.get_data(as_text=True)  # still signed in, and shown so
    wrong_method = client.delete("/settings/api")
    assert wrong_method.status_code == 405 and "text/html" in wrong_method.content_type
    api_missing = client.get("/api/no-such-thing", headers={"x-api-key": signed_in.world.key})
    assert api_missing.status_code == 404 and api_missing.is_json
    assert api_missing.json == {"statusCode": 404, "message": "Not found.", "error": "Not Found"}
    assert client.get("/api/projects/list").json["statusCode"] == 401


def test_settings_pages_are_not_the_apis_business_nor_the_api_the_cookies(signed_in):
    page = signed_in.page("/settings/api")
    assert "X-RateLimit-Limit" not in page.headers  # the API's limits are the API's
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["Cache-Control"] == "no-store"
    api = signed_in.client.get("/api/projects/list", headers={"x-api-key": signed_in.world.key})
    assert api.status_code == 200 and "X-RateLimit-Limit" in api.headers
    assert "Set-Cookie" not in api.headers
    assert "Content-Security-Policy" not in api.headers
    # The API needs no CSRF token: it authenticates by header.
    patch = signed_in.client.patch("/api/queries/many/tags-only", json={"queries": []},
                                   headers={"x-api-key": signed_in.world.key,
                                            "x-project-id": signed_in.world.project_id})
    assert patch.status_code == 200
    css = signed_in.page("/settings/static/settings.css")
    assert css.status_code == 200 and "--accent" in css.get_data(as_text=True)
    assert "Set-Cookie" not in css.headers


def test_a_deleted_account_is_signed_out(signed_in):
    world = signed_in.world
    world.run(lambda s: s.delete(s.get(User, world.user_id)))
    assert signed_in.page("/settings/api").status_code == 303
    assert signed_in.session_data().get("session") is None


def test_names_are_shown_as_text_never_as_markup(signed_in):
    signed_in.generated_key('<script>alert("x")</script>')
    page = signed_in.page("/settings/api").get_data(as_text=True)
    assert '<script>alert("x")</script>' not in page
    assert "&lt;script&gt;" in page
