"""Tidy tags in headless Chromium, at 1280 px and at 390 px: a tag's Edit (a description, then
seen beside the tag in a row's tag picker and as its chip's accessible description), a name
the project has typed as a look-alike in the picker offers the existing tag (Use “brand”),
and a tag's Merge into another, then Undo — the API's tags and counts (queries/facets) are
the ground truth, exact after the merge and back as they were after the undo. axe on each
page; nothing scrolls sideways on a phone.

Each width works in a project of its own of an organization of its own (made through the
service's admin layer)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in, snapshot
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [
    ("running shoes", "en", "US", ["brand"]),
    ("cheap running shoes", "en", "GB", ["brand", "sale"]),
    ("laufschuhe", "de", "DE", ["sale"]),
    ("winter boots", "en", "US", []),
]
WIDTHS = [1280, 390]
DESCRIPTION = "Queries that name one of our brands."


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Tidy tags e2e", {f"Tidy {width}": ROWS for width in WIDTHS})


def fits(page, width: int) -> None:
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_no_sideways_scroll(page)


def counts(org, project: str) -> dict[int, int]:
    with org.api() as api:
        return dict(api.facets(project).tags)


@pytest.mark.parametrize("width", WIDTHS)
def test_edit_with_a_description_then_merge_and_undo(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 900})
    url, project_name = live_dashboard.url, f"Tidy {width}"
    project = org.projects[project_name]
    brand, sale = org.tags[project_name]["brand"], org.tags[project_name]["sale"]
    before, counts_before = snapshot(org, project_name), counts(org, project)
    sign_in(page, url, org.key)

    # Edit brand: a description.
    page.goto(f"{url}/projects/{project}/tags")
    page.get_by_role("link", name="Edit brand", exact=True).click()
    expect(page.get_by_role("heading", name="Edit the tag “brand”", level=1)).to_be_visible()
    expect(page.get_by_label("Tag name", exact=True)).to_have_value("brand")
    page.get_by_label("Description", exact=True).fill(DESCRIPTION)
    fits(page, width)
    assert axe_serious(page) == []
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Saved the tag “brand”.")).to_be_visible()
    chip = page.get_by_role("link", name="brand", exact=True)
    expect(chip).to_have_accessible_description(DESCRIPTION)
    with org.api() as api:
        assert {t.name: t.description for t in api.iter_tags(project)}["brand"] == DESCRIPTION

    # A row's tag picker: the checkbox is named by the tag, its description beside it.
    open_project(page, url, project, "?q=winter")
    page.get_by_role("button", name="Edit tags of winter boots").click()
    dialog = page.get_by_role("dialog")
    box = dialog.get_by_role("checkbox", name="brand", exact=True)
    expect(box).to_have_accessible_description(DESCRIPTION)
    expect(dialog.get_by_text(DESCRIPTION, exact=True)).to_be_visible()
    # A look-alike of "brand" typed as a new tag's name offers brand itself.
    dialog.get_by_label("Find a tag").fill("Bra\u200bnd")
    dialog.get_by_role("button", name="Create tag “Bra\u200bnd”", exact=True).click()
    use = dialog.get_by_role("button", name="Use “brand”", exact=True)
    expect(use).to_be_visible()
    expect(dialog.get_by_role("status")).to_contain_text(
        "This project already has a tag named “brand”")
    fits(page, width)
    assert axe_serious(page) == []
    use.click()
    expect(dialog.get_by_role("checkbox", name="brand", exact=True)).to_be_checked()
    expect(dialog.get_by_role("checkbox", name="brand", exact=True)).to_be_focused()
    dialog.get_by_role("button", name="Cancel", exact=True).click()
    assert snapshot(org, project_name) == before  # nothing created, nothing applied

    # Merge brand into sale.
    page.goto(f"{url}/projects/{project}/tags")
    page.get_by_role("link", name="Merge brand", exact=True).click()
    expect(page.get_by_role("heading", name="Merge the tag “brand” into another", level=1)
           ).to_be_visible()
    into = page.get_by_role("group", name="Merge into")
    expect(into.get_by_role("radio", name="brand", exact=True)).to_have_count(0)
    into.get_by_role("radio", name="sale", exact=True).check()
    fits(page, width)
    assert axe_serious(page) == []
    page.get_by_role("button", name="Merge", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/projects/{project}/tags$"))
    expect(page.get_by_role("status").filter(has_text="Merged “brand” into “sale”")
           ).to_have_text(re.compile(r"2 queries changed\."))
    expect(page.get_by_role("link", name="brand", exact=True)).to_have_count(0)
    merged = counts(org, project)
    assert brand not in merged and merged[sale] == 3
    assert snapshot(org, project_name) == {
        query: (names - {"brand"}) | ({"sale"} if "brand" in names else set())
        for query, names in before.items()}
    fits(page, width)
    assert axe_serious(page) == []

    # Undo: brand back, with its id, its description and exactly its queries.
    page.get_by_role("button", name="Undo", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Undone: “brand” is back")).to_be_visible()
    expect(page.get_by_role("link", name="brand", exact=True)).to_have_accessible_description(
        DESCRIPTION)
    assert counts(org, project) == counts_before
    assert snapshot(org, project_name) == before
    with org.api() as api:
        assert {t.name: t.id for t in api.iter_tags(project)}["brand"] == brand
    assert csp_errors(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_tags_colour_is_chosen_with_a_picker_beside_its_code_and_a_preview(
        page, live_dashboard, org, width):
    """A tag's Edit offers the colour field of the settings: a picker and the #rrggbb code
    kept in step, and the chip as it will look (black or white text, whichever reads
    better), the name as typed."""
    page.set_viewport_size({"width": width, "height": 900})
    url, project_name = live_dashboard.url, f"Tidy {width}"
    project = org.projects[project_name]
    sign_in(page, url, org.key)
    page.goto(f"{url}/projects/{project}/tags")
    page.get_by_role("link", name="Edit sale", exact=True).click()
    picker = page.get_by_label("Choose a shade", exact=True)
    code = page.get_by_label("Colour", exact=True)
    preview = page.locator("[data-colour-preview]")
    expect(picker).to_be_visible()
    expect(preview).to_have_text("sale")

    # A code that is no colour: refused, said under the field, which has the focus.
    code.fill("blue")
    page.get_by_role("button", name="Save", exact=True).click()
    code = page.get_by_label("Colour", exact=True)
    expect(code).to_have_accessible_description(re.compile(
        r"The colour is # followed by six hexadecimal digits, such as #1f77b4\.$"))
    expect(code).to_be_focused()
    assert axe_serious(page) == []
    picker = page.get_by_label("Choose a shade", exact=True)
    preview = page.locator("[data-colour-preview]")

    code.fill("#1f77b4")
    expect(picker).to_have_value("#1f77b4")
    expect(preview).to_have_css("background-color", "rgb(31, 119, 180)")
    expect(preview).to_have_css("color", "rgb(255, 255, 255)")
    picker.fill("#ffdd00")
    expect(code).to_have_value("#ffdd00")
    expect(preview).to_have_css("color", "rgb(0, 0, 0)")
    page.get_by_label("Tag name", exact=True).fill("sale ")
    expect(preview).to_have_text("sale")
    fits(page, width)
    assert axe_serious(page) == []
    assert csp_errors(page) == []
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Saved the tag “sale”.")).to_be_visible()
    with org.api() as api:
        assert {t.name: t.color for t in api.iter_tags(project)}["sale"] == "#ffdd00"
