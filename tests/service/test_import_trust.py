"""Numbers an import's reports can be trusted with, and Columns pages that open ready: blank
lines passed over and said once, the columns remembered per shape of file, the workbook's
sheet named as it is read, and the separators of a Tags column counted. Through the settings
area over real HTTP (tests/support/imports.py) and the command line, on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import csv
import io
import re

import pytest
from sqlalchemy import inspect

from tests.service.migrating import engine_of_its_own, migrate, model_differences_after
from tests.service.test_import_sources import queries
from tests.service.test_tool_exports import form_of
from tests.support.api import Api
from tests.support.imports import Administrator
from tests.support.tool_exports import BY_NAME, GSC_HEADER, GSC_ROWS, styled_workbook

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def administrator(service_config, tmp_path, live_service, world):
    service_config["IMPORTS_FOLDER"] = str(tmp_path / "imports")
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def csv_text(rows: list[list]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


# Search Console's Queries.csv with a blank line, a line of separators only, and a row whose
# query is empty but whose other cells are not (still rejected, on line 6).
SEARCH_CONSOLE_WITH_BLANKS = (csv_text([GSC_HEADER, *GSC_ROWS[:2]]) + "\n" + ",,,,\n"
                              + ",3,10,1%,4\n" + csv_text(GSC_ROWS[2:]))
FOR_EVERY_ROW = {"language": ["de"], "country": ["DE"]}


# --- 7. blank lines are passed over, and said once -------------------------------------------


def test_blank_lines_are_passed_over_and_said_once_on_the_settings_pages(
        api, world, administrator):
    columns = administrator.upload(world.project_id, SEARCH_CONSOLE_WITH_BLANKS,
                                   name="Queries.csv")
    form = {**form_of(administrator.get(columns).text), **FOR_EVERY_ROW}
    checked = administrator.check(columns, form).text
    assert ("Checked, nothing changed: 5 will be added, 0 already present, 1 rejected, "
            "2 blank lines passed over.") in checked
    assert "Line 6: The query is empty." in checked
    assert checked.count("The query is empty") == 1
    started = administrator.post(columns, data={**form, "action": "import"})
    report = started.headers["Location"]
    done = administrator.finished(report)
    assert (done["state"], done["rejected"], done["blankLines"]) == ("finished", 1, 2)
    page = administrator.get(report).text
    assert "5 added, 0 already present, 1 rejected, 2 blank lines passed over" in page
    assert page.count("The query is empty") == 1
    assert len(queries(api)) == 5


def test_the_api_lists_an_imports_blank_lines(live_service, world, administrator):
    report = administrator.upload(world.project_id,
                                  "query,language,country\nschuhe,de,DE\n\n,,\nhut,de,DE\n")
    assert administrator.finished(report)["state"] == "finished"
    listed = Api(live_service.url, world.key, world.project_id).post("/api/imports/list", {})
    assert listed.status_code == 200, listed.text
    [record] = listed.json()["results"]
    assert (record["added"], record["rejected"], record["blankLines"]) == (2, 0, 2)


def test_a_workbook_row_of_empty_cells_is_a_blank_line(api, world, administrator):
    rows = [["Keyword", "Volume"], ["laufschuhe", 10], [], ["", ""], ["turnschuhe", 5]]
    columns = administrator.upload(world.project_id, styled_workbook({"Sheet1": rows}),
                                   name="keywords.xlsx")
    form = {**form_of(administrator.get(columns).text), **FOR_EVERY_ROW}
    checked = administrator.check(columns, form).text
    assert ("2 will be added, 0 already present, 0 rejected, 2 blank lines passed over."
            in checked)
    assert "The query is empty" not in checked


def test_blank_lines_are_said_once_by_the_command_line(world, flask_cli, tmp_path):
    exported = tmp_path / "Queries.csv"
    exported.write_text(SEARCH_CONSOLE_WITH_BLANKS, encoding="utf-8")
    checked = flask_cli("import-queries", world.project_id, exported, "--language", "de",
                        "--country", "DE", "--dry-run")
    assert ("Checked, nothing changed: 5 to add, 0 already present, 1 rejected, "
            "2 blank lines passed over.") in checked.output
    assert checked.output.count("The query is empty") == 1
    own = tmp_path / "own.csv"
    own.write_text("query,language,country\nschuhe,de,DE\n\n,,\nstiefel,de,DE\n",
                   encoding="utf-8")
    done = flask_cli("import-queries", world.project_id, own)
    assert done.exit_code == 0, done.output
    assert "2 added, 0 already present, 0 rejected, 2 blank lines passed over." in done.output


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_blank_lines_column_migrates_up_and_down(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_blank_lines_") as engine:
        differences = model_differences_after(engine, "0034", "0035")
        assert [d for d in differences if "imports" in repr(d)] == []
        migrate(engine, "0034", down=True)
        assert "blank_lines" not in {c["name"] for c in inspect(engine).get_columns("imports")}


# --- 8. the Columns page remembers each shape of file ----------------------------------------


def import_through_columns(administrator, project_id, content, name, fields) -> dict:
    """Upload, take the page's fields with `fields` over them, import; the form as the page
    opened it."""
    columns = administrator.upload(project_id, content, name=name)
    opened = form_of(administrator.get(columns).text)
    started = administrator.post(columns, data={**opened, **fields, "action": "import"})
    assert started.status_code == 303, started.text[:3000]
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    return opened


def test_each_shape_of_file_opens_with_what_was_chosen_for_it_last(world, administrator):
    console = BY_NAME["search-console-csv"]
    workbook = BY_NAME["hand-made-workbook"]
    project = world.project_id
    import_through_columns(administrator, project, console.content(), console.file_name,
                           FOR_EVERY_ROW)
    opened = import_through_columns(administrator, project, workbook.content(),
                                    workbook.file_name,
                                    {"language": ["German"], "create_tags": ["1"]})
    assert opened["country_column"] == ["Country"] and opened["country"] == [""]
    # Search Console again, after the workbook: what was chosen for Search Console.
    columns = administrator.upload(project, console.content(), name=console.file_name)
    form = form_of(administrator.get(columns).text)
    assert (form["language"], form["country"]) == (["de"], ["DE"])
    assert form["country_column"] == [""] and form["tags_separator"] != [","]
    checked = administrator.check(columns, form)
    assert checked.status_code == 200
    assert "0 will be added, 5 already present, 0 rejected." in checked.text
    # The workbook again: its own columns, and its header's spelling in another case counts
    # as the same shape.
    again = form_of(administrator.get(administrator.upload(
        project, workbook.content(), name=workbook.file_name)).text)
    assert (again["country_column"], again["language"]) == (["Country"], ["German"])
    shouting = csv_text([[name.upper() for name in GSC_HEADER], *GSC_ROWS])
    form = form_of(administrator.get(administrator.upload(project, shouting)).text)
    assert form["query_column"] == ["TOP QUERIES"]
    assert (form["language"], form["country"]) == (["de"], ["DE"])


def test_a_remembered_column_the_file_lacks_is_not_chosen(world, administrator):
    """A file of a shape never seen opens with its columns guessed, never another shape's
    columns nor their separator; a language given for every row is kept where it has no
    language column."""
    workbook = BY_NAME["hand-made-workbook"]
    import_through_columns(administrator, world.project_id, workbook.content(),
                           workbook.file_name, {"language": ["German"], "create_tags": ["1"]})
    ahrefs = BY_NAME["ahrefs-utf8"]
    form = form_of(administrator.get(administrator.upload(
        world.project_id, ahrefs.content(), name=ahrefs.file_name)).text)
    assert form["query_column"] == ["Keyword"] and form["country_column"] == ["Country"]
    assert form.get("tags_columns", []) == [] and form["tags_separator"] != [","]
    assert form["language"] == ["German"]


# --- 10. the sheet a workbook is read from ----------------------------------------------------


def test_the_upload_says_which_sheet_of_a_workbook_is_read(world, administrator):
    page = administrator.get(f"/settings/projects/{world.project_id}/imports").text
    hint = re.sub(r"\s+", " ", page)
    assert "the first of its sheets that names a query column" in hint
    assert "(its first sheet)" not in hint


# --- 11. the separators of a Tags column, counted ---------------------------------------------


MIXED_TAGS = csv_text([["Keyword", "Tags"], ["laufschuhe", "price; cargo"],
                       ["turnschuhe", "price;brand"], ["stiefel", '"a; b"; c'],
                       ["sandalen", "price | cargo"], ["schuhe", "product"]])


def test_the_check_counts_the_separators_a_tags_column_uses(api, world, administrator):
    columns = administrator.upload(world.project_id, MIXED_TAGS, name="tags.csv")
    form = {**form_of(administrator.get(columns).text), **FOR_EVERY_ROW,
            "create_tags": ["1"]}
    assert form["tags_columns"] == ["Tags"]
    checked = administrator.check(columns, form).text
    assert ("Tags cells use “;” in 3 rows and “|” in 1 row: choose the separator."
            in checked)
    assert queries(api) == set()  # nothing created
    # "|" chosen: each cell splits at it and at ";", and the check says nothing more of them.
    form["tags_separator"] = ["|"]
    checked = administrator.check(columns, form).text
    assert "Tags cells use" not in checked
    # "brand" is a tag of the project already.
    assert "These tags would be created: price, cargo, a; b, c, product." in checked
    started = administrator.post(columns, data={**form, "action": "import"})
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert ("sandalen", "de", "DE", ("cargo", "price")) in queries(api)


def test_the_columns_page_offers_the_separators(world, administrator):
    columns = administrator.upload(world.project_id, MIXED_TAGS, name="tags.csv")
    page = administrator.get(columns).text
    offered = re.findall(r'<option value="([^"]*)"', page.split('id="tags-separator"')[1]
                         .split("</select>")[0])
    assert offered[:4] == ["", ";", ",", "|"]


def test_the_command_line_counts_the_separators(world, flask_cli, tmp_path):
    path = tmp_path / "tags.csv"
    path.write_text(MIXED_TAGS, encoding="utf-8")
    checked = flask_cli("import-queries", world.project_id, path, "--language", "de",
                        "--country", "DE", "--create-tags", "--dry-run")
    assert "Tags cells use “;” in 3 rows and “|” in 1 row: choose the separator." \
        in checked.output
