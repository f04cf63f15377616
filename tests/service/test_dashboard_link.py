"""The settings area's header links to the dashboard when it knows where that is: a service of
its own only with TAGDESK_DASHBOARD_URL (embedded mode, where it is `/`:
tests/dashboard/test_settings_links.py)."""

from __future__ import annotations

import re

from service import create_app
from service.config import load_config

SWITCH = re.compile(r'<a class="site-switch" href="([^"]*)"[^>]*>([^<]+)</a>')
EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"


def signed_in_page(app, world) -> str:
    world.with_administrator(EMAIL, PASSWORD)
    client = app.test_client()
    page = client.get("/settings/signin").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)[1]
    client.post("/settings/signin", data={"csrf_token": token, "email": EMAIL,
                                          "password": PASSWORD})
    return client.get("/settings/people").get_data(as_text=True)


def test_a_service_of_its_own_links_to_no_dashboard(service_app, world):
    assert SWITCH.findall(service_app.test_client().get("/settings/signin")
                          .get_data(as_text=True)) == []
    assert SWITCH.findall(signed_in_page(service_app, world)) == []


def test_with_tagdesk_dashboard_url_it_links_there(service_config, world):
    app = create_app({**service_config, "DASHBOARD_URL": "https://tagdesk.example/"})
    try:
        expected = [("https://tagdesk.example/", "Dashboard")]
        assert SWITCH.findall(app.test_client().get("/settings/signin")
                              .get_data(as_text=True)) == expected
        assert SWITCH.findall(signed_in_page(app, world)) == expected
    finally:
        app.extensions["tagdesk_engine"].dispose()


def test_tagdesk_dashboard_url_is_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TAGDESK_DASHBOARD_URL", "https://tagdesk.example/ ")
    assert load_config(str(tmp_path))["DASHBOARD_URL"] == "https://tagdesk.example/"
    monkeypatch.delenv("TAGDESK_DASHBOARD_URL")
    assert load_config(str(tmp_path))["DASHBOARD_URL"] is None
