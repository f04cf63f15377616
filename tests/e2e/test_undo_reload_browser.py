"""z undoes this session's last edit after the page was loaded again (or its notice went
with a change of the view), as it did before: the server's record of the session's last
edit, drawn into the page. In headless Chromium; the API is the ground truth."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_bulk_browser import (
    apply,
    chips,
    open_rows,
    pick_tags,
    snapshot,
    tick,
)
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"wanderschuhe {i:02d}", "de", "AT", ["local"] if i % 3 == 0 else [])
        for i in range(8)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Undo after reload e2e", {"Rows": ROWS})


def test_z_undoes_the_last_edit_after_a_reload(page, live_dashboard, org):
    before = open_rows(page, live_dashboard, org, "?sort=query", "Ana")
    targets = ("wanderschuhe 01", "wanderschuhe 02")
    tick(page, *targets)
    pick_tags(page, "Add tags", "seasonal")
    apply(page)
    notice = page.locator("#notices [data-edit-notice]")
    expect(notice).to_contain_text("Added ‘seasonal’ to 2 queries.")

    page.reload()
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()
    expect(notice).to_have_count(0)
    page.locator("h1").click()
    page.keyboard.press("z")
    expect(notice).to_contain_text("Undone: ‘seasonal’ removed again from 2 queries.")
    expect(notice).to_be_focused()
    assert snapshot(org, "Rows") == before
    for text in targets:
        assert "seasonal" not in chips(page, text)

    # Undone already: nothing more to undo, here or after a reload.
    page.keyboard.press("z")
    nothing = page.get_by_role("status").filter(has_text="There is no edit to undo here.")
    expect(nothing).to_be_visible()
    page.reload()
    page.locator("h1").click()
    page.keyboard.press("z")
    expect(nothing).to_be_visible()
    assert snapshot(org, "Rows") == before
    assert csp_errors(page) == []


def test_z_undoes_the_last_edit_after_the_view_changed(page, live_dashboard, org):
    before = open_rows(page, live_dashboard, org, "?sort=query")
    tick(page, "wanderschuhe 05")
    pick_tags(page, "Add tags", "brand")
    apply(page)
    notice = page.locator("#notices [data-edit-notice]")
    expect(notice).to_contain_text("Added ‘brand’ to 1 query.")
    page.reload()
    # Another view (its results come without the notice), then z.
    page.get_by_label("Search queries").fill("wanderschuhe 0")
    expect(page).to_have_url(re.compile(r"[?&]q=wanderschuhe"))
    page.locator("h1").click()
    page.keyboard.press("z")
    expect(notice).to_contain_text("Undone: ‘brand’ removed again from 1 query.")
    assert snapshot(org, "Rows") == before
    assert "brand" not in chips(page, "wanderschuhe 05")
