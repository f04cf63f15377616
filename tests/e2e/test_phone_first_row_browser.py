"""The queries page on a phone (390 × 844): the first result is on the first screen, the
filters and saved views one tap away behind a "Filters" disclosure button (its state in
aria-expanded, the number of filters in use in its name, operable by keyboard); on a laptop
(1280 px) the filters and saved views are shown as ever, with no such button. In Add tags, a
tag with a description shows its whole name, its description below it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import (
    LAPTOP,
    PHONE,
    WAIT_MS,
    assert_no_sideways_scroll,
    csp_errors,
    make_org,
)

pytestmark = pytest.mark.browser

ROWS = [(f"velo zürich {i:02d}", "de", "CH", ["local"] if i % 2 else []) for i in range(12)] + [
    (f"bike hamburg {i:02d}", "en", "DE", []) for i in range(6)]
LONG_TAG = "Test & Validation"
DESCRIPTION = "Queries we use to check that the search answers as it should."
VIEW = "?q=velo&lang=de&sort=query"  # two filters in use: the search and a language


@pytest.fixture(scope="module")
def org(live_dashboard):
    org = make_org(live_dashboard, "Phone first row e2e", {"Rows": ROWS})
    project = org.projects["Rows"]
    with org.api() as api:
        tag = api.create_tag(project, LONG_TAG, "#2c7a7b")
        api.update_tag(project, tag.id, description=DESCRIPTION)
        for name, filters in (("Zürich", QueryFilters(text="zürich")),
                              ("German", QueryFilters(languages=("de",))),
                              ("Untagged velo", QueryFilters(text="velo", untagged=True))):
            api.create_view(project, name, filters)
    return org


def toggle(page):
    return page.get_by_role("button", name=re.compile(r"^Filters\b"))


def test_the_first_row_is_on_a_phones_first_screen(phone, live_dashboard, org,
                                                   screenshots):
    page = phone
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, org.projects["Rows"], VIEW)
    first = page.locator("tr[data-row]").first
    expect(first).to_contain_text("velo zürich 00")
    page.screenshot(path=screenshots / "queries-phone-first-screen.png")
    box = first.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
    assert page.evaluate("window.scrollY") == 0

    # The filters and saved views: one tap away, their button saying how many filters apply.
    button = toggle(page)
    expect(button).to_have_accessible_name("Filters (2)")
    expect(button).to_have_attribute("aria-expanded", "false")
    search = page.get_by_label("Search queries")
    saved = page.get_by_role("heading", name="Saved views")
    expect(search).to_be_hidden()
    expect(saved).to_be_hidden()
    button.tap()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(search).to_be_visible()
    expect(saved).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^Zürich"))).to_be_visible()
    assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / "queries-phone-filters-open.png", full_page=True)
    assert axe_serious(page) == []

    # A filter chosen from there: the rows follow, the button counts it.
    page.locator("summary.picker__summary", has_text="Tags").tap()
    page.locator('details[data-picker][open] input[data-include][value="local"]').check()
    page.wait_for_url(re.compile(r"tag=local"))
    expect(page.locator("tr[data-row]").first).to_contain_text("velo zürich 01")
    expect(button).to_have_accessible_name("Filters (3)")

    # By keyboard: the button closes and opens them again.
    button.focus()
    page.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-expanded", "false")
    expect(search).to_be_hidden()
    page.keyboard.press("Space")
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(search).to_be_visible()
    # Folded, "/" unfolds them to search.
    page.keyboard.press("Enter")
    expect(search).to_be_hidden()
    page.keyboard.press("/")
    expect(search).to_be_focused()
    expect(button).to_have_attribute("aria-expanded", "true")
    assert csp_errors(page) == []


def test_the_laptop_shows_the_filters_as_ever(page, live_dashboard, org, screenshots):
    page.set_viewport_size(LAPTOP)
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, org.projects["Rows"], VIEW)
    expect(toggle(page)).to_be_hidden()
    expect(page.get_by_label("Search queries")).to_be_visible()
    expect(page.get_by_role("heading", name="Saved views")).to_be_visible()
    # The filters stay above the saved views, the saved views above the results.
    filters = page.locator("#filters").bounding_box()
    saved = page.locator("#saved-views").bounding_box()
    results = page.locator("#results").bounding_box()
    assert filters["y"] + filters["height"] <= saved["y"] <= results["y"]
    page.screenshot(path=screenshots / "queries-laptop-filters.png")
    assert axe_serious(page) == []


@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_add_tags_shows_a_described_tags_whole_name(browser, live_dashboard, org, size,
                                                   screenshots):
    touch = size == PHONE
    context = browser.new_context(viewport=size, is_mobile=touch, has_touch=touch)
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        sign_in(page, live_dashboard.url, org.key)
        open_project(page, live_dashboard.url, org.projects["Rows"], VIEW)
        page.get_by_role("button", name="Edit tags of velo zürich 00").click()
        dialog = page.get_by_role("dialog")
        box = dialog.get_by_role("checkbox", name=LONG_TAG, exact=True)
        expect(box).to_have_accessible_description(DESCRIPTION)
        option = dialog.locator("label.option", has=page.get_by_role(
            "checkbox", name=LONG_TAG, exact=True))
        chip = option.locator(".chip")
        expect(chip).to_have_text(LONG_TAG)
        assert chip.evaluate("chip => chip.scrollWidth <= chip.clientWidth"), "name cut short"
        about = option.locator(".option__description")
        chip_box, about_box = chip.bounding_box(), about.bounding_box()
        assert about_box["y"] >= chip_box["y"] + chip_box["height"] - 1, (chip_box, about_box)
        assert about_box["x"] <= chip_box["x"] + 1  # under the name, not beside it
        page.screenshot(path=screenshots / f"add-tags-description-{size['width']}.png")
        assert_no_sideways_scroll(page)
        assert axe_serious(page) == []
    finally:
        context.close()
