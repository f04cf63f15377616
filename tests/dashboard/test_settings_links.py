"""Links both ways between the dashboard and the organization settings: the dashboard's
header offers "Settings" (its own /settings/ in embedded mode; with TAGDESK_API_URL only when
TAGDESK_SETTINGS_URL says where), and the settings' header offers "Dashboard" (`/` in embedded
mode; a service of its own only with TAGDESK_DASHBOARD_URL: tests/service/test_dashboard_link.py).
"""

from __future__ import annotations

import re

import pytest

import app as app_module
from app import create_app
from tests.support.dashboard import close_app

SWITCH = re.compile(r'<a class="site-switch" href="([^"]*)"[^>]*>([^<]+)</a>')


def switches(html: str) -> list[tuple[str, str]]:
    return SWITCH.findall(html)


def test_the_embedded_dashboard_and_its_settings_link_to_each_other(app, auth):
    client = auth.client
    assert switches(client.get("/signin").get_data(as_text=True)) == [("/settings/", "Settings")]
    auth.sign_in()
    projects = client.get("/projects").get_data(as_text=True)
    assert switches(projects) == [("/settings/", "Settings")]
    assert projects.index('class="site-switch"') < projects.index('class="account"')
    queries = client.get(f"/projects/{auth.world.project_id}/queries").get_data(as_text=True)
    assert switches(queries) == [("/settings/", "Settings")]

    # The link leads to the settings (served by the embedded service), which link back.
    settings = client.get("/settings/", follow_redirects=True)
    assert settings.request.path == "/settings/signin"
    assert switches(settings.get_data(as_text=True)) == [("/", "Dashboard")]


@pytest.fixture
def external(dashboard_config, shop):
    """Dashboards talking to an API at another address (none answers: no page here asks)."""
    made = []

    def make(**config):
        app = create_app({**dashboard_config, "API_URL": "http://127.0.0.1:9", **config})
        made.append(app)
        return app.test_client()

    yield make
    for app in made:
        close_app(app)


def test_with_an_api_address_settings_are_linked_only_when_their_address_is_set(
        external, monkeypatch):
    assert switches(external().get("/signin").get_data(as_text=True)) == []
    configured = external(SETTINGS_URL="https://admin.example/settings/")
    assert switches(configured.get("/signin").get_data(as_text=True)) == [
        ("https://admin.example/settings/", "Settings")]


def test_tagdesk_settings_url_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("TAGDESK_SETTINGS_URL", " https://admin.example/settings/ ")
    assert app_module.default_config()["SETTINGS_URL"] == "https://admin.example/settings/"
    monkeypatch.setenv("TAGDESK_SETTINGS_URL", "")
    assert app_module.default_config()["SETTINGS_URL"] is None
