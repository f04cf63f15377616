"""Clicking the text of a filter picker's option — not its checkbox — in headless Chromium:
the tab lives on (it crashed, 5 of 5, when the picker closed between the press and the
click), the option is ticked and the results follow. Every picker kind (language, country,
tag), at 1280 px and at 390 px; the API is the ground truth for the count."""

from __future__ import annotations

import re
from urllib.parse import quote_plus

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.e2e.test_browser import open_shop, shop_id
from tests.support.e2e import csp_errors, show_filters

pytestmark = pytest.mark.browser

KINDS = {"Language": ("lang", "languages"), "Country": ("country", "countries"),
         "Tags": ("tag", "tag_names")}


def first_option(page, picker, title: str):
    """The picker's first option of this project (not the long tail of every code), or its
    first tag."""
    if title == "Tags":
        return picker.locator("label.option").filter(
            has=page.locator('input[name="tag"]')).first
    return picker.get_by_role("group", name="In this project").locator("label.option").first


def click_option_text(page, title: str):
    """Open the picker `title` and press the mouse on its first option of this project, at
    the right of its label (away from the checkbox and the text's start). Its checkbox."""
    crashed = []
    page.on("crash", lambda _page: crashed.append(True))
    show_filters(page)
    page.locator("summary.picker__summary", has_text=title).click()
    picker = page.locator("details[data-picker][open]")
    expect(picker).to_have_count(1)
    option = first_option(page, picker, title)
    box = option.bounding_box()
    width = page.viewport_size["width"]
    right = min(box["x"] + box["width"], width) - 8
    assert right - box["x"] > 60, box  # away from the checkbox at the label's start
    page.mouse.click(right, box["y"] + box["height"] / 2)
    assert crashed == []
    return option.locator("input[type=checkbox]")


@pytest.mark.parametrize("title", list(KINDS))
@pytest.mark.parametrize("width", [1280, 390])
def test_clicking_an_options_text_ticks_it_and_the_tab_lives(page, live_dashboard, title,
                                                              width):
    page.set_viewport_size({"width": width, "height": 860})
    open_shop(page, live_dashboard)
    box = click_option_text(page, title)

    # The tab is alive: a script runs, the title is read.
    assert page.evaluate("1 + 1") == 2
    assert "Queries" in page.title()
    expect(box).to_be_checked()
    value = box.get_attribute("value")
    name, field = KINDS[title]
    expect(page).to_have_url(re.compile(rf"[?&]{name}={re.escape(quote_plus(value))}(&|$)"))
    expect(page.locator("#results .filter-chip")).to_have_count(1)
    with live_dashboard.api() as api:
        total = api.list_queries(shop_id(live_dashboard), QueryFilters(**{field: (value,)}),
                                 limit=1).page.total_records
    expect(page.locator(".results__count")).to_contain_text(f"of {total:,} quer"
                                                            if total > 50 else f"{total:,} quer")
    # The picker stays open for a next choice, its count says one.
    expect(page.locator("details[data-picker][open] [data-picker-count]")).to_have_text(
        re.compile(r"^1\b"))
    assert csp_errors(page) == []


@pytest.mark.parametrize("title", list(KINDS))
def test_tapping_an_options_text_on_a_phone(phone, live_dashboard, title):
    page = phone
    crashed = []
    page.on("crash", lambda _page: crashed.append(True))
    open_shop(page, live_dashboard)
    show_filters(page)
    page.locator("summary.picker__summary", has_text=title).tap()
    picker = page.locator("details[data-picker][open]")
    option = first_option(page, picker, title)
    box = option.bounding_box()
    page.touchscreen.tap(min(box["x"] + box["width"], 390) - 8, box["y"] + box["height"] / 2)
    assert crashed == []
    assert page.evaluate("1 + 1") == 2
    checkbox = option.locator("input[type=checkbox]")
    expect(checkbox).to_be_checked()
    name = KINDS[title][0]
    expect(page).to_have_url(re.compile(
        rf"[?&]{name}={re.escape(quote_plus(checkbox.get_attribute('value')))}(&|$)"))
