"""The queries page's shortcuts in headless Chromium: a page of rows tagged without the mouse
(j/k, x, l, the picker, z), the list of shortcuts as a real dialog, and no shortcut while
typing or with a modifier held."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import dialog_of, open_project, open_rows, sign_in, snapshot
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"schneeschuhe {i:02d}", "de", "AT", ["local"] if i % 4 == 0 else [])
        for i in range(12)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Keyboard e2e", {"Rows": ROWS})


def cursor(page):
    return page.locator("tr.row--cursor")


def test_a_page_of_rows_tagged_without_the_mouse(page, live_dashboard, org, screenshots):
    before = open_rows(page, live_dashboard, org, "?sort=query")
    keys = page.keyboard
    names = page.locator("td.col-query").all_inner_texts()
    assert len(names) == len(ROWS)

    keys.press("j")
    expect(cursor(page)).to_have_count(1)
    expect(cursor(page).locator("td.col-query")).to_have_text(names[0])
    expect(page.get_by_role("checkbox", name=f"Select {names[0]}", exact=True)).to_be_focused()
    keys.press("j")
    keys.press("k")
    expect(cursor(page).locator("td.col-query")).to_have_text(names[0])
    for _ in names:
        keys.press("x")
        keys.press("j")
    expect(page.locator("[data-selected-count]")).to_have_text(str(len(names)))
    expect(cursor(page).locator("td.col-query")).to_have_text(names[-1])  # stops at the end
    page.screenshot(path=screenshots / "keyboard-cursor.png")

    keys.press("l")
    expect(dialog_of(page).get_by_role("heading", name="Add tags")).to_be_visible()
    add_tag_by_keyboard(page, "seas", first_match="seasonal")
    notice = page.locator("#notices [data-edit-notice]")
    expect(notice).to_contain_text(f"Added ‘seasonal’ to {len(names)} queries.")
    after = snapshot(org, "Rows")
    assert all(after[name] == before[name] | {"seasonal"} for name in names)

    # z undoes the last edit (from wherever the focus is, outside fields).
    keys.press("j")
    keys.press("z")
    expect(notice).to_contain_text("Undone: ‘seasonal’ removed again")
    assert snapshot(org, "Rows") == before
    # An edit opened with l ends its selection (the next j x l starts afresh).
    expect(page.locator("[data-selected-count]")).to_have_text("0")
    assert csp_errors(page) == []


def test_question_mark_lists_every_shortcut_in_a_dialog(page, live_dashboard, org,
                                                        screenshots):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Rows"], "?sort=query")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("heading", name="Keyboard shortcuts", level=2)).to_be_visible()
    for key in ("j", "k", "x", "l", "z", "/", "?"):
        expect(dialog.locator("kbd", has_text=key).first).to_be_visible()
    assert dialog.evaluate("d => d.tagName") == "DIALOG"
    page.screenshot(path=screenshots / "keyboard-shortcuts.png")
    assert axe_serious(page) == []
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # The button opens it too, and Close closes it.
    page.get_by_role("button", name="Keyboard shortcuts").click()
    expect(dialog).to_be_visible()
    page.keyboard.press("j")  # no shortcut while a dialog is open
    expect(cursor(page)).to_have_count(0)
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_shortcuts_dialog_keeps_its_contents_off_its_edges(page, live_dashboard, org, width):
    """Its title, text, keys and Close sit inside the dialog's padding, as in the tag dialogs."""
    page.set_viewport_size({"width": width, "height": 844})
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Rows"], "?sort=query")
    page.get_by_role("button", name="Keyboard shortcuts").click()
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    frame = dialog.bounding_box()
    for part in (dialog.get_by_role("heading", name="Keyboard shortcuts", level=2),
                 dialog.locator(".dialog__lead"), dialog.locator(".shortcuts__list"),
                 dialog.get_by_role("button", name="Close")):
        box = part.bounding_box()
        assert box["x"] - frame["x"] >= 12, part
        assert box["y"] - frame["y"] >= 12, part
        assert frame["x"] + frame["width"] - (box["x"] + box["width"]) >= 12, part
        assert frame["y"] + frame["height"] - (box["y"] + box["height"]) >= 12, part
    assert axe_serious(page) == []


def test_no_shortcut_while_typing_or_with_a_modifier(page, live_dashboard, org):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Rows"], "?sort=query")
    search = page.get_by_label("Search queries")
    search.click()
    page.keyboard.type("xj")
    expect(search).to_have_value("xj")
    expect(cursor(page)).to_have_count(0)
    expect(page.locator("[data-selected-count]")).to_have_text("0")
    # No rows (the search matches none): l says so. It said nothing, and a CI run pressed the
    # l below before the rows were back, which this test now waits for.
    expect(page.get_by_role("heading", name="No queries match")).to_be_visible()
    page.locator("h1").click()
    page.keyboard.press("l")
    expect(page.get_by_role("status").filter(has_text="No rows to tag here")).to_be_visible()
    search.fill("")
    expect(page.locator("tr[data-row]")).to_have_count(len(ROWS))
    page.locator("h1").click()
    page.keyboard.press("Alt+j")
    page.keyboard.press("Control+l")
    expect(cursor(page)).to_have_count(0)
    expect(dialog_of(page)).to_be_hidden()
    # l with nothing selected says what to do instead of opening an empty picker.
    page.keyboard.press("l")
    expect(page.get_by_role("status").filter(has_text="Select a row first")).to_be_visible()


@pytest.fixture(scope="module")
def own_org(live_dashboard):
    return make_org(live_dashboard, "Keyboard selection e2e", {"Rows": ROWS})


def add_tag_by_keyboard(page, find: str, first_match: str | None = None) -> None:
    """In the open Add tags dialog: type, tick the first match (the tag `first_match`, where
    given, is the one focused), Apply — keys only."""
    keys = page.keyboard
    dialog = dialog_of(page)
    expect(dialog.get_by_label("Find a tag")).to_be_focused()
    keys.type(find)
    keys.press("Tab")
    if first_match is not None:
        expect(dialog.get_by_role("checkbox", name=first_match, exact=True)).to_be_focused()
    keys.press("Space")
    apply = dialog.get_by_role("button", name="Apply", exact=True)
    for _ in range(5):
        if apply.evaluate("button => button === document.activeElement"):
            break
        keys.press("Tab")
    expect(apply).to_be_focused()
    keys.press("Enter")
    expect(dialog).to_be_hidden()


def test_a_keyboard_edit_names_its_rows_and_ends_the_selection(page, live_dashboard, own_org):
    """j x l, a tag, Apply; then j x l on the next row changes that row only (the rows
    ticked before were tagged again, unseen); the dialog names the rows it will change, and
    Escape clears a selection."""
    before = open_rows(page, live_dashboard, own_org, "?sort=query")
    keys = page.keyboard
    names = page.locator("td.col-query").all_inner_texts()
    count = page.locator("[data-selected-count]")
    notice = page.locator("#notices [data-edit-notice]")

    for key in "jxl":
        keys.press(key)
    expect(dialog_of(page)).to_contain_text(f"Add tags to 1 query: “{names[0]}”. Tick the "
                                            "tags to add.")
    add_tag_by_keyboard(page, "seas")
    expect(notice).to_contain_text("Added ‘seasonal’ to 1 query.")
    expect(count).to_have_text("0")
    expect(page.get_by_role("checkbox", name=f"Select {names[0]}", exact=True)) \
        .not_to_be_checked()
    expect(notice.get_by_role("button", name="Undo")).to_be_visible()  # Undo stays

    for key in "jxl":
        keys.press(key)
    expect(dialog_of(page)).to_contain_text(f"Add tags to 1 query: “{names[1]}”.")
    add_tag_by_keyboard(page, "bra")
    expect(notice).to_contain_text("Added ‘brand’ to 1 query.")
    after = snapshot(own_org, "Rows")
    assert after[names[0]] == before[names[0]] | {"seasonal"}  # no brand on the first row
    assert after[names[1]] == before[names[1]] | {"brand"}
    assert {name for name in after if after[name] != before[name]} == set(names[:2])

    # z still undoes the last edit.
    keys.press("z")
    expect(notice).to_contain_text("Undone: ‘brand’ removed again")
    assert snapshot(own_org, "Rows")[names[1]] == before[names[1]]

    # Many rows: the first three by name, and how many more.
    page.locator("h1").click()
    for _ in range(7):
        keys.press("j")
        keys.press("x")
    expect(count).to_have_text("7")
    keys.press("l")
    dialog = dialog_of(page)
    ticked = names[2:9]  # from the row after the cursor (on the second row)
    expect(dialog).to_contain_text(
        f"Add tags to 7 queries: “{ticked[0]}”, “{ticked[1]}”, “{ticked[2]}” and 4 more.")
    keys.press("Escape")  # closes the dialog only
    expect(dialog).to_be_hidden()
    expect(count).to_have_text("7")
    # The button's picker (the mouse's way) names them too, in its own words.
    page.get_by_role("button", name="Remove tags", exact=True).click()
    expect(dialog).to_contain_text("Remove tags from 7 queries: ")
    keys.press("Escape")
    expect(dialog).to_be_hidden()

    # Escape, outside fields and dialogs, clears the selection, and says so.
    page.locator("h1").click()
    keys.press("Escape")
    expect(count).to_have_text("0")
    expect(page.get_by_role("status").filter(has_text="Selection cleared.")).to_be_visible()
    expect(page.locator("[data-row-select]:checked")).to_have_count(0)
    keys.press("?")
    shortcuts = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(shortcuts.locator(".shortcuts__item", has=page.locator("kbd", has_text="Esc"))) \
        .to_contain_text("Clear the selection")
    assert axe_serious(page) == []
    assert csp_errors(page) == []
