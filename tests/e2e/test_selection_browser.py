"""The bulk flow in headless Chromium as a person meets it: taking every tag off is asked
first, the selection stays through Apply and Undo and its end on another page is said out
loud, and Undo is within reach of the keyboard after Apply.

The API is the ground truth; the tests work in an organization of their own."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import (
    dialog_of,
    open_project,
    pick_tags,
    row,
    sign_in,
    snapshot,
)
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"gummistiefel {i:02d}", "de", "DE", ["sale", "local"] if i % 2 else ["brand"])
        for i in range(30)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Selection e2e", {"Rows": ROWS})


def tick(page, *texts: str) -> None:
    for text in texts:
        page.get_by_role("checkbox", name=f"Select {text}", exact=True).check()


def selected(page):
    return page.locator("[data-selected-count]")


def test_replacing_with_no_tag_asks_first(page, live_dashboard, org, screenshots):
    url = live_dashboard.url
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, org.projects["Rows"], "?sort=query")
    before = snapshot(org, "Rows")
    targets = ("gummistiefel 00", "gummistiefel 01", "gummistiefel 02")
    tick(page, *targets)
    pick_tags(page, "Replace tags")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()

    dialog = dialog_of(page)
    expect(dialog.get_by_role("heading", name="Please confirm")).to_be_visible()
    expect(dialog).to_contain_text("Remove every tag from 3 queries?")
    confirm = dialog.get_by_role("button", name="Confirm")
    expect(confirm).to_be_focused()
    assert snapshot(org, "Rows") == before  # asked, not done
    page.screenshot(path=screenshots / "bulk-clear-confirm.png")
    assert axe_serious(page) == []

    # Cancel keeps everything; asking again and confirming clears exactly those rows.
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert snapshot(org, "Rows") == before
    pick_tags(page, "Replace tags")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    dialog_of(page).get_by_role("button", name="Confirm").click()
    expect(dialog_of(page)).to_be_hidden()
    for text in targets:
        expect(row(page, text).locator(".chip")).to_have_count(0)
    after = snapshot(org, "Rows")
    assert {q for q in after if after[q] != before[q]} == set(targets)
    assert all(after[text] == set() for text in targets)
    assert csp_errors(page) == []


def test_removing_every_tag_from_all_matching_asks_first(page, live_dashboard, org):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Rows"], "?size=25&sort=query")
    before = snapshot(org, "Rows")
    page.get_by_role("checkbox", name="Select all on this page").check()
    page.get_by_role("button", name="Select all 30 matching").click()
    pick_tags(page, "Remove tags", "brand", "sale", "local", "question", "seasonal")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(dialog_of(page)).to_contain_text("Remove every tag from 30 queries in this project?")
    expect(dialog_of(page).get_by_role("button", name="Confirm")).to_be_focused()
    assert axe_serious(page) == []
    dialog_of(page).get_by_role("button", name="Cancel").click()
    assert snapshot(org, "Rows") == before
