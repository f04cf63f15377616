"""z undoes only the edit whose Undo the page shows at that moment, at 1280 and 390 px: after
opening another view, after a reload, or after an edit made in another tab of the same
session, no Undo is shown and z says so, changing nothing; that edit's Undo stays on the
Activity page. In headless Chromium; the API is the ground truth."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_bulk_browser import apply, open_project, pick_tags, sign_in, snapshot, tick
from tests.support.e2e import LAPTOP, csp_errors, make_org, show_filters

pytestmark = pytest.mark.browser

ROWS = [(f"velo zürich {i:02d}", "de", "CH", []) for i in range(4)] + [
    (f"velo hamburg {i:02d}", "de", "DE", []) for i in range(4)]
WIDTHS = [1280, 390]
NOTHING = "Nothing to undo here"


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Undo on screen e2e",
                    {f"Rows {width}": ROWS for width in WIDTHS} | {"Two tabs": ROWS})


def press_z(page) -> None:
    """z from outside any field (the page's heading takes the click)."""
    page.locator("h1").click()
    page.keyboard.press("z")


def nothing_to_undo(page):
    return page.get_by_role("status").filter(has_text=NOTHING)


def notice(page):
    return page.locator("#notices [data-edit-notice]")


def add_local(page, text: str) -> None:
    """`local` added to the row of `text` alone, and the sentence of this edit awaited (the
    previous edit's sentence stays until the answer comes: it is marked as seen). The
    selection stays after an edit, so it is cleared first."""
    clear = page.get_by_role("button", name="Clear selection", exact=True)
    if clear.is_visible():
        clear.click()
    page.evaluate("document.querySelectorAll('#notices [data-edit-notice]')"
                  ".forEach(function (old) { old.setAttribute('data-seen', ''); })")
    tick(page, text)
    pick_tags(page, "Add tags", "local")
    apply(page)
    expect(page.locator("#notices [data-edit-notice]:not([data-seen])")).to_contain_text(
        "Added ‘local’ to 1 query.")


@pytest.mark.parametrize("width", WIDTHS)
def test_z_in_another_view_undoes_nothing(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": LAPTOP["height"]})
    project = f"Rows {width}"
    url, project_id = live_dashboard.url, org.projects[project]
    sign_in(page, url, org.key)
    open_project(page, url, project_id, "?q=velo+zürich&sort=query")
    add_local(page, "velo zürich 01")
    tagged = snapshot(org, project)
    assert tagged["velo zürich 01"] == {"local"}

    # Another view opened (a page of its own): no sentence, no Undo, and z changes nothing.
    open_project(page, url, project_id, "?q=hamburg&sort=query")
    expect(notice(page)).to_have_count(0)
    press_z(page)
    expect(nothing_to_undo(page)).to_be_visible()
    assert snapshot(org, project) == tagged

    # The same after a reload of the view the edit was made in.
    open_project(page, url, project_id, "?q=velo+zürich&sort=query")
    page.reload()
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()
    press_z(page)
    expect(nothing_to_undo(page)).to_be_visible()
    assert snapshot(org, project) == tagged

    # Another view chosen in the page (the results drawn anew take the sentence away).
    add_local(page, "velo zürich 02")
    tagged = snapshot(org, project)
    show_filters(page)
    page.get_by_label("Search queries").fill("hamburg")
    expect(page).to_have_url(re.compile(r"[?&]q=hamburg"))
    expect(notice(page)).to_have_count(0)
    press_z(page)
    expect(nothing_to_undo(page)).to_be_visible()
    assert snapshot(org, project) == tagged

    # Their Undo stays on the Activity page.
    page.goto(f"{url}/projects/{project_id}/activity")
    expect(page.get_by_role("button", name=re.compile(r"^Undo")).first).to_be_visible()
    assert csp_errors(page) == []


def test_z_never_undoes_an_edit_made_in_another_tab(context, live_dashboard, org):
    url, project_id = live_dashboard.url, org.projects["Two tabs"]
    first = context.new_page()
    first.console_messages = []
    first.on("console", lambda message: first.console_messages.append(message.text))
    sign_in(first, url, org.key)
    open_project(first, url, project_id, "?q=velo&sort=query")
    second = context.new_page()  # the same session: the same browser's cookie
    open_project(second, url, project_id, "?q=velo&sort=query")

    # An edit in the second tab; z in the first, as it was and after a reload.
    add_local(second, "velo hamburg 01")
    theirs = snapshot(org, "Two tabs")
    press_z(first)
    expect(nothing_to_undo(first)).to_be_visible()
    first.reload()
    expect(first.get_by_role("heading", name="Queries", level=1)).to_be_visible()
    press_z(first)
    expect(nothing_to_undo(first)).to_be_visible()
    assert snapshot(org, "Two tabs") == theirs

    # An edit in the first tab, then another in the second: z in the first undoes its own,
    # the one whose Undo it shows.
    add_local(first, "velo zürich 01")
    mine = snapshot(org, "Two tabs")
    add_local(second, "velo zürich 03")
    press_z(first)
    expect(notice(first)).to_contain_text("Undone: ‘local’ removed again from 1 query.")
    after = snapshot(org, "Two tabs")
    assert after["velo zürich 01"] == set()
    assert after["velo zürich 03"] == {"local"}
    assert after["velo hamburg 01"] == {"local"}
    assert {name for name in after if after[name] != mine[name]} == {
        "velo zürich 01", "velo zürich 03"}
    assert csp_errors(first) == []
