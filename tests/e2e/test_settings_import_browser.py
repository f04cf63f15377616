"""Settings → a project → Import queries, in headless Chromium: upload a CSV file by the
field's and the button's accessible names, read the report, download the rejected rows; a
larger file runs as a job whose progress bar survives a reload and turns into the report; Check
the file of a larger file of another shape does the same on its Columns page.

The settings pages are served by the service app alone (tests/conftest.py's LiveServer). The
job of the larger file (and its check) is held after its first batch until the test has
reloaded its page, so that the test sees it running however fast the machine is.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
import requests
from playwright.sync_api import expect

from service.imports import import_jobs
from service.org import accounts, admin
from tests.browser import axe_serious
from tests.support.e2e import PHONE, assert_no_sideways_scroll, csp_errors
from tests.support.imports import held_after_the_first_batch

pytestmark = pytest.mark.browser

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"
FORMULA_STARTS = ("=", "+", "-", "@")
# The larger files: more rows than a batch (IMPORT_BATCH_ROWS below), so that the job is held
# after its first and still has rows to go; the import's more than a page of the API's answer.
BATCH_ROWS = 500
LARGER_IMPORT = 1500
LARGER_CHECK = 1000


@pytest.fixture
def service_config(service_config, tmp_path):
    # The pages of a running job ask for its progress ten times a second, not once: the
    # tests wait for what a question shows, not for the questions.
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports"),
            "IMPORT_BATCH_ROWS": BATCH_ROWS, "IMPORT_PROGRESS_SECONDS": 0.1}


@pytest.fixture
def site(live_service, world):
    world.run(lambda s: accounts.create_user(s, world.org_id, EMAIL, PASSWORD))
    live_service.world = world
    return live_service


SIZES = ["laptop", "phone"]


def a_page(request, size: str):
    """The page of a laptop's browser, or of a phone's (390 px, touch)."""
    return request.getfixturevalue("page" if size == "laptop" else "phone")


def sign_in(page, site, path: str) -> None:
    page.goto(site.url + path)
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(site.url + path)


def import_file(page, path) -> None:
    section = page.get_by_role("region", name="Import queries")
    section.get_by_label("File", exact=True).set_input_files(path)
    section.get_by_role("button", name="Import queries").click()


def held_job(site, monkeypatch, sink_class):
    """The next job starts at once and is held after its first batch (`sink_class`: JobSink
    for an import, CheckSink for a check): (first_batch_in, release)."""
    site.app.config["IMPORT_WAIT_SECONDS"] = 0
    return held_after_the_first_batch(monkeypatch, sink_class)


def a_larger_file(path, header: str, rows, last: str):
    """`path`, written: its header, a line for each of `rows`, and a last line to reject."""
    path.write_text("\n".join([header, *rows, last]) + "\n", encoding="utf-8")
    return path


def api_rows(site) -> dict[str, tuple[str, str, list[int]]]:
    world = site.world
    body = requests.post(site.url + "/api/queries/list", json={"limit": 1000}, timeout=10,
                         headers={"x-api-key": world.key, "x-project-id": world.project_id})
    assert body.status_code == 200
    return {r["query"]: (r["language"], r["country"], sorted(r["tags"]))
            for r in body.json()["results"]}


@pytest.mark.parametrize("size", SIZES)
def test_upload_a_file_read_the_report_and_download_the_rejected_rows(request, size, site,
                                                                      tmp_path, screenshots):
    page = a_page(request, size)
    world = site.world
    project_path = f"/settings/projects/{world.project_id}"
    sign_in(page, site, project_path)
    expect(page.get_by_role("heading", name="Import queries", level=2)).to_be_visible()
    assert axe_serious(page) == []

    path = tmp_path / "spring queries.csv"
    path.write_text("query;language;country;tags\n"
                    "laufschuhe damen;DE;de;brand\n"
                    '"shoes; red";en;US;"Brand;sale"\n'
                    "=HYPERLINK(\"https://evil.example\");en;US;nope\n"
                    ";en;US;\n"
                    "laufschuhe damen;de;DE;\n"
                    "größe 39;de;AT;\n", encoding="utf-8-sig")
    import_file(page, path)

    expect(page.get_by_role("heading", name="Import of “spring queries.csv”")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        "The import is finished: 3 added, 1 already present, 2 rejected.")
    rejected = page.get_by_role("table", name="Rejected rows").get_by_role("row")
    expect(rejected).to_have_count(3)
    expect(rejected.nth(1)).to_contain_text("This project has no tag named “nope”.")
    expect(rejected.nth(2)).to_contain_text("The query is empty.")
    page.screenshot(path=screenshots / f"settings-import-report-{size}.png", full_page=True)
    assert axe_serious(page) == []

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download rejected rows").click()
    download = download_info.value
    assert download.suggested_filename == "rejected-rows-spring-queries.csv"
    rows = list(csv.reader(io.StringIO(download.path().read_text(encoding="utf-8-sig"))))
    assert rows[0] == ["line", "reason", "query", "language", "country", "tags"]
    assert [row[0] for row in rows[1:]] == ["4", "5"]
    assert rows[1][2] == "'=HYPERLINK(\"https://evil.example\")"
    for row in rows[1:]:
        assert not any(cell.startswith(FORMULA_STARTS) for cell in row), row

    # Imported, searchable through the API with their tags.
    assert api_rows(site) == {
        "laufschuhe damen": ("de", "DE", [world.tags["brand"]]),
        "shoes; red": ("en", "US", sorted([world.tags["brand"], world.tags["sale"]])),
        "größe 39": ("de", "AT", []),
    }

    # The project's page lists it after a reload; its name leads back to the report.
    page.get_by_role("link", name="Back to the project Shop search").click()
    expect(page.get_by_role("heading", name="Shop search", level=1)).to_be_visible()
    page.reload()
    recent = page.get_by_role("table", name="Recent imports")
    expect(recent).to_contain_text("Finished")
    recent.get_by_role("link", name="spring queries.csv").click()
    expect(page.get_by_role("heading", name="Import of “spring queries.csv”")).to_be_visible()
    assert csp_errors(page) == []


@pytest.mark.parametrize("size", SIZES)
def test_a_larger_file_runs_as_a_job_whose_progress_survives_a_reload(request, size, site,
                                                                      tmp_path, monkeypatch,
                                                                      screenshots):
    page = a_page(request, size)
    world = site.world
    first_batch_in, release = held_job(site, monkeypatch, import_jobs.JobSink)
    path = a_larger_file(tmp_path / "big.csv", "query,language,country,tags",
                         (f"generated query {number:05d},en,US,{'sale' if number % 2 else ''}"
                          for number in range(LARGER_IMPORT)), "bad row,en")

    project_path = f"/settings/projects/{world.project_id}"
    sign_in(page, site, project_path)
    try:
        import_file(page, path)
        expect(page.get_by_role("heading", name="Import of “big.csv”")).to_be_visible()
        progress = page.get_by_role("progressbar", name=re.compile("Importing|Waiting"))
        expect(progress).to_be_visible()
        assert first_batch_in.wait(30)
        # The page asks for the progress by itself.
        expect(page.locator("[data-import-numbers]")).to_contain_text(f"{BATCH_ROWS} rows so far")
        assert int(progress.get_attribute("value")) > 0
        page.screenshot(path=screenshots / f"settings-import-progress-{size}.png")
        assert axe_serious(page) == []

        page.reload()
        expect(page.get_by_role("heading", name="Import of “big.csv”")).to_be_visible()
        expect(page.get_by_role("progressbar", name="Importing")).to_be_visible()
        expect(page.locator("[data-import-numbers]")).to_contain_text(f"{BATCH_ROWS} rows so far")

        # From the project's page too.
        page.goto(site.url + project_path)
        recent = page.get_by_role("table", name="Recent imports")
        expect(recent).to_contain_text("Importing")
        recent.get_by_role("link", name="big.csv").click()
        expect(page.get_by_role("progressbar", name="Importing")).to_be_visible()
    finally:
        release.set()

    # Once it ends, the page shows the report in place of the bar.
    expect(page.get_by_role("status")).to_have_text(
        f"The import is finished: {LARGER_IMPORT:,} added, 0 already present, 1 rejected.",
        timeout=60_000)
    expect(page.get_by_role("progressbar")).to_have_count(0)
    expect(page.get_by_role("table", name="Rejected rows")).to_contain_text(
        "This line has 2 fields, but the header has 4.")
    assert axe_serious(page) == []
    assert len(api_rows(site)) == 1000  # one page of the API's answer…
    total = requests.post(site.url + "/api/queries/list", json={"limit": 1}, timeout=10,
                          headers={"x-api-key": world.key, "x-project-id": world.project_id})
    assert total.json()["page"]["totalRecords"] == LARGER_IMPORT
    assert csp_errors(page) == []


@pytest.mark.parametrize("size", SIZES)
def test_a_search_console_export_with_its_columns_chosen(request, size, site, tmp_path,
                                                         screenshots):
    """The file of another shape: its columns page (a preview of the first rows as they will
    be read), the language and country for every row given by their fields' names, Check the
    file (nothing changes), then Import queries."""
    page = a_page(request, size)
    world = site.world
    sign_in(page, site, f"/settings/projects/{world.project_id}")
    path = tmp_path / "Queries.csv"
    path.write_text("Top queries,Clicks,Impressions,CTR,Position\n"
                    "laufschuhe herren,120,3400,3.5%,4.2\n\"schuhe, günstig\",80,2000,4%,6.1\n",
                    encoding="utf-8")
    import_file(page, path)
    expect(page.get_by_role("heading", name="Columns of “Queries.csv”", level=1)).to_be_visible()
    expect(page.get_by_label("Query column", exact=True)).to_have_value("Top queries")
    preview = page.get_by_role("table", name="The first rows, as they will be read")
    expect(preview.get_by_role("row")).to_have_count(3)
    expect(preview).to_contain_text("schuhe, günstig")
    page.get_by_label("Language for every row", exact=True).fill("German")
    page.get_by_label("Country for every row", exact=True).fill("Germany")
    page.get_by_role("button", name="Check the file", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text(
        "Checked, nothing changed: 2 will be added, 0 already present, 0 rejected.")
    expect(preview).to_contain_text("de")
    assert api_rows(site) == {}
    if size == "phone":
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    else:  # the numbers' columns and the languages side by side, not one under another
        for first, second in (("Clicks column", "Impressions column"),
                              ("Czech (cs)", "Danish (da)")):
            one, two = (page.get_by_label(name, exact=True).bounding_box()
                        for name in (first, second))
            assert abs(one["y"] - two["y"]) < 2 and two["x"] > one["x"], (first, second)
    page.screenshot(path=screenshots / f"settings-import-columns-{size}.png", full_page=True)
    assert axe_serious(page) == []
    page.get_by_role("button", name="Import queries", exact=True).click()
    expect(page.get_by_role("status")).to_have_text(
        "The import is finished: 2 added, 0 already present, 0 rejected.")
    assert api_rows(site) == {"laufschuhe herren": ("de", "DE", []),
                              "schuhe, günstig": ("de", "DE", [])}
    assert axe_serious(page) == []
    assert csp_errors(page) == []


@pytest.mark.parametrize("size", SIZES)
def test_a_larger_files_check_runs_as_a_job_then_shows_its_result_and_imports(
        request, size, site, tmp_path, monkeypatch, screenshots):
    """Check the file of another shape as a job: its progress bar (held after its first batch,
    as the import's above) survives a reload, then turns into the check's result, and Import
    queries follows."""
    page = a_page(request, size)
    world = site.world
    first_batch_in, release = held_job(site, monkeypatch, import_jobs.CheckSink)
    path = a_larger_file(tmp_path / "keywords.csv", "Keyword,Volume,Country",
                         (f"keyword {number:04d},{number},Germany"
                          for number in range(LARGER_CHECK)), ",5,Germany")

    sign_in(page, site, f"/settings/projects/{world.project_id}")
    import_file(page, path)
    expect(page.get_by_role("heading", name="Columns of “keywords.csv”")).to_be_visible()
    page.get_by_label("Language for every row", exact=True).fill("de")
    try:
        page.get_by_role("button", name="Check the file", exact=True).click()
        progress = page.get_by_role("progressbar", name="Checking the file")
        expect(progress).to_be_visible()
        assert first_batch_in.wait(30)
        expect(page.locator("[data-import-numbers]")).to_contain_text(
            f"({BATCH_ROWS} so far, 0 rejected)")
        page.screenshot(path=screenshots / f"settings-import-checking-{size}.png")
        assert axe_serious(page) == []
        page.reload()
        expect(progress).to_be_visible()
        expect(page.get_by_role("button", name="Cancel the check")).to_be_visible()
        expect(page.get_by_label("Language for every row", exact=True)).to_have_value("de")
    finally:
        release.set()

    # Once it ends, the page shows the result in place of the bar, and the import follows.
    result = page.get_by_role("status").filter(has_text="Checked, nothing changed")
    expect(result).to_contain_text(
        f"Checked, nothing changed: {LARGER_CHECK:,} will be added, 0 already present, "
        "1 rejected.", timeout=60_000)
    expect(result).to_contain_text(f"Line {LARGER_CHECK + 2:,}: The query is empty.")
    expect(page.get_by_role("progressbar")).to_have_count(0)
    if size == "phone":
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert axe_serious(page) == []
    assert api_rows(site) == {}
    page.get_by_role("button", name="Import queries", exact=True).click()
    expect(page.get_by_role("status")).to_have_text(
        f"The import is finished: {LARGER_CHECK:,} added, 0 already present, 1 rejected.",
        timeout=60_000)
    assert csp_errors(page) == []


# The matched elements that are not wholly inside the window and inside every box around them
# that clips what overflows it (a table's scrolling frame), each as its text.
_NOT_WHOLLY_SHOWN = """selector => [...document.querySelectorAll(selector)].filter(element => {
  const box = element.getBoundingClientRect();
  if (box.left < 0 || box.right > window.innerWidth + .5) return true;
  for (let up = element.parentElement; up; up = up.parentElement) {
    if (getComputedStyle(up).overflowX === 'visible') continue;
    const frame = up.getBoundingClientRect();
    if (box.left < frame.left - .5 || box.right > frame.right + .5) return true;
  }
  return false;
}).map(element => element.textContent.trim())"""


def test_a_projects_tags_and_recent_imports_fit_a_phone(phone, site, tmp_path, screenshots):
    """At 390 px every tag's Edit, Merge and Delete is whole and in sight, also once tabbed
    to; the recent imports show every column without scrolling, the importer's email broken
    at most once; nothing scrolls sideways."""
    page, world = phone, site.world
    world.run(lambda s: admin.create_tag(s, world.project_id, "informational", "#a5f3fc"))
    email = "administrator@demo.example"
    world.run(lambda s: accounts.create_user(s, world.org_id, email, PASSWORD))
    project_path = f"/settings/projects/{world.project_id}"
    page.goto(site.url + project_path)
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    path = tmp_path / "small.csv"
    path.write_text("query,language,country\nred shoes,en,US\nblue shoes,en,US\n,en,US\n",
                    encoding="utf-8")
    import_file(page, path)
    expect(page.get_by_role("status")).to_contain_text("The import is finished")
    page.goto(site.url + project_path)
    recent = page.get_by_role("table", name="Recent imports")
    expect(recent).to_contain_text("Finished")

    actions = ".data-table .col-action .button"
    expect(page.locator(actions).first).to_be_visible()
    assert page.evaluate(_NOT_WHOLLY_SHOWN, actions) == []
    delete = page.get_by_role("link", name="Delete informational")
    delete.focus()
    box = delete.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert page.evaluate(_NOT_WHOLLY_SHOWN, actions) == []

    cells = recent.get_by_role("cell")
    assert page.evaluate(_NOT_WHOLLY_SHOWN, "table[aria-labelledby=recent-imports-heading] td"
                         ) == []
    by = cells.filter(has_text=email)
    lines = by.evaluate("""cell => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      return new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size;
    }""")
    assert lines <= 2, lines
    assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / "settings-project-tables-phone.png", full_page=True)
    assert axe_serious(page) == []
    assert csp_errors(page) == []


_LOOKS = ["border-radius", "border-top-width", "border-top-color", "background-color", "color",
          "font-family", "font-size", "font-weight"]
# The computed values of _LOOKS for an element, or for its pseudo-element if one is named.
_STYLE = """([element, pseudo, names]) => {
  const style = getComputedStyle(element, pseudo);
  return Object.fromEntries(names.map(name => [name, style.getPropertyValue(name)]));
}"""


def test_the_file_fields_button_looks_like_the_pages_other_buttons(page, site, screenshots):
    """The file field stays the browser's own (its name and keyboard as they are), its
    button drawn as the page's secondary buttons are."""
    path = f"/settings/projects/{site.world.project_id}/imports"
    sign_in(page, site, path)
    field = page.get_by_label("File", exact=True)
    expect(field).to_have_attribute("type", "file")
    chooser = page.evaluate(_STYLE, [field.element_handle(), "::file-selector-button", _LOOKS])
    secondary = page.get_by_role("button", name="Sign out").element_handle()
    assert chooser == page.evaluate(_STYLE, [secondary, None, _LOOKS])
    page.screenshot(path=screenshots / "settings-import-file-field.png")
    assert axe_serious(page) == []
