"""Keyword research exports of real size, as .xlsx and .ods, imported by the command line with
no spreadsheet edit: a sheet of more than a million cells all filled, a sheet with a third of
its cells left out (as writers leave out empty cells) go in whole; a sheet whose box is mostly
empty space is refused with the sentence naming the bounds (service/imports/workbook_files.py).

The limits are the module's own. Where a case needs more empty space than the suite can build
in seconds, the test lowers `workbook_files.MAX_EMPTY` (the one knob that says how much empty
space a box may hold when its cells with a value are few) and says so.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py),
except two sheets of a million cells: they differ from the first in how they are read, not in
what is written, and one import of that size on PostgreSQL is the first test's.
"""

from __future__ import annotations

from functools import cache

import pytest

from service.imports import workbook_files
from tests.support import hostile_files
from tests.support.tool_exports import opendocument_spreadsheet
from tests.support.xlsx import workbook

BOUNDS = ("a sheet may reach at most row 1,048,576 and column 16,384, its rows × columns may "
          "be at most 20,000,000 cells, and at most 2,000,000 of them (or as many as hold a "
          "value) may be empty")
METRICS = ["Volume", "KD", "CPC", "Competition", "Results", "Trend", "Intent", "Position",
           "Previous position", "Traffic", "Traffic %", "Traffic cost", "SERP features",
           "Timestamp", "URL", "Clicks", "Impressions", "CTR", "Parent topic", "Words",
           "Global volume", "Difficulty", "Rank", "Notes", "Source", "Updated", "Device"]


# The bounds, not the database: these run on SQLite alone.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def export(rows: int, columns: int, omitted: int = 0) -> list[list]:
    """A keyword tool's export: a header, then `rows` rows of `columns` columns (query,
    language, country, then figures); each row leaves `omitted` of its figure columns empty,
    a different run of them row after row."""
    header = ["Keyword", "Language", "Country"] + METRICS[:columns - 3]
    figures = columns - 3
    table = [header]
    for n in range(rows):
        row = [f"query {n}", "en", "US"] + [n % 997 + k for k in range(figures)]
        for k in range(omitted):
            row[3 + (n + k) % figures] = ""
        table.append(row)
    return table


@cache  # made once for both databases
def export_xlsx(rows: int, columns: int, omitted: int = 0) -> bytes:
    return workbook({"Keywords": export(rows, columns, omitted)})


def imported(flask_cli, world, path) -> str:
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 0, done.output[-2000:]
    return done.output


def total(api) -> int:
    return api.queries(limit=1).json()["page"]["totalRecords"]


def test_a_workbook_of_1_100_000_filled_cells_imports_every_row(api, world, flask_cli,
                                                                 tmp_path):
    """44,000 rows × 25 columns (and the header): more cells than the box allowed before
    (1,000,000), every one of them filled; every row goes in."""
    path = tmp_path / "semrush.xlsx"
    path.write_bytes(export_xlsx(44_000, 25))
    assert "44,000 added, 0 already present, 0 rejected" in imported(flask_cli, world, path)
    assert total(api) == 44_000


@SQLITE_ONLY
def test_a_sparse_export_over_a_million_cells_goes_in(api, world, flask_cli, tmp_path):
    """40,000 rows × 30 columns, each row leaving 10 of them out (a third of the box empty,
    its cells not written, as writers do): 1,200,030 cells in the box, 800,030 of them with a
    value, every row goes in."""
    path = tmp_path / "ahrefs.xlsx"
    path.write_bytes(export_xlsx(40_000, 30, omitted=10))
    assert "40,000 added, 0 already present, 0 rejected" in imported(flask_cli, world, path)
    assert total(api) == 40_000


def test_empty_space_up_to_the_cells_with_a_value_goes_in_and_past_them_is_refused(
        api, world, flask_cli, tmp_path, monkeypatch):
    """With `MAX_EMPTY` lowered to 10,000 (the rule's other arm needs millions of cells to
    reach): 6,000 rows × 12 columns leaving 5 out (30,000 empty, 42,012 filled) go in; the same
    rows leaving 8 out (48,000 empty, 24,012 filled) are refused, the sentence naming the
    bounds and what the sheet holds."""
    monkeypatch.setattr(workbook_files, "MAX_EMPTY", 10_000)
    fewer = tmp_path / "fewer.xlsx"
    fewer.write_bytes(workbook({"Keywords": export(6_000, 12, omitted=5)}))
    assert "6,000 added" in imported(flask_cli, world, fewer)
    more = tmp_path / "more.xlsx"
    more.write_bytes(workbook({"Keywords": export(6_000, 12, omitted=8)}))
    refused = flask_cli("import-queries", world.project_id, more)
    assert refused.exit_code == 1
    assert "at most 10,000 of them (or as many as hold a value) may be empty" in \
        refused.output, refused.output
    assert total(api) == 6_000


def test_values_written_again_in_one_place_do_not_fill_the_box(api, world, flask_cli, tmp_path,
                                                              monkeypatch):
    """With `MAX_EMPTY` lowered to 10,000: 30,000 values all written at A2, then one at T2000.
    calamine holds every copy, filling no place: they count as empty space, and the sheet is
    refused as soon as they and its empty cells pass 10,000 (before, the copies counted as
    filled places, and let a box of 40,000 cells with 5 values in)."""
    monkeypatch.setattr(workbook_files, "MAX_EMPTY", 10_000)
    path = tmp_path / "copies.xlsx"
    path.write_bytes(hostile_files.one_place_filled_xlsx(30_000, "T2000"))
    refused = flask_cli("import-queries", world.project_id, path)
    assert refused.exit_code == 1
    assert "has cells as far as row 2 and column 3, 2 of its 6 cells empty and 9,999 values " \
        "written over others" in refused.output, refused.output
    assert total(api) == 0


def test_a_table_with_a_far_cell_of_empty_space_is_refused_with_the_bounds(
        api, world, flask_cli, tmp_path):
    """A table of 1,000 rows × 3 columns and one value at row 200,000, column T: a box of
    4,000,000 cells (within 20,000,000), all but 3,004 of them empty — refused, nothing
    imported."""
    path = tmp_path / "far.xlsx"
    path.write_bytes(far_table("xlsx"))
    refused = flask_cli("import-queries", world.project_id, path)
    assert refused.exit_code == 1
    assert ("has cells as far as row 200,000 and column 20, 3,996,996 of its 4,000,000 cells "
            "empty: " + BOUNDS) in refused.output, refused.output
    assert total(api) == 0


def with_far_value(rows: list[list], row: int, column: int) -> list[list]:
    """`rows`, then empty rows, then a value in row `row`, column `column` (from 1)."""
    return rows + [[]] * (row - len(rows) - 1) + [[""] * (column - 1) + [1]]


@cache  # made once for both databases
def far_table(kind: str) -> bytes:
    """1,000 rows × 3 columns, empty rows, and a value at row 200,000, column 20, as .xlsx or
    .ods."""
    write = workbook if kind == "xlsx" else opendocument_spreadsheet
    return write({"Keywords": with_far_value(export(1_000, 3), 200_000, 20)})


@SQLITE_ONLY
def test_an_opendocument_export_over_a_million_cells_goes_in(api, world, flask_cli, tmp_path):
    """The .ods LibreOffice saves, 36,000 rows × 30 columns each leaving 10 out (their empty
    cells written, as LibreOffice writes them): 1,080,030 cells, every row goes in."""
    path = tmp_path / "research.ods"
    path.write_bytes(opendocument_spreadsheet({"Keywords": export(36_000, 30, omitted=10)}))
    assert "36,000 added, 0 already present, 0 rejected" in imported(flask_cli, world, path)
    assert total(api) == 36_000


def test_an_opendocument_sheet_of_empty_space_is_refused_with_the_bounds(api, world, flask_cli,
                                                                         tmp_path):
    """An .ods table of 1,000 rows × 3 columns, empty rows, and a value at row 200,000,
    column 20: its box is 4,000,000 cells, all but 3,004 of them empty."""
    path = tmp_path / "far.ods"
    path.write_bytes(far_table("ods"))
    refused = flask_cli("import-queries", world.project_id, path)
    assert refused.exit_code == 1
    assert ("has cells as far as row 200,000 and column 20, 3,996,996 of its 4,000,000 cells "
            "empty: " + BOUNDS) in refused.output, refused.output
    assert total(api) == 0
