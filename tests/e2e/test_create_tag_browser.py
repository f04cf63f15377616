"""A new tag from the tag picker, in headless Chromium: type a name no tag has, press
"Create tag “…”" (or Enter), see it ticked, apply it to the selected rows and see the chips —
without breaking the finder's filtering; and against a deployment without the extension, no
such button. The API (queryapi) is the ground truth."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app import create_app
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, row, sign_in, snapshot, tick
from tests.support.dashboard import close_app
from tests.support.e2e import csp_errors, make_org
from tests.support.reference_proxy import WithoutExtensions
from tests.support.servers import LiveServer

pytestmark = pytest.mark.browser

ROWS = [(f"autumn jacket {i:02d}", "en", "US", ["brand"] if i % 2 else []) for i in range(12)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Creating tags e2e", {"Jackets": ROWS, "Other": ROWS[:2]})


def tag_names(org, project: str) -> list[str]:
    with org.api() as api:
        return [tag.name for tag in api.iter_tags(org.projects[project])]


def test_type_a_new_name_create_it_ticked_and_apply_it_to_the_selected_rows(
        page, live_dashboard, org):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Jackets"], "?sort=query")
    page.evaluate("window.__sameDocument = true")
    first, second = "autumn jacket 00", "autumn jacket 01"
    before = snapshot(org, "Jackets")
    tick(page, first, second)

    page.get_by_role("button", name="Add tags", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    finder = dialog.get_by_label("Find a tag")
    expect(finder).to_be_focused()
    # Filtering as before: a part of a name shows that tag, and offers the part as a new one.
    finder.fill("sea")
    expect(dialog.get_by_role("checkbox", name="seasonal", exact=True)).to_be_visible()
    expect(dialog.get_by_role("checkbox", name="brand", exact=True)).to_be_hidden()
    expect(dialog.get_by_role("button", name="Create tag “sea”", exact=True)).to_be_visible()
    # A tag's whole name, in any case, offers nothing to create.
    finder.fill("SEASONAL")
    expect(dialog.get_by_role("checkbox", name="seasonal", exact=True)).to_be_visible()
    expect(dialog.get_by_role("button", name=re.compile("^Create tag"))).to_be_hidden()

    finder.fill("Autumn deals")
    expect(dialog.get_by_text("No tag matches.")).to_be_visible()
    create = dialog.get_by_role("button", name="Create tag “Autumn deals”", exact=True)
    expect(create).to_be_visible()
    assert axe_serious(page) == []
    create.click()

    new_tag = dialog.get_by_role("checkbox", name="Autumn deals", exact=True)
    expect(new_tag).to_be_checked()
    expect(dialog).to_contain_text("Created the tag “Autumn deals”. It is ticked, ready to "
                                   "apply.")
    expect(dialog).to_contain_text(f"Add tags to 2 queries: “{first}”, “{second}”.")
    expect(dialog.get_by_role("button", name=re.compile("^Create tag"))).to_be_hidden()
    assert "Autumn deals" in tag_names(org, "Jackets")
    assert axe_serious(page) == []

    dialog.get_by_role("button", name="Apply", exact=True).click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#notices [data-edit-notice]")).to_contain_text(
        "Added ‘Autumn deals’ to 2 queries.")
    for text in (first, second):
        expect(row(page, text).locator(".chip", has_text="Autumn deals")).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True  # no page load
    after = snapshot(org, "Jackets")
    assert {q for q in after if after[q] != before[q]} == {first, second}
    assert after[first] == before[first] | {"Autumn deals"}
    assert csp_errors(page) == []


def test_by_keyboard_enter_creates_the_tag_when_none_matches(page, live_dashboard, org):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Other"], "?sort=query")
    tick(page, "autumn jacket 00")
    page.get_by_role("button", name="Replace tags", exact=True).click()
    dialog = page.get_by_role("dialog")
    finder = dialog.get_by_label("Find a tag")
    expect(finder).to_be_focused()
    # While several tags match, Enter ticks none, creates none and submits nothing: it says so.
    ticked = dialog.locator("input[name=apply_tag]:checked")
    before = ticked.count()
    page.keyboard.type("a")
    page.keyboard.press("Enter")
    expect(dialog.locator("[data-picker-said]")).to_contain_text("tags match “a”")
    expect(ticked).to_have_count(before)
    assert "a" not in tag_names(org, "Other")
    page.keyboard.press("Control+A")
    page.keyboard.type("<b>Sale</b> & more")
    expect(dialog.get_by_role("button", name="Create tag “<b>Sale</b> & more”",
                              exact=True)).to_be_visible()
    page.keyboard.press("Enter")
    new_tag = dialog.get_by_role("checkbox", name="<b>Sale</b> & more", exact=True)
    expect(new_tag).to_be_checked()
    expect(dialog.get_by_label("Find a tag")).to_be_focused()
    assert "<b>Sale</b> & more" in tag_names(org, "Other")

    # The finder holds the name, so the list shows the new tag; Tab goes on to Apply.
    expect(dialog.get_by_label("Find a tag")).to_have_value("<b>Sale</b> & more")
    page.keyboard.press("Tab")
    expect(new_tag).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("button", name="Apply", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(dialog).to_be_hidden()
    expect(row(page, "autumn jacket 00").locator(".chip", has_text="<b>Sale</b> & more")) \
        .to_be_visible()
    assert snapshot(org, "Other")["autumn jacket 00"] == {"<b>Sale</b> & more"}
    assert csp_errors(page) == []


@pytest.fixture(scope="module")
def reference_dashboard(live_dashboard, tmp_path_factory):
    """A dashboard of its own, pointed at the same service behind a proxy that hides the
    extension: a deployment of the reference API."""
    proxy = LiveServer(WithoutExtensions(live_dashboard.service_app)).start()
    folder = tmp_path_factory.mktemp("reference")
    app = create_app({"TESTING": True, "INSTANCE_PATH": str(folder / "instance"),
                      "SECRET_KEY": "reference-e2e-secret", "SIGNIN_LIMIT": "1000/minute",
                      "API_URL": proxy.url})
    server = LiveServer(app).start()
    yield server.url
    server.stop()
    close_app(app)
    proxy.stop()


def test_against_a_deployment_without_the_extension_the_button_is_absent(
        page, reference_dashboard, org):
    sign_in(page, reference_dashboard, org.key)
    open_project(page, reference_dashboard, org.projects["Jackets"], "?sort=query")
    tick(page, "autumn jacket 03")
    page.get_by_role("button", name="Add tags", exact=True).click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Find a tag").fill("Nowhere to be made")
    expect(dialog.get_by_text("No tag matches.")).to_be_visible()
    expect(dialog.get_by_role("button", name=re.compile("Create tag"))).to_have_count(0)
    page.keyboard.press("Enter")
    expect(dialog).to_be_visible()
    assert "Nowhere to be made" not in tag_names(org, "Jackets")
    # The picker works as ever.
    dialog.get_by_label("Find a tag").fill("seas")
    dialog.get_by_role("checkbox", name="seasonal", exact=True).check()
    dialog.get_by_role("button", name="Apply", exact=True).click()
    expect(row(page, "autumn jacket 03").locator(".chip", has_text="seasonal")).to_be_visible()
