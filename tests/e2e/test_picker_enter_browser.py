"""Enter in the Add tags picker, at 1280 and 390 px: Enter on the tag the finder names (an
exact name, or the only match) ticks it, and Enter again applies; Enter on a ticked tag
applies; Ctrl+Enter applies from anywhere in the picker. One row tagged from the keyboard in
six keys or fewer, counted from the focus on the row to the tag applied; each step said in a
live region. In headless Chromium; the API is the ground truth."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import dialog_of, open_project, sign_in, snapshot
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"fahrrad bern {i:02d}", "de", "CH", []) for i in range(6)]
WIDTHS = [1280, 390]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Picker Enter e2e",
                    {f"Rows {width}": ROWS for width in WIDTHS})


class Keys:
    """The page's keyboard, counting every key pressed."""

    def __init__(self, page):
        self.page, self.count = page, 0

    def press(self, key: str) -> None:
        self.count += 1
        self.page.keyboard.press(key)


def finder(page):
    return dialog_of(page).get_by_label("Find a tag")


def said(page):
    """The picker's live region: what the last key did."""
    return dialog_of(page).locator("[data-picker-said]")


def open_at(page, live_dashboard, org, width: int) -> dict:
    page.set_viewport_size({"width": width, "height": 844})
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, org.projects[f"Rows {width}"], "?sort=query")
    return snapshot(org, f"Rows {width}")


def on_row(page, text: str) -> None:
    """The focus on the row of `text` (its checkbox), where j puts it."""
    page.locator("h1").click()
    page.keyboard.press("j")
    box = page.get_by_role("checkbox", name=f"Select {text}", exact=True)
    expect(box).to_be_focused()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_row_tagged_in_six_keys(page, live_dashboard, org, width, screenshots):
    before = open_at(page, live_dashboard, org, width)
    on_row(page, "fahrrad bern 00")
    keys = Keys(page)
    keys.press("x")
    keys.press("l")
    expect(finder(page)).to_be_focused()
    keys.press("l")
    keys.press("o")
    expect(dialog_of(page).get_by_role("checkbox", name="local", exact=True)).to_be_visible()
    keys.press("Enter")  # the only tag "lo" names: ticked
    expect(dialog_of(page).get_by_role("checkbox", name="local", exact=True)).to_be_checked()
    expect(said(page)).to_have_text("‘local’ ticked. Enter applies; or type another tag.")
    expect(said(page)).to_have_attribute("aria-live", "polite")
    page.screenshot(path=screenshots / f"picker-enter-ticked-{width}.png")
    assert axe_serious(page) == []
    keys.press("Enter")  # again: applied
    expect(dialog_of(page)).to_be_hidden()
    live = page.locator("#notices[aria-live=polite]")
    expect(live).to_contain_text("Added ‘local’ to 1 query.")
    expect(live.get_by_role("button", name="Undo")).to_be_focused()
    assert keys.count <= 6, keys.count
    after = snapshot(org, f"Rows {width}")
    assert after["fahrrad bern 00"] == {"local"}
    assert {name for name in after if after[name] != before[name]} == {"fahrrad bern 00"}
    assert csp_errors(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_enter_on_an_exact_name_a_ticked_tag_and_ctrl_enter(page, live_dashboard, org, width):
    before = open_at(page, live_dashboard, org, width)
    project = f"Rows {width}"
    dialog = dialog_of(page)
    keys = page.keyboard

    # An exact name: "sale" is also inside no other name, "se" would be several.
    on_row(page, "fahrrad bern 00")
    keys.press("j")
    keys.press("x")
    keys.press("l")
    expect(finder(page)).to_be_focused()
    keys.type("s")
    keys.press("Enter")  # several tags hold an s: nothing ticked, and it says so
    expect(said(page)).to_have_text(
        "3 tags match “s”: type more of the name, or Tab to them.")
    expect(dialog.locator("input[name=apply_tag]:checked")).to_have_count(0)
    keys.type("ale")
    keys.press("Enter")
    sale = dialog.get_by_role("checkbox", name="sale", exact=True)
    expect(sale).to_be_checked()
    expect(finder(page)).to_have_value("")  # ready for another name
    # Enter on the ticked tag applies.
    sale.focus()
    keys.press("Enter")
    expect(dialog).to_be_hidden()
    expect(page.locator("#notices")).to_contain_text("Added ‘sale’ to 1 query.")
    assert snapshot(org, project)["fahrrad bern 01"] == before["fahrrad bern 01"] | {"sale"}

    # Enter on a tag not ticked ticks it; Ctrl+Enter applies from the finder.
    page.locator("h1").click()
    keys.press("j")
    keys.press("x")
    keys.press("l")
    expect(finder(page)).to_be_focused()
    brand = dialog.get_by_role("checkbox", name="brand", exact=True)
    brand.focus()
    keys.press("Enter")
    expect(brand).to_be_checked()
    expect(dialog).to_be_visible()
    expect(said(page)).to_have_text("‘brand’ ticked. Enter applies; or type another tag.")
    finder(page).focus()
    keys.press("Control+Enter")
    expect(dialog).to_be_hidden()
    expect(page.locator("#notices")).to_contain_text("Added ‘brand’ to 1 query.")
    after = snapshot(org, project)
    assert after["fahrrad bern 02"] == before["fahrrad bern 02"] | {"brand"}
    assert {name for name in after if after[name] != before[name]} == {
        "fahrrad bern 01", "fahrrad bern 02"}
    assert csp_errors(page) == []
