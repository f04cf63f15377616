"""The settings area on a phone (390 px, touch): every page fits the screen, with a key, a
project with tags, a person and activity to show, and axe finds nothing serious."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, cut_words, settings_sign_in

pytestmark = pytest.mark.browser


def test_every_settings_page_fits_a_phone(phone, site, screenshots):
    world = site.world
    settings_sign_in(phone, site.url + "/settings/api")
    expect(phone.get_by_role("heading", name="API keys")).to_be_visible()
    # A key with a long name, so the keys table has a wide row to fit.
    phone.get_by_role("link", name="Generate key").click()
    phone.get_by_label("Name").fill("Keyword research team, laptop in the meeting room")
    phone.get_by_role("button", name="Generate key").click()
    expect(phone.get_by_role("heading", name="Your new API key")).to_be_visible()
    phone.wait_for_load_state()  # its stylesheets applied
    assert_no_sideways_scroll(phone)

    pages = ["/settings/api", "/settings/projects", f"/settings/projects/{world.project_id}",
             "/settings/people", "/settings/people/add", "/settings/activity"]
    for path in pages:
        phone.goto(site.url + path)
        expect(phone.get_by_role("heading", level=1)).to_be_visible()
        assert_no_sideways_scroll(phone)
        # Words wrap whole: an email, "generated" or a tab's name is never cut in two.
        assert cut_words(phone, "main td, main th, .site-nav") == [], path
        # Every table fits too: none scrolls sideways in its box.
        boxes = phone.locator(".table-wrap").evaluate_all(
            "boxes => boxes.filter(box => box.scrollWidth > box.clientWidth).length")
        assert boxes == 0, path
        place = phone.locator(".site-nav__place")  # the organization's whole name
        assert place.evaluate("e => e.scrollWidth <= e.clientWidth"), path
        assert axe_serious(phone) == [], path
        name = "-".join(path.split("/")[2:4]).replace(world.project_id, "project")
        phone.screenshot(path=screenshots / f"settings-phone-{name}.png", full_page=True)
    assert csp_errors(phone) == []
