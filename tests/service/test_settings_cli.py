"""The settings area's command line (create-user; create-key --project; key actions recorded),
its signing key, and its tables as migrated."""

from __future__ import annotations

import os
import re
import secrets
import stat

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, select
from werkzeug.security import check_password_hash

from service import create_app
from service.config import load_config
from service.settings.secret import SECRET_KEY_FILE, instance_secret_key
from service.settings.throttle import SignInThrottle
from service.store.models import Base, KeyEvent, User
from tests.service.commands import command_line, last_line
from tests.support.api import Api

PASSWORD = "a long enough password"


@pytest.fixture
def cli(service_app):
    return command_line(service_app)


def test_create_user_reads_the_password_from_standard_input(cli, world):
    result = cli("create-user", world.org_id, "  Carla@Example.COM ", input=PASSWORD + "\n")
    user_id = int(last_line(result))
    user = world.run(lambda s: s.get(User, user_id))
    assert (user.org_id, user.email) == (world.org_id, "carla@example.com")
    assert user.password_hash.startswith("scrypt:")
    assert check_password_hash(user.password_hash, PASSWORD)
    assert PASSWORD not in result.output


def test_create_user_asks_for_the_password_at_a_terminal(cli, world, monkeypatch):
    asked = []

    def prompt(text, **kwargs):
        asked.append((text, kwargs))
        return PASSWORD

    monkeypatch.setattr("service.cli._stdin_is_terminal", lambda: True)
    monkeypatch.setattr("click.prompt", prompt)
    user_id = int(last_line(cli("create-user", world.org_id, "dana@example.com")))
    assert asked == [("Password", {"hide_input": True, "confirmation_prompt": True})]
    assert world.run(lambda s: s.get(User, user_id)).email == "dana@example.com"


@pytest.mark.parametrize("org,email,password,message", [
    ("00000000-0000-4000-8000-000000000000", "a@example.com", PASSWORD, "No organization"),
    (None, "not-an-email", PASSWORD, "is not an email address"),
    (None, "a@example.com", "short", "at least 12 characters"),
    (None, "a@example.com", " " * 20, "only spaces"),
    (None, "a@example.com", "", "at least 12 characters"),
])
def test_create_user_refuses_with_a_sentence(cli, world, org, email, password, message):
    result = cli("create-user", org or world.org_id, email, input=password + "\n", ok=False)
    assert result.exit_code != 0
    assert message in result.output and "Traceback" not in result.output
    assert world.run(lambda s: s.query(User).count()) == 0


def test_one_account_per_email_whatever_its_case(cli, world):
    cli("create-user", world.org_id, "erin@example.com", input=PASSWORD + "\n")
    other_org, _, _ = world.new_org()
    result = cli("create-user", other_org, "ERIN@example.com", input=PASSWORD + "\n", ok=False)
    assert "There is already an account for erin@example.com" in result.output


def test_create_key_with_project_and_revoke_key_are_recorded(cli, world, live_service):
    key = last_line(cli("create-key", world.org_id, "--project", world.project_id,
                        "--name", "Shop robot"))
    api = Api(live_service.url, key, world.other_project_id)
    assert [p["id"] for p in api.projects().json()["results"]] == [world.project_id]
    assert api.queries().status_code == 404
    cli("revoke-key", key)
    assert api.projects().status_code == 401
    recorded = world.run(lambda s: list(s.scalars(select(KeyEvent).order_by(KeyEvent.id))))
    assert [(e.action, e.user_id, e.key_last_four, e.key_name) for e in recorded] == [
        ("generated", None, key[-4:], "Shop robot"), ("revoked", None, key[-4:], "Shop robot")]


def test_create_key_for_another_organizations_project_is_refused(cli, world):
    _, _, their_project = world.new_org()
    result = cli("create-key", world.org_id, "--project", their_project, ok=False)
    assert "No project" in result.output
    assert world.run(lambda s: s.query(KeyEvent).count()) == 0


# --- the session's signing key ----------------------------------------------------------------


def test_the_secret_key_is_generated_once_into_the_instance_folder(tmp_path):
    folder = tmp_path / "instance"
    first = instance_secret_key(str(folder))
    assert len(first) == 64
    assert instance_secret_key(str(folder)) == first
    mode = stat.S_IMODE(os.stat(folder / SECRET_KEY_FILE).st_mode)
    assert mode == 0o600
    assert [p.name for p in folder.iterdir()] == [SECRET_KEY_FILE]  # no temporary left


def test_a_deployment_signs_with_the_instance_key_or_the_environments(service_config,
                                                                       tmp_path, monkeypatch):
    app = create_app({**service_config, "TESTING": False})
    app.instance_path = str(tmp_path)
    assert app.test_client().get("/settings/signin").status_code == 200
    assert app.secret_key == (tmp_path / SECRET_KEY_FILE).read_text().strip()
    app.extensions["tagdesk_engine"].dispose()

    monkeypatch.setenv("TAGDESK_SERVICE_SECRET_KEY", "from-the-environment")
    assert load_config(str(tmp_path))["SECRET_KEY"] == "from-the-environment"


def test_the_command_line_needs_no_secret_key(cli, world, service_app):
    cli("create-key", world.org_id)
    assert not service_app.config["SECRET_KEY"]


# --- the migration ----------------------------------------------------------------------------


def test_migration_0003_creates_exactly_the_models_tables(database_url):
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection)
            differences = compare_metadata(context, Base.metadata)
        mine = [d for d in differences if "users" in repr(d) or "key_events" in repr(d)]
        assert mine == []
    finally:
        engine.dispose()


# --- an unreachable database ------------------------------------------------------------------


def test_an_unreachable_database_is_a_calm_page_in_settings(tmp_path):
    app = create_app({"TESTING": True,
                      "DATABASE_URL": f"sqlite:///{tmp_path}/not-yet/db.sqlite3"})
    try:
        client = app.test_client()
        page = client.get("/settings/signin").get_data(as_text=True)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        response = client.post("/settings/signin", data={
            "csrf_token": token, "email": "a@example.com", "password": PASSWORD})
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "30"
        assert response.content_type.startswith("text/html")
        assert "Temporarily unavailable" in response.get_data(as_text=True)
        api = client.get("/api/projects/list", headers={"x-api-key": "tdk_live_x"})
        assert api.status_code == 503 and api.is_json
    finally:
        app.extensions["tagdesk_engine"].dispose()


# --- the sign-in throttle on Redis ------------------------------------------------------------


@pytest.mark.redis
def test_the_sign_in_throttle_is_shared_through_redis():
    """Two service processes (two throttles on one Redis) count the same attempts."""
    from tests.support.databases import REDIS_URL

    email = f"{secrets.token_hex(6)}@example.com"
    first, second = (SignInThrottle(REDIS_URL, "3/minute", "3/minute") for _ in range(2))
    assert [first.attempt("10.1.1.1", email), second.attempt("10.1.1.2", email),
            first.attempt("10.1.1.3", email)] == [0, 0, 0]
    assert 1 <= second.attempt("10.1.1.4", email) <= 60
