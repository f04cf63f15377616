"""The address in headless Chromium, on a laptop and on a phone: values the queries view cannot
use are named in a sentence, a page past the end leads to the last page, and signing in with
another organization's key lands on that key's projects, not on the last project used."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import assert_no_sideways_scroll, make_org

pytestmark = pytest.mark.browser

SIZES = ["laptop", "phone"]


@pytest.fixture(scope="module")
def orgs(live_dashboard):
    """Two organizations: one with 60 queries (two pages of 50), one with two projects (a
    key of a single project's organization goes straight to that project)."""
    first = make_org(live_dashboard, "Address e2e", {
        "Boots": [(f"wanderschuhe {i:02d}", "de", "CH", ["brand"] if i < 3 else [])
                  for i in range(60)]})
    second = make_org(live_dashboard, "Address e2e, second", {
        "Coats": [("wintermantel", "de", "AT", [])], "Hats": [("sonnenhut", "de", "AT", [])]})
    return first, second


def a_page(request, size: str):
    return request.getfixturevalue("page" if size == "laptop" else "phone")


@pytest.mark.parametrize("size", SIZES)
def test_unusable_values_are_named_and_a_page_past_the_end_leads_to_the_last(
        request, live_dashboard, orgs, size):
    page = a_page(request, size)
    first, _ = orgs
    url = live_dashboard.url
    sign_in(page, url, first.key)
    open_project(page, url, first.projects["Boots"],
                 "?lang=zz&tag=nosuchtag&sort=bogus&page=99999")

    # Without the unusable values the view holds all 60 queries: page 2 is its last. Both
    # sentences are notices of the page after the redirect.
    expect(page).to_have_url(re.compile(r"[?&]page=2(&|$)"))
    notices = page.get_by_role("status")
    expect(notices.filter(has_text="There is no page 99,999")).to_have_text(
        "There is no page 99,999 of this view: here is its last page, 2.")
    expect(notices.filter(has_text="Ignored from the address")).to_have_text(
        "Ignored from the address: sort “bogus” (sort by query, language, country or updated, "
        "with a leading - for descending); language “zz” (no such language code); "
        "tag “nosuchtag” (no such tag in this project).")
    expect(page.locator(".pagination__where").first).to_have_text("Page 2 of 2")
    expect(page.get_by_role("checkbox", name=re.compile(r"^Select wanderschuhe"))).to_have_count(10)
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []

    # The pager reads sensibly from there: Previous leads to page 1.
    page.get_by_role("link", name=re.compile(r"Previous")).first.click()
    expect(page.locator(".pagination__where").first).to_have_text("Page 1 of 2")
    expect(page.get_by_role("checkbox", name=re.compile(r"^Select wanderschuhe"))).to_have_count(50)


@pytest.mark.parametrize("size", SIZES)
def test_signing_in_with_another_key_lands_on_its_projects(request, live_dashboard, orgs, size):
    page = a_page(request, size)
    first, second = orgs
    url = live_dashboard.url
    sign_in(page, url, first.key)
    open_project(page, url, first.projects["Boots"], "?q=wanderschuhe")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()

    sign_in(page, url, second.key)
    expect(page).to_have_url(f"{url}/projects")
    expect(page.get_by_role("link", name="Coats")).to_be_visible()
    expect(page.get_by_role("link", name="Hats")).to_be_visible()
    expect(page.get_by_role("link", name="Boots")).to_have_count(0)
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []

    # The previous organization's project, asked for by its address, is not opened.
    page.goto(f"{url}/projects/{first.projects['Boots']}/queries")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_have_count(0)
    assert "wanderschuhe" not in page.content()
