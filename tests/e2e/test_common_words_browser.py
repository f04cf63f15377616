"""The Common words panel in headless Chromium, on a laptop and on a phone: opened by mouse
(or touch) and by the keyboard alone, it lists the view's words and phrases with their
counts; a word's link shows that many queries, and from there "Make a rule from this view"
starts a rule searching for it. No serious accessibility violation, no sideways scrolling."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import assert_no_sideways_scroll, make_org

pytestmark = pytest.mark.browser

SIZES = ["laptop", "phone"]
ROWS = [
    *[(f"waterproof hiking boots {i:02d}", "en", "US", []) for i in range(12)],
    *[(f"trail running shoes for kids {i:02d}", "en", "GB", ["brand"] if i < 3 else [])
      for i in range(7)],
    ("wanderschuhe für damen", "de", "DE", []),
]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Common words e2e", {"Words": ROWS})


def a_page(request, size: str):
    return request.getfixturevalue("page" if size == "laptop" else "phone")


def word_link(page, text: str):
    return page.locator(".common-words__list li").filter(
        has=page.get_by_role("link", name=text, exact=True))


@pytest.mark.parametrize("size", SIZES)
def test_the_words_of_the_view_lead_to_a_rule(request, live_dashboard, org, size):
    page = a_page(request, size)
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Words"], "?untagged=1")

    summary = page.locator("summary", has_text="Common words")
    expect(summary).to_be_visible()
    if size == "laptop":
        summary.click()
    else:
        summary.tap()
    boots = word_link(page, "boots")
    expect(boots.locator(".common-words__count")).to_have_text("12")
    # 17 untagged queries: the boots' 12 and four of the shoes; "for" is a stop word.
    expect(page.locator(".common-words__lead")).to_contain_text("17 queries")
    expect(word_link(page, "running shoes").locator(".common-words__count")).to_have_text("4")
    expect(page.get_by_role("link", name="for", exact=True)).to_have_count(0)
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []

    page.get_by_role("link", name="running shoes", exact=True).click()
    expect(page).to_have_url(re.compile(r"\?q=running\+shoes&untagged=1$"))
    expect(page.get_by_role("checkbox", name=re.compile(r"^Select trail running"))
           ).to_have_count(4)
    page.get_by_role("link", name="Make a rule from this view").click()
    expect(page).to_have_url(re.compile(r"/rules/new\?q=running\+shoes&untagged=1$"))


@pytest.mark.parametrize("size", SIZES)
def test_the_panel_opens_by_keyboard_alone(request, live_dashboard, org, size):
    page = a_page(request, size)
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Words"], "?lang=de")
    summary = page.locator("summary", has_text="Common words")
    summary.focus()
    page.keyboard.press("Enter")
    # One query, two words of one each: by text, "damen" first.
    link = page.get_by_role("link", name="damen", exact=True)
    expect(link).to_be_visible()
    page.keyboard.press("Tab")
    expect(link).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"\?q=damen&lang=de$"))
    expect(page.get_by_role("checkbox", name="Select wanderschuhe für damen")).to_have_count(1)
    assert axe_serious(page) == []
