"""People, not keys, in headless Chromium: the header and the activity log name the person,
with the key's ending only as a detail; project cards and the tags page show query counts,
loaded after the page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import dialog_of, open_project, pick_tags, sign_in
from tests.support.e2e import make_org

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Names e2e", {
        "Boots": [(f"wanderschuhe {i:02d}", "de", "CH", ["brand"] if i < 3 else [])
                  for i in range(7)],
        "Coats": [(f"wintermantel {i}", "de", "CH", []) for i in range(2)]})


def test_the_person_is_named_and_the_key_is_a_detail(page, live_dashboard, org):
    url = live_dashboard.url
    ending = org.key[-4:]
    sign_in(page, url, org.key, "Ana Lima")
    header = page.locator(".site-header")
    expect(header.locator(".account__name")).to_have_text("Signed in as Ana Lima")
    expect(header.locator(".account__key")).to_have_text(f", with key …{ending}")
    assert org.key not in page.content()

    # Project cards: each project's queries and how many are untagged, after the page.
    expect(page.locator(f"#count-p-{org.projects['Boots']}")).to_contain_text(
        re.compile(r"^\s*\d of 7 queries untagged"))
    expect(page.locator(f"#count-p-{org.projects['Coats']}")).to_contain_text(
        re.compile(r"^\s*\d of 2 queries untagged"))
    assert axe_serious(page) == []

    open_project(page, url, org.projects["Boots"], "?sort=query")
    page.get_by_role("checkbox", name="Select wanderschuhe 05", exact=True).check()
    pick_tags(page, "Add tags", "sale")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(page.locator("#notices")).to_contain_text("Added ‘sale’ to 1 query.")

    page.get_by_role("link", name="Tags", exact=True).click()
    expect(page.locator(f"#count-t-{org.tags['Boots']['brand']}")).to_have_text("3 queries")
    expect(page.locator(f"#count-t-{org.tags['Boots']['sale']}")).to_have_text("1 query")
    expect(page.locator(f"#count-t-{org.tags['Boots']['local']}")).to_have_text("0 queries")

    page.get_by_role("link", name="Activity", exact=True).click()
    who = page.locator("tr[data-activity-row]").first.locator(".activity__who")
    expect(who).to_contain_text("Ana Lima")
    expect(who).to_contain_text(f"key …{ending}")
    assert axe_serious(page) == []


def test_without_a_name_the_key_ending_stands_for_the_person(page, live_dashboard, org):
    sign_in(page, live_dashboard.url, org.key)
    name = page.locator(".site-header .account__name")
    expect(name).to_have_text(f"Signed in as Key …{org.key[-4:]}")
    expect(page.locator(".site-header .account__key")).to_have_count(0)
