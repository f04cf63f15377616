"""The demo's administrator: made with the demo on first start (or on the next start of a demo
made before there was one), kept with a random password in the instance folder (mode 600) and
printed beside the demo key; it signs in to the settings at the dashboard's own address. Without
it the start-up text says how to make the first administrator."""

from __future__ import annotations

import os
import re
import stat

import pytest
from sqlalchemy import delete, select

import app as app_module
from app import create_app
from service.org import accounts
from service.store.db import session_scope
from service.store.models import Organization, User
from tests.support.dashboard import close_app, csrf_token

CREATE_USER = "uv run flask --app service create-user <org> <email>"


@pytest.fixture
def demo_app(dashboard_config):
    """A dashboard on an empty database: the first start seeds the demo."""
    app = create_app(dashboard_config)
    yield app
    close_app(app)


def service_run(app, operation):
    with session_scope(app.extensions["tagdesk_embedded"].service_app) as session:
        return operation(session)


def settings_sign_in(app, email: str, password: str):
    client = app.test_client()  # through the dashboard's own address (embedded mode)
    page = client.get("/settings/signin").get_data(as_text=True)
    return client.post("/settings/signin", data={"csrf_token": csrf_token(page),
                                                   "email": email, "password": password})


def banner(config, monkeypatch, capsys) -> str:
    """The start-up text of a dashboard started by `flask run` with this configuration."""
    monkeypatch.setattr(app_module, "_announced", False)
    monkeypatch.setenv("FLASK_RUN_FROM_CLI", "true")
    monkeypatch.setenv("FLASK_RUN_PORT", "0")  # not checked: no port is taken
    monkeypatch.setattr(app_module, "_port_problem", lambda host, port: None)
    app = create_app({key: value for key, value in config.items() if key != "TESTING"})
    close_app(app)
    return capsys.readouterr().err


def test_the_first_start_makes_the_demos_administrator(demo_app):
    email, password = demo_app.config["DEMO_ADMIN"]
    assert email == "admin@demo.example" and len(password) >= 12
    path = demo_app.extensions["tagdesk_embedded"].kept_file("demo-admin")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path, encoding="utf-8") as kept:
        assert kept.read() == f"{email}\n{password}\n"

    response = settings_sign_in(demo_app, email, password)
    assert (response.status_code, response.headers["Location"]) == (303, "/settings/api")
    client = demo_app.test_client()
    assert password not in client.get("/signin").get_data(as_text=True)


def test_a_second_start_keeps_the_same_administrator(dashboard_config, demo_app):
    again = create_app(dashboard_config)
    try:
        assert again.config["DEMO_ADMIN"] == demo_app.config["DEMO_ADMIN"]
        assert service_run(again, lambda s: s.query(User).count()) == 1
    finally:
        close_app(again)


def test_a_demo_made_before_there_was_an_administrator_gets_one(dashboard_config, demo_app):
    service_run(demo_app, lambda s: s.execute(delete(User)))
    os.remove(demo_app.extensions["tagdesk_embedded"].kept_file("demo-admin"))
    again = create_app(dashboard_config)
    try:
        email, password = again.config["DEMO_ADMIN"]
        assert email == "admin@demo.example"
        assert password != demo_app.config["DEMO_ADMIN"][1]
        assert settings_sign_in(again, email, password).status_code == 303
    finally:
        close_app(again)


def test_a_demo_seeded_again_on_an_emptied_database_gets_an_administrator(dashboard_config,
                                                                          demo_app):
    """The database emptied to start the demo over, the instance folder kept: the new demo has
    an administrator of its own. The old demo's file stayed, so none was made, and the start-up
    text said to make the first one by hand."""
    old = demo_app.config["DEMO_ADMIN"]
    service_run(demo_app, lambda s: s.execute(delete(Organization)))
    assert service_run(demo_app, lambda s: s.query(User).count()) == 0
    again = create_app(dashboard_config)
    try:
        email, password = again.config["DEMO_ADMIN"]
        assert email == "admin@demo.example" and password != old[1]
        assert settings_sign_in(again, email, password).status_code == 303
        path = again.extensions["tagdesk_embedded"].kept_file("demo-admin")
        with open(path, encoding="utf-8") as kept:
            assert kept.read() == f"{email}\n{password}\n"
    finally:
        close_app(again)


def test_a_removed_demo_administrator_is_neither_printed_nor_made_again(
        dashboard_config, demo_app, monkeypatch, capsys):
    email, _ = demo_app.config["DEMO_ADMIN"]

    def replace(session):
        org_id = session.scalar(select(User.org_id).where(User.email == email))
        accounts.create_user(session, org_id, "someone@example.com", "a long enough password")
        session.execute(delete(User).where(User.email == email))

    service_run(demo_app, replace)
    printed = banner(dashboard_config, monkeypatch, capsys)
    assert "Demo key: tdk_live_" in printed
    assert "Demo administrator" not in printed and email not in printed
    assert f"Another administrator: {CREATE_USER}" in printed
    assert service_run(demo_app, lambda s: [u.email for u in s.scalars(select(User))]) == [
        "someone@example.com"]


def test_the_demos_banner_names_the_settings_and_its_administrator(
        dashboard_config, demo_app, monkeypatch, capsys):
    email, password = demo_app.config["DEMO_ADMIN"]
    printed = banner(dashboard_config, monkeypatch, capsys)
    assert re.search(r"^Settings: http://127\.0\.0\.1:0/settings/$", printed, re.M)
    assert f"\nDemo administrator: {email}, password: {password}\n" in printed
    assert printed.index("Demo key: ") < printed.index("Demo administrator: ")
    assert f"Another administrator: {CREATE_USER}" in printed


def test_without_a_demo_the_banner_says_how_to_make_the_first_administrator(
        shop, dashboard_config, monkeypatch, capsys):
    printed = banner(dashboard_config, monkeypatch, capsys)
    assert "Settings: http://127.0.0.1:0/settings/\n" in printed
    assert f"First administrator: {CREATE_USER}\n" in printed
    assert "Demo key" not in printed and "Demo administrator" not in printed


def test_with_an_api_address_the_banner_names_the_settings_only_when_configured(
        shop, live_service, dashboard_config, monkeypatch, capsys):
    config = {**dashboard_config, "API_URL": live_service.url}
    printed = banner(config, monkeypatch, capsys)
    assert f"API: {live_service.url}\n" in printed
    assert "Settings" not in printed and "administrator" not in printed
    printed = banner({**config, "SETTINGS_URL": "https://admin.example/settings/"},
                     monkeypatch, capsys)
    assert "Settings: https://admin.example/settings/\n" in printed
