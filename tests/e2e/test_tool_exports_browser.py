"""The files keyword tools export (tests/support/tool_exports.py), imported in headless
Chromium through Settings → a project → Import queries with nothing but the columns page's
choices: upload by the field's and the button's accessible names, the guessed columns as the
page fills them, a language or country for every row where the file has none, Check the file
(nothing changes), Import queries, the report. One signed-in laptop page (1280 px) takes every
tool's shape in turn; a phone (390 px) takes the workbook made by hand. The axe check runs on
the columns page and the report.
"""

from __future__ import annotations

import re

import pytest
import requests
from playwright.sync_api import expect

from service.org import accounts
from tests.browser import axe_serious
from tests.e2e.test_settings_import_browser import EMAIL, PASSWORD, import_file, sign_in
from tests.support.e2e import csp_errors
from tests.support.tool_exports import BY_NAME

pytestmark = pytest.mark.browser

# The tools' shapes at the laptop's width, one file each (the other variants are read and
# imported through the columns page by tests/service/test_tool_exports.py); the axe check
# on the columns page and the report of the first and of the last.
LAPTOP_SHAPES = ["search-console-csv", "search-console-zip", "search-console-xlsx-queries-later",
                 "keyword-planner", "semrush-organic-european", "semrush-magic",
                 "ahrefs-utf16", "ahrefs-utf8", "hand-made-workbook"]
LABELS = {"language": "Language for every row", "country": "Country for every row"}


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def site(live_service, world):
    world.run(lambda s: accounts.create_user(s, world.org_id, EMAIL, PASSWORD))
    live_service.world = world
    return live_service


def import_with_choices_only(page, site, tmp_path, shape, present: set, checked=False):
    """Upload the shape's file, keep the columns the page guessed, give what the file lacks
    for every row, check, import; the rows it added are added to `present`."""
    path = tmp_path / shape.file_name
    path.write_bytes(shape.content())
    page.goto(f"{site.url}/settings/projects/{site.world.project_id}")
    import_file(page, path)
    expect(page.get_by_role("heading", name=f"Columns of “{shape.file_name}”",
                            level=1)).to_be_visible()
    expect(page.get_by_label("Query column", exact=True)).to_have_value(shape.query_column)
    expect(page.get_by_label("Country column", exact=True)).to_have_value(
        shape.country_column or "")
    expect(page.get_by_label("Language column", exact=True)).to_have_value("")
    tags = page.get_by_role("group", name="Tags column")
    for name in shape.tags_columns:
        expect(tags.get_by_label(name, exact=True)).to_be_checked()
    for field, value in shape.every_row.items():
        page.get_by_label(LABELS[field], exact=True).fill(value)
    if shape.tags_columns:
        page.get_by_label("Create tags that do not exist yet").check()
    page.get_by_role("button", name="Check the file", exact=True).click()
    keys = {row[:3] for row in shape.rows}
    added = len(keys - present)
    # A query already present whose numbers the file changes is said beside the count.
    counts = re.compile(rf"Checked, nothing changed: {added} will be added, "
                        rf"{len(keys) - added} already present"
                        r"( \(\d+ with (its|their) numbers to update\))?, 0 rejected\.")
    expect(page.get_by_role("status")).to_contain_text(counts)
    expect(page.get_by_text(shape.read_as)).to_be_visible()
    preview = page.get_by_role("table", name="The first rows, as they will be read")
    expect(preview.get_by_role("row")).to_have_count(1 + min(5, len(shape.rows)))
    if checked:
        assert axe_serious(page) == []
    page.get_by_role("button", name="Import queries", exact=True).click()
    expect(page.get_by_role("heading", name=f"Import of “{shape.file_name}”")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text(
        f"The import is finished: {added} added, {len(keys) - added} already present, "
        "0 rejected.")
    if checked:
        assert axe_serious(page) == []
    present |= keys


def api_queries(site) -> dict[tuple[str, str, str], list[str]]:
    """The project's queries through the API: (query, language, country) → tag names."""
    world = site.world
    headers = {"x-api-key": world.key, "x-project-id": world.project_id}
    tags = requests.post(site.url + "/api/tags/list", json={"limit": 1000}, timeout=10,
                         headers=headers)
    names = {tag["id"]: tag["name"] for tag in tags.json()["results"]}
    body = requests.post(site.url + "/api/queries/list", json={"limit": 1000}, timeout=10,
                         headers=headers)
    assert body.status_code == 200, body.text
    return {(q["query"], q["language"], q["country"]): sorted(names[t] for t in q["tags"])
            for q in body.json()["results"]}


def test_every_tools_export_imports_with_only_column_choices(page, site, tmp_path):
    sign_in(page, site, f"/settings/projects/{site.world.project_id}")
    present: set = set()
    for number, name in enumerate(LAPTOP_SHAPES):
        try:
            import_with_choices_only(page, site, tmp_path, BY_NAME[name], present,
                                     checked=number in (0, len(LAPTOP_SHAPES) - 1))
        except AssertionError as error:
            error.add_note(f"the shape {name}")
            raise
    rows = api_queries(site)
    assert set(rows) == present
    assert rows[("running shoes men", "de", "US")] == ["product"]  # tags the import made
    assert rows[("laufschuhe test", "de", "AT")] == ["price", "review"]
    assert csp_errors(page) == []


def test_a_workbook_made_by_hand_on_a_phone(phone, site, tmp_path, screenshots):
    sign_in(phone, site, f"/settings/projects/{site.world.project_id}")
    shape = BY_NAME["hand-made-workbook"]
    import_with_choices_only(phone, site, tmp_path, shape, set(), checked=True)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path=screenshots / "settings-import-hand-made-workbook-phone.png",
                     full_page=True)
    assert api_queries(site) == {row[:3]: list(row[3]) for row in shape.rows}
