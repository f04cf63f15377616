"""From the dashboard to the organization settings and back, in headless Chromium, on the live
embedded dashboard (the demo): the header's "Settings" and "Dashboard" links, each side signed
in on its own (the demo key; the demo's administrator)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.support.e2e import csp_errors

pytestmark = pytest.mark.browser


def test_from_the_dashboard_to_the_settings_and_back(page, live_dashboard, screenshots):
    dashboard = live_dashboard
    email, password = dashboard.app.config["DEMO_ADMIN"]

    page.goto(dashboard.url + "/signin")
    page.get_by_role("button", name="Use the demo key").click()
    page.wait_for_url(f"{dashboard.url}/projects")
    header = page.get_by_role("banner")
    expect(header.get_by_role("link", name="Settings")).to_have_attribute("href", "/settings/")
    page.screenshot(path=screenshots / "dashboard-settings-link.png")
    assert axe_serious(page) == []

    header.get_by_role("link", name="Settings").click()
    expect(page).to_have_url(f"{dashboard.url}/settings/signin")
    expect(page.get_by_role("heading", name="Organization settings")).to_be_visible()
    expect(page.get_by_role("banner").get_by_role("link", name="Dashboard")).to_be_visible()
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{dashboard.url}/settings/api")
    expect(page.get_by_role("banner")).to_contain_text(email)
    page.screenshot(path=screenshots / "settings-dashboard-link.png")
    assert axe_serious(page) == []

    page.get_by_role("banner").get_by_role("link", name="Dashboard").click()
    expect(page).to_have_url(re.compile(re.escape(dashboard.url) + r"/projects$"))
    expect(page.get_by_role("heading", name="Projects", level=1)).to_be_visible()
    # Each side keeps its own sign-in: back in the settings, still signed in.
    page.get_by_role("banner").get_by_role("link", name="Settings").click()
    expect(page).to_have_url(f"{dashboard.url}/settings/api")
    assert csp_errors(page) == []
