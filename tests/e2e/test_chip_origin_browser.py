"""In Chromium at 1280 and 390 px: a chip a rule or an import added carries a visible mark
before its name, and its origin in words follows it for screen readers ("Added by the import
of Queries.csv on …"); a chip a person added has no mark. The import is the service's own
(imports.import_file, as the command line runs it) on the live dashboard's database."""

from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import assert_no_sideways_scroll, make_org

pytestmark = pytest.mark.browser

WIDTHS = [1280, 390]
FILE = ("query,language,country,tags\n"
        "importierte schuhe,de,DE,brand\nimportierte stiefel,de,DE,brand\n")


@pytest.fixture(scope="module")
def org(live_dashboard):
    made = make_org(live_dashboard, "Origins e2e", {
        f"Origins {width}": [("handverlesene schuhe", "de", "DE", ["local"])]
        for width in WIDTHS})
    from service.imports import imports
    from service.store.db import session_scope
    for width in WIDTHS:
        with session_scope(live_dashboard.service_app) as session:
            imports.import_file(session, made.projects[f"Origins {width}"],
                                io.BytesIO(FILE.encode()), file_name="Queries.csv")
    return made


def mark_of(chip) -> dict:
    """The chip's ::before: its content and width, and the chip's own text."""
    return chip.evaluate("""chip => {
        const before = getComputedStyle(chip, '::before');
        return {content: before.content, display: before.display, text: chip.textContent,
                width: chip.getBoundingClientRect().width};
    }""")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_chip_no_person_added_is_marked_and_says_why(page, live_dashboard, org, width,
                                                       screenshots):
    project = org.projects[f"Origins {width}"]
    with org.api() as api:
        sale = next(tag.id for tag in api.iter_tags(project) if tag.name == "sale")
        rule = api.create_rule(project, "Stiefel", QueryFilters(text="stiefel"), (sale,))
        api.apply_rule(project, rule.id)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, project, "?sort=query")

    imported = page.locator("tr", has_text="importierte schuhe").locator(".chip",
                                                                          has_text="brand")
    expect(imported).to_have_class(re.compile(r"\bchip--by-import\b"))
    said = re.compile(r"^Added by the import of Queries\.csv on \d+ \w{3} \d{4}, [\d:]+ UTC$")
    expect(imported).to_have_attribute("title", said)
    # Read with the chip: the words right after it, hidden from sight only.
    words = imported.locator("xpath=following-sibling::span[1]")
    expect(words).to_have_class("visually-hidden")
    expect(words).to_have_text(re.compile(r"^ \(Added by the import of Queries\.csv on "))
    mark = mark_of(imported.element_handle())
    assert mark["content"].startswith('"↓"') and mark["display"] == "inline-block", mark
    assert mark["text"] == "brand" and mark["width"] > 20  # the mark is not the chip's text

    by_rule = page.locator("tr", has_text="importierte stiefel").locator(".chip",
                                                                         has_text="sale")
    expect(by_rule).to_have_class(re.compile(r"\bchip--by-rule\b"))
    assert mark_of(by_rule.element_handle())["content"].startswith('"⚙')
    # The file's own tag on the other row, and a tag from no known source: no mark.
    plain = page.locator("tr", has_text="handverlesene schuhe").locator(".chip",
                                                                        has_text="local")
    assert mark_of(plain.element_handle())["content"] == "none"

    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / f"chip-origins-{width}.png", full_page=True)
    assert axe_serious(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_projects_activity_lists_its_imports(page, live_dashboard, org, width,
                                                 screenshots):
    """An import made in the settings (over HTTP, on the same server) is a row of the
    project's Activity, its report linked, every cell on the screen."""
    from service.org import accounts
    from service.store.db import session_scope
    from tests.support.imports import Administrator

    email = f"importer-{width}@example.com"
    with session_scope(live_dashboard.service_app) as session:
        accounts.create_user(session, org.org_id, email, "correct horse battery staple")
    administrator = Administrator(live_dashboard.url, email, "correct horse battery staple")
    project = org.projects[f"Origins {width}"]
    report = administrator.upload(project, FILE.replace("importierte", "neue"),
                                  name="Keywords from a tool.csv")
    assert administrator.finished(report)["added"] == 2
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{project}/activity")
    section = page.locator("#imports")
    row = section.locator("tbody tr").first
    expect(row).to_contain_text("Keywords from a tool.csv")
    expect(row).to_contain_text("2 added, 0 already present, 0 rejected")
    expect(row).to_contain_text(email)
    link = row.get_by_role("link", name="Report of Keywords from a tool.csv")
    expect(link).to_have_attribute("href", report)
    for cell in row.locator("td").all():
        box = cell.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1, box
    if width == 390:
        assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / f"activity-imports-{width}.png", full_page=True)
    assert axe_serious(page) == []
