"""Undo on the Activity page, by keyboard, at 1280 and 390 px: the undo's row comes first in
the list without a reload, follows its job to the end (Done, and the number of queries it
changed), and the focus is on its status instead of the top of the page. In headless
Chromium; the API is the ground truth."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_bulk_browser import apply, open_rows, pick_tags, snapshot, tick
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"bergschuhe {i:02d}", "de", "AT", ["local"] if i % 3 == 0 else [])
        for i in range(8)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Undo on the activity page e2e", {"Rows": ROWS})


@pytest.fixture
def quick_polls(live_dashboard):
    config = live_dashboard.app.config
    before = config.get("JOBS_POLL_SECONDS")
    config["JOBS_POLL_SECONDS"] = 0.2
    yield
    config["JOBS_POLL_SECONDS"] = before


@pytest.mark.parametrize(("width", "as_job"), [(1280, True), (390, True), (1280, False)])
def test_undo_on_the_activity_page_settles_in_place(page, live_dashboard, org, quick_polls,
                                                    monkeypatch, width, as_job):
    if as_job:  # every undo runs as a background job, as a large one does
        monkeypatch.setattr("dashboard.undo.INLINE_UNDO_LIMIT", -1)
    page.set_viewport_size({"width": width, "height": 860})
    before = open_rows(page, live_dashboard, org, "?sort=query", "Ana")
    targets = ("bergschuhe 01", "bergschuhe 02", "bergschuhe 04")
    tick(page, *targets)
    pick_tags(page, "Add tags", "seasonal")
    apply(page)
    expect(page.locator("#notices [data-edit-notice]")).to_contain_text(
        "Added ‘seasonal’ to 3 queries.")

    page.get_by_role("link", name="Activity", exact=True).click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    rows = page.locator("tr[data-activity-row]")
    count = rows.count()
    page.evaluate("window.notReloaded = true")
    undo = rows.first.get_by_role("button", name=re.compile(r"^Undo: "))
    undo.focus()
    page.keyboard.press("Enter")

    expect(rows).to_have_count(count + 1)
    latest = rows.first
    expect(latest).to_contain_text("Undone: ‘seasonal’ removed again from 3 queries.")
    expect(latest.locator(".activity__status .status")).to_have_text("Done")
    expect(latest.locator("td.num")).to_have_text("3")
    expect(latest.locator(".activity__status .status")).to_be_focused()
    # The undone edit says so, and offers no Undo any more.
    expect(rows.nth(1).locator(".activity__status .status")).to_have_text("Undone")
    expect(rows.nth(1).get_by_role("button", name=re.compile(r"^Undo"))).to_have_count(0)
    assert page.evaluate("window.notReloaded") is True
    assert snapshot(org, "Rows") == before
    # A reload shows the same.
    page.reload()
    expect(rows.first.locator(".activity__status .status")).to_have_text("Done")
    expect(rows.first.locator("td.num")).to_have_text("3")
    assert csp_errors(page) == []
