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
    open_rows,
    pick_tags,
    row,
    snapshot,
    tick,
)
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"gummistiefel {i:02d}", "de", "DE", ["sale", "local"] if i % 2 else ["brand"])
        for i in range(30)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Selection e2e", {"Rows": ROWS})


def selected(page):
    return page.locator("[data-selected-count]")


def test_replacing_with_no_tag_asks_first(page, live_dashboard, org, screenshots):
    before = open_rows(page, live_dashboard, org, "?sort=query", "Ana")
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
    before = open_rows(page, live_dashboard, org, "?size=25&sort=query")
    page.get_by_role("checkbox", name="Select all on this page").check()
    page.get_by_role("button", name="Select all 30 matching").click()
    pick_tags(page, "Remove tags", "brand", "sale", "local", "question", "seasonal")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(dialog_of(page)).to_contain_text("Remove every tag from 30 queries in this project?")
    expect(dialog_of(page).get_by_role("button", name="Confirm")).to_be_focused()
    assert axe_serious(page) == []
    dialog_of(page).get_by_role("button", name="Cancel").click()
    assert snapshot(org, "Rows") == before


def test_the_selection_stays_through_apply_and_undo(page, live_dashboard, org):
    before = open_rows(page, live_dashboard, org, "?sort=query&q=gummistiefel+2", "Ana")
    targets = ("gummistiefel 20", "gummistiefel 21", "gummistiefel 22")
    tick(page, *targets)
    expect(selected(page)).to_have_text("3")
    notice = page.locator("#notices [data-edit-notice]")

    # As in a mail client: a second tag on the same rows, without choosing them again.
    pick_tags(page, "Add tags", "seasonal")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(notice).to_contain_text("Added ‘seasonal’ to 3 queries.")
    expect(selected(page)).to_have_text("3")
    pick_tags(page, "Add tags", "question")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(notice).to_contain_text("Added ‘question’ to 3 queries.")
    expect(selected(page)).to_have_text("3")

    notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#notices")).to_contain_text("Undone")
    expect(row(page, targets[0]).locator(".chip", has_text="question")).to_have_count(0)
    expect(selected(page)).to_have_text("3")
    for text in targets:
        expect(page.get_by_role("checkbox", name=f"Select {text}", exact=True)).to_be_checked()
    after = snapshot(org, "Rows")
    assert all(after[text] == before[text] | {"seasonal"} for text in targets)

    # A row's quick edit keeps its tick, and an unticked row stays unticked.
    page.get_by_role("button", name=f"Edit tags of {targets[0]}").click()
    dialog_of(page).get_by_role("checkbox", name="seasonal", exact=True).uncheck()
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(row(page, targets[0]).locator(".chip", has_text="seasonal")).to_have_count(0)
    expect(page.get_by_role("checkbox", name=f"Select {targets[0]}", exact=True)).to_be_checked()
    page.get_by_role("checkbox", name=f"Select {targets[1]}", exact=True).uncheck()
    page.get_by_role("button", name=f"Edit tags of {targets[1]}").click()
    dialog_of(page).get_by_role("checkbox", name="brand", exact=True).check()
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(row(page, targets[1]).locator(".chip", has_text="brand")).to_have_count(1)
    expect(page.get_by_role("checkbox", name=f"Select {targets[1]}", exact=True)) \
        .not_to_be_checked()
    expect(selected(page)).to_have_text("2")


def test_another_page_says_the_selection_was_cleared(page, live_dashboard, org):
    open_rows(page, live_dashboard, org, "?size=25&sort=query")
    note = page.get_by_role("status").filter(has_text="Selection cleared")
    tick(page, "gummistiefel 03", "gummistiefel 04")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Next").click()
    expect(note).to_have_text("Selection cleared: it covers one page; use “Select all 30 "
                              "matching” for more.")
    expect(note).to_be_visible()
    expect(selected(page)).to_have_text("0")
    # Ticking again takes the sentence away; a page change with nothing ticked says nothing.
    tick(page, "gummistiefel 25")
    expect(note).to_have_count(0)
    page.get_by_role("checkbox", name="Select gummistiefel 25", exact=True).uncheck()
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Previous").click()
    expect(page.get_by_role("checkbox", name="Select gummistiefel 03", exact=True)) \
        .to_be_visible()
    expect(note).to_have_count(0)


def test_undo_is_focused_after_apply_and_read_out(page, live_dashboard, org):
    before = open_rows(page, live_dashboard, org, "?sort=query&q=gummistiefel+1")
    tick(page, "gummistiefel 10", "gummistiefel 12")
    pick_tags(page, "Add tags", "question")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    notice = page.locator("#notices [data-edit-notice]")
    expect(notice).to_contain_text("Added ‘question’ to 2 queries.")
    # The sentence is in a live region (the notice area), and Undo has the focus: Enter undoes.
    assert page.locator("#notices").get_attribute("aria-live") == "polite"
    undo = notice.get_by_role("button", name="Undo")
    expect(undo).to_be_focused()
    page.keyboard.press("Enter")
    expect(notice).to_contain_text("Undone: ‘question’ removed again from 2 queries.")
    expect(notice).to_be_focused()
    assert snapshot(org, "Rows") == before

    # Nothing to change: no Undo, the sentence itself has the focus.
    pick_tags(page, "Remove tags", "question")
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()
    expect(notice).to_contain_text("Nothing to change")
    expect(notice).to_be_focused()
    assert axe_serious(page) == []
