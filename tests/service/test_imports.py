"""Importing queries from a CSV file: the parser and importer (service/imports/imports.py), the
import jobs (service/imports/import_jobs.py) and the settings area's routes
(service/settings/imports.py).

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
What was imported is checked through the real API over HTTP.
"""

from __future__ import annotations

import csv
import io
import os
import re
import socket
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, event, func, select

from service.engine import bulk_load
from service.engine.tables import Query
from service.imports import import_jobs, imports
from service.imports.import_jobs import ImportJob, ImportRejection
from service.org import admin
from service.store.models import Base, OrgEvent, utcnow
from tests.support.waiting import wait_until

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"
HEADER = "query,language,country,tags\n"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
FORMULA_STARTS = ("=", "+", "-", "@")


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


def run_import(world, content: bytes | str, batch_rows: int = imports.BATCH_ROWS,
               project_id: str | None = None) -> tuple[imports.Counts, list[imports.Rejected]]:
    """Import through the importer itself (as the command line does); the counts and every
    rejected row."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    rejected: list[imports.Rejected] = []

    class Collect(imports.Sink):
        def done(self, batch, counts):
            rejected.extend(batch.rejected)

    counts = world.run(lambda s: imports.import_file(
        s, project_id or world.project_id, io.BytesIO(data), Collect(), batch_rows))
    return counts, rejected


def stored(world, project_id: str | None = None) -> set[tuple[str, str, str]]:
    return set(world.run(lambda s: [tuple(row) for row in s.execute(
        select(Query.query, Query.language, Query.country)
        .where(Query.project_id == (project_id or world.project_id)))]))


def reasons(rejected) -> dict[int, str]:
    return {row.line: row.reason for row in rejected}


# --- the file's shape ----------------------------------------------------------------------------


def test_a_plain_file_is_imported_with_its_tags_and_read_back_over_the_api(world, api):
    counts, rejected = run_import(world, HEADER + "laufschuhe damen,DE,de,brand\n"
                                         '"shoes, red",en,US,\n'
                                         "größe 39,de,AT,Brand;SALE\n")
    assert (counts.added, counts.present, counts.rejected, counts.rows) == (3, 0, 0, 3)
    assert rejected == []
    body = api.queries(sort=[{"field": "query"}]).json()
    assert [(r["query"], r["language"], r["country"], sorted(r["tags"]))
            for r in body["results"]] == [
        ("größe 39", "de", "AT", sorted([world.tags["brand"], world.tags["sale"]])),
        ("laufschuhe damen", "de", "DE", [world.tags["brand"]]),
        ("shoes, red", "en", "US", []),
    ]


def test_a_byte_order_mark_and_windows_line_ends_are_fine(world):
    counts, _ = run_import(world, ("\ufeff" + HEADER.replace("\n", "\r\n")
                                   + "mit bom,de,DE,brand\r\nzweite,de,DE,\r\n").encode("utf-8"))
    assert counts.added == 2
    assert stored(world) == {("mit bom", "de", "DE"), ("zweite", "de", "DE")}


def test_semicolons_as_spreadsheets_export_them_with_tags_in_quotes(world, api):
    counts, rejected = run_import(world, "query;language;country;tags\n"
                                         '"Schuhe; rot";de;DE;"brand;sale"\n'
                                         "stiefel, braun;de;AT;local\n")
    assert (counts.added, counts.rejected) == (2, 0), rejected
    rows = {r["query"]: sorted(r["tags"]) for r in api.queries().json()["results"]}
    assert rows == {"Schuhe; rot": sorted([world.tags["brand"], world.tags["sale"]]),
                    "stiefel, braun": [world.tags["local"]]}


def test_quoted_fields_hold_quotes_separators_and_the_header_may_be_quoted(world):
    counts, rejected = run_import(world, '"query","language","country","tags"\n'
                                         '"say ""hello""",en,GB,\n'
                                         '"a, b, c",en,GB,""\n')
    assert (counts.added, rejected) == (2, [])
    assert stored(world) == {('say "hello"', "en", "GB"), ("a, b, c", "en", "GB")}


def test_columns_in_any_order_any_case_tags_optional_and_our_own_columns_ignored(world):
    counts, _ = run_import(world, " Country , QUERY,Language\nUS,no tags column,en\n")
    assert counts.added == 1
    counts, _ = run_import(world, "line,reason,query,language,country,tags,updated\n"
                                  "7,The query is empty.,fixed now,en,US,brand,2024-01-01\n")
    assert counts.added == 1
    assert stored(world) == {("no tags column", "en", "US"), ("fixed now", "en", "US")}


def test_blank_lines_are_not_rows(world):
    counts, rejected = run_import(world, HEADER + "\none,en,US,\n,,,\n\r\ntwo,en,US,\n\n")
    assert (counts.rows, counts.added, rejected) == (2, 2, [])


# --- rows that are rejected ----------------------------------------------------------------------


def test_every_rejection_says_its_line_and_why_in_words_and_the_good_rows_go_in(world):
    long_query = "q" * 1001
    lines = [
        "good one,en,US,brand",                      # 2
        ",en,US,",                                   # 3: empty query
        "   ,en,US,",                                # 4: only spaces
        f"{long_query},en,US,",                      # 5: too long
        "no language,,US,",                          # 6
        "no country,en,,",                           # 7
        f"long language,{'x' * 36},US,",             # 8
        f"long country,en,{'Y' * 36},",              # 9
        '"tab\there",en,US,',                        # 10: a control character
        '"line\nbreak",en,US,',                      # 11-12: a line break in a quoted field
        "bell\x07,en,US,",                           # 13
        "del,e\x7fn,US,",                            # 14
        "unknown tag,en,US,brand;nope",              # 15
        "two unknown,en,US,Nope;other",              # 16
        "too many,en,US,brand,extra",                # 17
        "too few,en",                                # 18
        ",,US,nope",                                 # 19: several problems at once
        "good two,en,US,",                           # 20
    ]
    counts, rejected = run_import(world, HEADER + "\n".join(lines) + "\n")
    assert (counts.added, counts.present, counts.rejected) == (2, 0, 16)
    assert stored(world) == {("good one", "en", "US"), ("good two", "en", "US")}
    assert reasons(rejected) == {
        3: "The query is empty.",
        4: "The query is empty.",
        5: "The query is 1,001 characters long; at most 1,000 are allowed.",
        6: "The language code is empty.",
        7: "The country code is empty.",
        8: "The language code is 36 characters long; at most 35 are allowed.",
        9: "The country code is 36 characters long; at most 35 are allowed.",
        10: "The query contains a tab (U+0009), which is not allowed.",
        11: "The query contains a line break (U+000A), which is not allowed.",
        13: "The query contains a control character (U+0007), which is not allowed.",
        14: "The language code contains a control character (U+007F), which is not allowed.",
        15: "This project has no tag named “nope”.",
        16: "This project has no tags named “Nope”, “other”.",
        17: "This line has 5 fields, but the header has 4. A field that holds a comma must "
            "be in double quotes.",
        18: "This line has 2 fields, but the header has 4.",
        19: "The query is empty. The language code is empty. This project has no tag named "
            "“nope”.",
    }
    # Each rejected row keeps its fields as the file had them.
    by_line = {row.line: row for row in rejected}
    assert by_line[15].fields == ("unknown tag", "en", "US", "brand;nope")
    assert by_line[11].query == "line\nbreak"


def test_a_line_longer_than_the_limit_rejects_its_line_only(world):
    """Longer than a row may be (and than the csv module's field limit): rejected by its
    number, read a piece at a time, and the next line is read as a row again."""
    huge = "x" * (csv.field_size_limit() + 1)
    counts, rejected = run_import(world, HEADER + f"before,en,US,\n{huge},en,US,\r\n"
                                                  "after,en,US,\n")
    assert (counts.added, counts.rejected, counts.last_line) == (2, 1, 4)
    assert reasons(rejected) == {3: imports.TOO_LONG}
    assert rejected[0].fields == ("", "", "", "")  # not held
    assert imports.TOO_LONG == ("This line is longer than 65,536 characters, the most a row "
                                "may have.")


def test_a_row_over_the_limit_across_lines_is_rejected_by_its_first_line(world):
    """A quoted field that spans lines counts all of them; a line of exactly the limit is
    fine."""
    limit = imports.MAX_LINE
    fits = "f" * (limit - len(",en,US,"))
    counts, rejected = run_import(world, HEADER + f"{fits},en,US,\n"
                                                  + '"two\nlines' + "y" * limit + '",en,US,\n'
                                                  + "after,en,US,\n", batch_rows=1)
    assert reasons(rejected) == {
        2: f"The query is {len(fits):,} characters long; at most 1,000 are allowed.",
        3: imports.TOO_LONG}
    assert (counts.added, counts.rejected) == (1, 2)


def test_codes_are_checked_as_the_api_checks_them_and_not_against_a_list(world):
    """The API promises nothing about codes beyond at most 35 characters and no control
    characters (docs/api.md, Input rules): an import accepts what the API accepts."""
    counts, rejected = run_import(world, HEADER + "regional,pt-BR,br,\nscript,zh-Hant,TW,\n")
    assert (counts.added, rejected) == (2, [])
    assert stored(world) == {("regional", "pt-br", "BR"), ("script", "zh-hant", "TW")}


def test_tag_names_are_matched_without_regard_to_case(world, api):
    world.run(lambda s: admin.create_tag(s, world.project_id, "Straße", "#123456"))
    street = world.run(lambda s: imports.project_tags(s, world.project_id))["strasse"]
    counts, rejected = run_import(world, HEADER + "a,en,US,BRAND ; Sale\nb,en,US,STRASSE\n"
                                                  "c,en,US,brand;Brand;BRAND\n")
    assert (counts.added, rejected) == (3, [])
    tags = {r["query"]: sorted(r["tags"]) for r in api.queries().json()["results"]}
    assert tags == {"a": sorted([world.tags["brand"], world.tags["sale"]]), "b": [street],
                    "c": [world.tags["brand"]]}


def test_a_tag_of_another_project_is_unknown_here(world):
    world.run(lambda s: admin.create_tag(s, world.other_project_id, "elsewhere", "#123456"))
    _, rejected = run_import(world, HEADER + "a,en,US,elsewhere\n")
    assert reasons(rejected) == {2: "This project has no tag named “elsewhere”."}


# --- matching, twice and within the file ---------------------------------------------------------


def test_importing_the_same_file_twice_adds_nothing(world):
    content = HEADER + "".join(f"query {i},en,US,brand\n" for i in range(30)) + ",en,US,\n"
    first, _ = run_import(world, content, batch_rows=7)
    second, rejected = run_import(world, content, batch_rows=7)
    assert (first.added, first.present, first.rejected) == (30, 0, 1)
    assert (second.added, second.present, second.rejected) == (0, 30, 1)
    assert len(stored(world)) == 30


def test_duplicates_within_the_file_are_already_present_matched_as_patch_matches(world, api):
    """Text exactly (case-sensitive, after trimming), language and country in any case: the
    key PATCH /api/queries/many/tags-only finds a query by."""
    counts, _ = run_import(world, HEADER + "Shoes,EN,us,brand\n"
                                           "Shoes,en,US,sale\n"      # same key: present
                                           "  Shoes  ,En,Us,\n"      # same key, trimmed
                                           "shoes,en,US,\n"          # another text
                                           "Shoes,en,GB,\n",         # another country
                           batch_rows=2)  # the repeats fall in other batches
    assert (counts.added, counts.present) == (3, 2)
    assert stored(world) == {("Shoes", "en", "US"), ("shoes", "en", "US"), ("Shoes", "en", "GB")}
    # The first row won: its tag, not the repeat's.
    found = {(r["query"], r["country"]): r["tags"] for r in api.queries().json()["results"]}
    assert found[("Shoes", "US")] == [world.tags["brand"]]
    # PATCH finds the imported row by the same key, codes in any case.
    response = api.set_tags([{"query": "Shoes", "language": "EN", "country": "us",
                              "tagIds": [world.tags["sale"]]}])
    assert response.status_code == 200, response.text


def test_rows_are_added_in_the_order_of_their_text_across_the_whole_file(world):
    """The file is read first, then its rows added a range at a time in the order of the
    project's key: each range's rows go into the text indexes as one run, and the new ids
    follow that order across the whole file, whichever range is added first (on PostgreSQL two
    connections add ranges at once)."""
    texts = [f"query {i:02d}" for i in range(23)]
    content = HEADER + "".join(f"{text},en,US,\n" for text in reversed(texts))
    added_per_range = []

    class Ranges(imports.Sink):
        def done(self, batch, counts):
            added_per_range.append(counts.added)

    counts = world.run(lambda s: imports.import_file(
        s, world.project_id, io.BytesIO(content.encode()), Ranges(), batch_rows=5))
    assert counts.added == 23
    # Five batches read (nothing added yet), then five ranges added, the counts only growing.
    assert added_per_range[:5] == [0] * 5
    steps = [b - a for a, b in zip(added_per_range[4:], added_per_range[5:], strict=False)]
    assert sorted(steps) == [3, 5, 5, 5, 5] and added_per_range[-1] == 23
    by_id = world.run(lambda s: list(s.scalars(
        select(Query.query).where(Query.project_id == world.project_id).order_by(Query.id))))
    assert by_id == texts
    by_key = world.run(lambda s: list(s.scalars(
        select(Query.query).where(Query.project_id == world.project_id).order_by(Query.pk))))
    for start in range(0, 23, 5):  # one range's rows, one after the other
        one_range = texts[start:start + 5]
        assert [text for text in by_key if text in one_range] == one_range


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # SQLite's own settings
def test_the_staged_file_is_kept_on_disk_even_on_a_pooled_connection(world, monkeypatch):
    """SQLite keeps a connection's temporary tables in memory unless told otherwise, and once
    a connection has used them it refuses to move them inside a transaction: the import sets
    that before its first one, so a file of any size is staged in files, not memory."""
    engine = world.app.extensions["tagdesk_engine"]
    engine.dispose()

    @event.listens_for(engine, "connect")
    def used_temporary_storage(dbapi_connection, _record):
        dbapi_connection.execute("CREATE TEMP TABLE earlier (a INTEGER)")
        dbapi_connection.execute("DROP TABLE earlier")

    seen = []
    insert = bulk_load._SqliteLoad.insert

    def insert_and_look(self, first, last):
        seen.append(self.connection.exec_driver_sql("PRAGMA temp_store").scalar_one())
        return insert(self, first, last)

    monkeypatch.setattr(bulk_load._SqliteLoad, "insert", insert_and_look)
    try:
        counts, _ = run_import(world, HEADER + "".join(f"q{i},en,US,\n" for i in range(30)),
                               batch_rows=10)
    finally:
        event.remove(engine, "connect", used_temporary_storage)
    assert counts.added == 30
    assert seen == [1, 1, 1]  # FILE in every range


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # SQLite's write-ahead log
def test_the_write_ahead_log_starts_over_between_ranges(world):
    """Each range is copied from the write-ahead log into the database before the next one
    writes, so the next starts the log over: back to back, the log grew by every range, and
    every page read looks it up."""
    wal = Path(world.app.config["DATABASE_URL"].removeprefix("sqlite:///") + "-wal")
    sizes = []

    class Sizes(imports.Sink):
        def done(self, batch, counts):
            if counts.added:
                sizes.append(wal.stat().st_size)

    content = HEADER + "".join(f"query text number {i:05d},en,US,\n" for i in range(6000))
    counts = world.run(lambda s: imports.import_file(
        s, world.project_id, io.BytesIO(content.encode()), Sizes(), batch_rows=500))
    assert counts.added == 6000 and len(sizes) == 12
    # The log file keeps the size of its largest cycle, a range or two, not twelve. Two and a
    # little more when a checkpoint met a reader and the next range went on in the same log
    # (seen once in a loaded full run: 1,738,672 bytes against ranges of 844,632).
    assert sizes[-1] <= 3 * sizes[1], sizes


def test_an_import_that_fails_on_the_way_keeps_its_finished_ranges_and_again_adds_the_rest(
        world, api):
    """A failure while adding (here the sink's write of the second range) rolls that range
    back and drops the staged rows; the range committed before stays, and the same file imported
    again adds the rest, on a connection as good as new."""
    content = HEADER + "".join(f"row {i:02d},en,US,{'sale' if i % 2 else ''}\n"
                               for i in range(20))

    class FailsAtTheSecondRange(imports.Sink):
        def write(self, session, batch, counts):
            if counts.added > 5:
                raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError, match="the disk is full"):
        world.run(lambda s: imports.import_file(
            s, world.project_id, io.BytesIO(content.encode()), FailsAtTheSecondRange(),
            batch_rows=5))
    # One whole range stays: the first on SQLite; on PostgreSQL, whose two connections add
    # the first and the second range at once, whichever of them committed first.
    ranges = [{(f"row {i:02d}", "en", "US") for i in range(start, start + 5)}
              for start in (0, 5)]
    assert stored(world) in ranges[:world.run(lambda s: bulk_load.Load.on(
        s.connection(), world.project_id).writers)]

    counts, _ = run_import(world, content, batch_rows=5)
    assert (counts.added, counts.present) == (15, 5)
    found = {r["query"]: r["tags"] for r in api.queries(limit=50).json()["results"]}
    assert len(found) == 20
    assert all(found[f"row {i:02d}"] == ([world.tags["sale"]] if i % 2 else [])
               for i in range(20))


def test_queries_the_project_had_are_present_and_keep_their_tags(world, api):
    world.add_queries([("existing", "en", "US", ["local"])])
    counts, _ = run_import(world, HEADER + "existing,en,us,brand\nnew,en,US,\n")
    assert (counts.added, counts.present) == (1, 1)
    found = {r["query"]: r["tags"] for r in api.queries().json()["results"]}
    assert found == {"existing": [world.tags["local"]], "new": []}


def test_another_projects_queries_do_not_count(world):
    world.add_queries([("shared", "en", "US", [])], project_id=world.other_project_id)
    counts, _ = run_import(world, HEADER + "shared,en,US,\n")
    assert counts.added == 1


# --- files that are not CSV at all ---------------------------------------------------------------


NOT_CSV = {
    "empty": (b"", "The file is empty."),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
               "This is not a CSV file: it holds binary data, not text."),
    "workbook": (b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 40,
                 "This is a spreadsheet workbook (such as .xlsx), not a CSV file."),
    "utf-16": ((HEADER + "a,en,US,\n").encode("utf-16"),
               "The file is UTF-16 text, and an import reads UTF-8."),
    "latin-1": ((HEADER + "fine,de,DE,\nfine too,de,DE,\ngröße,de,DE,\n").encode("latin-1"),
                "The file is not UTF-8 text: line 4 has bytes that are not UTF-8"),
    "wrong header": (b"text,lang,country\nshoes,en,US\n",
                     "This file's first line is “text,lang,country”: it has no column "
                     "“query” or “language”; an import does not know the column “text” or "
                     "“lang”."),
    "data, no header": (b"shoes,en,US,brand\n", "it has no column “query”, “language” or "
                                                "“country”"),
    "tabs": (b"query\tlanguage\tcountry\ttags\nshoes\ten\tUS\t\n",
             "The first line must be the header query,language,country,tags (separated by "
             "commas or semicolons; tags may be left out). This file's first line is "),
    "repeated column": (b"query,language,country,query\n", "names the column “query” twice"),
    "blank first line": (b"\nquery,language,country\n", "this file's first line is empty"),
}


@pytest.mark.parametrize("name", NOT_CSV)
def test_a_file_that_is_not_csv_changes_nothing_and_says_why(world, name):
    content, sentence = NOT_CSV[name]
    # Good rows first, the bad bytes later: still nothing is written.
    with pytest.raises(imports.NotCsv) as raised:
        run_import(world, content, batch_rows=1)
    assert sentence in str(raised.value)
    assert str(raised.value).endswith(".")
    assert stored(world) == set()


def test_bytes_that_are_not_utf8_far_into_the_file_change_nothing(world):
    content = (HEADER + "".join(f"row {i},en,US,\n" for i in range(3000))).encode() + b"\xff\n"
    with pytest.raises(imports.NotCsv, match="line 3,002 has bytes that are not UTF-8"):
        run_import(world, content, batch_rows=100)
    assert stored(world) == set()


# --- memory stays flat ---------------------------------------------------------------------------


def test_rows_are_read_as_a_stream_one_batch_at_a_time(world):
    content = (HEADER + "".join(f"query number {i},en,US,\n" for i in range(6000))).encode()
    binary = io.BytesIO(content)
    header = imports.check_file(binary)
    batches = imports.read_batches(binary, header, {}, batch_rows=1000)
    first = next(batches)
    assert len(first.rows) == 1000
    assert first.bytes_read < len(content) // 3  # the rest is not read yet
    sizes = [len(batch.rows) for batch in batches]
    assert max(sizes) <= 1000 and sum(sizes) == 5000
    # Through insert_queries, a transaction a batch.
    counts, _ = run_import(world, content, batch_rows=1000)
    assert counts.added == 6000 and counts.bytes_read == len(content)


def test_rejected_rows_as_csv_are_safe_to_open_in_a_spreadsheet():
    rows = [imports.Rejected(2, "This project has no tag named “=x”.", "=HYPERLINK(\"x\")",
                             "+de", "-US", "@sale;=x"),
            imports.Rejected(3, "The query is empty.", "", "\tx", "US", "")]
    text = "".join(imports.rejected_csv(rows))
    assert text.startswith("\ufeff")
    parsed = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert parsed[0] == ["line", "reason", "query", "language", "country", "tags"]
    # A formula after a separator inside a cell is guarded too (weblib/spreadsheet_cells.py).
    assert parsed[1] == ["2", "This project has no tag named “=x”.", "'=HYPERLINK(\"x\")",
                         "'+de", "'-US", "'@sale;'=x"]
    assert parsed[2][3] == "'\tx"
    for row in parsed[1:]:
        assert not any(cell.startswith(FORMULA_STARTS) for cell in row)


# --- the command line ----------------------------------------------------------------------------


def test_the_command_line_uses_the_same_importer_and_prints_the_same_report(world, flask_cli,
                                                                           tmp_path):
    path = tmp_path / "queries.csv"
    path.write_text("query;language;country;tags\nok;en;US;brand\n;en;US;\nbad;en;US;nope\n"
                    "ok;EN;us;\n", encoding="utf-8-sig")
    result = flask_cli("import-queries", world.project_id, str(path))
    assert result.exit_code == 1  # some rows were rejected; the others are in
    assert result.stdout.strip().splitlines()[-1] == "1"
    assert result.stderr.splitlines() == [
        "Line 3: The query is empty.",
        "Line 4: This project has no tag named “nope”.",
        "1 added, 1 already present, 2 rejected.",
        "Rows name tags this project does not have: nope (1). Create them first, or import "
        "with the tags created.",
    ]
    again = flask_cli("import-queries", world.project_id, str(path))
    assert again.stdout.strip().splitlines()[-1] == "0"
    assert again.stderr.splitlines()[-2] == "0 added, 2 already present, 2 rejected."
    event = world.run(lambda s: s.scalars(select(OrgEvent).order_by(OrgEvent.id)).all()[-1])
    assert (event.action, event.subject, event.actor_email) == (
        "import.finished", "Shop search", None)
    assert event.detail == "queries.csv: 0 added, 2 already present, 2 rejected."


def test_the_command_line_refuses_a_file_that_is_not_csv_with_a_sentence(world, flask_cli,
                                                                          tmp_path):
    path = tmp_path / "book.xlsx"
    path.write_bytes(NOT_CSV["workbook"][0])
    result = flask_cli("import-queries", world.project_id, str(path))
    assert result.exit_code == 1
    # Not a workbook either, though it starts as one.
    assert "Nothing was imported: This file looks like a workbook (.xlsx) or a zip archive " \
        "but cannot be opened as one" in result.output
    assert "Traceback" not in result.output
    assert stored(world) == set()


# --- the settings area: upload, report, download -------------------------------------------------


class Browser:
    """A signed-in person of the world's organization, with the Flask test client."""

    def __init__(self, app, world):
        self.app = app
        self.world = world
        self.client = app.test_client()

    def csrf(self, path: str) -> str:
        page = self.client.get(path).get_data(as_text=True)
        match = CSRF_FIELD.search(page)
        assert match, page
        return match.group(1)

    def sign_in(self):
        token = self.csrf("/settings/signin")
        response = self.client.post("/settings/signin", data={
            "csrf_token": token, "email": EMAIL, "password": PASSWORD})
        assert response.status_code == 303
        return self

    def imports_path(self, project_id=None) -> str:
        return f"/settings/projects/{project_id or self.world.project_id}/imports"

    def upload(self, content: bytes | str, name="queries.csv", project_id=None, token=None):
        data = content.encode("utf-8") if isinstance(content, str) else content
        path = self.imports_path(project_id)
        token = token if token is not None else self.csrf(self.imports_path())
        return self.client.post(path, data={"csrf_token": token,
                                            "file": (io.BytesIO(data), name)},
                                content_type="multipart/form-data")

    def imported(self, content, name="queries.csv") -> tuple[str, str]:
        """Upload, wait for the job; (the report page's path, its HTML)."""
        response = self.upload(content, name)
        assert response.status_code == 303, response.get_data(as_text=True)
        location = response.headers["Location"]
        import_id = location.rsplit("/", 1)[-1]
        assert self.app.extensions["tagdesk_imports"].wait(import_id, 60)
        return location, self.client.get(location).get_data(as_text=True)


@pytest.fixture
def person(world):
    return world.with_administrator(EMAIL, PASSWORD)


@pytest.fixture
def browser(service_app, person) -> Browser:
    return Browser(service_app, person).sign_in()


def jobs(world) -> list[ImportJob]:
    return world.run(lambda s: list(s.scalars(select(ImportJob).order_by(ImportJob.created_at))))


def test_pages_ask_to_sign_in_and_the_upload_needs_its_csrf_token(service_app, person):
    visitor = Browser(service_app, person)
    path = visitor.imports_path()
    assert visitor.client.get(path).status_code == 303
    assert visitor.client.get(path + "/x").headers["Location"].startswith("/settings/signin")
    visitor.sign_in()
    refused = visitor.upload(HEADER + "a,en,US,\n", token="not-the-token")
    assert refused.status_code == 400
    assert "That form has expired" in refused.get_data(as_text=True)
    assert jobs(person) == [] and stored(person) == set()


def test_upload_report_and_download_and_the_rows_are_searchable_over_http(browser, api,
                                                                          live_service):
    world = browser.world
    page = browser.client.get(browser.imports_path()).get_data(as_text=True)
    assert '<label for="import-file">File</label>' in page
    assert "Import queries</button>" in page

    content = (HEADER + "laufschuhe,de,DE,brand;sale\n"
               "=HYPERLINK(\"https://evil.example\"),en,US,nope\n"
               ",en,US,\n"
               "laufschuhe,DE,de,\n"
               "running shoes,en,US,Brand\n")
    location, report = browser.imported(content, name="spring queries.csv")
    assert "The import is finished: 2 added, 1 already present, 2 rejected." in report
    assert "<dt>Rejected</dt><dd>2</dd>" in report
    assert "This project has no tag named “nope”." in report and "The query is empty." in report
    assert "Download rejected rows" in report

    # Searchable through the real API, with their tags.
    found = {r["query"]: sorted(r["tags"]) for r in api.queries(query="shoe").json()["results"]}
    assert found == {"running shoes": [world.tags["brand"]]}
    found = api.queries(tagIds=[world.tags["sale"]]).json()["results"]
    assert [(r["query"], r["language"], r["country"]) for r in found] == [
        ("laufschuhe", "de", "DE")]

    download = browser.client.get(location + "/rejected.csv")
    assert download.status_code == 200
    assert download.mimetype == "text/csv"
    assert 'filename="rejected-rows-spring-queries.csv"' in download.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(download.get_data(as_text=True).removeprefix("\ufeff"))))
    assert rows == [["line", "reason", "query", "language", "country", "tags"],
                    ["3", "This project has no tag named “nope”.",
                     "'=HYPERLINK(\"https://evil.example\")", "en", "US", "nope"],
                    ["4", "The query is empty.", "", "en", "US", ""]]

    # The activity log says who imported what.
    event = world.run(lambda s: s.scalars(select(OrgEvent).order_by(OrgEvent.id)).all()[-1])
    assert (event.action, event.subject, event.actor_email) == (
        "import.finished", "Shop search", EMAIL)
    assert event.detail == "spring queries.csv: 2 added, 1 already present, 2 rejected."

    # After a reload, the import page lists it, linking to the report.
    page = browser.client.get(browser.imports_path()).get_data(as_text=True)
    assert f'href="{location}">spring queries.csv</a>' in page
    assert "Finished" in page


def test_the_projects_page_has_the_import_section_with_its_last_imports(browser):
    project_page = f"/settings/projects/{browser.world.project_id}"
    page = browser.client.get(project_page).get_data(as_text=True)
    assert '<h2 id="import-heading">Import queries</h2>' in page
    assert f'action="{browser.imports_path()}"' in page
    assert 'enctype="multipart/form-data"' in page and "Recent imports" not in page
    location, _ = browser.imported(HEADER + "a,en,US,\n", name="first.csv")
    for number in range(6):
        browser.imported(HEADER + "a,en,US,\n", name=f"again {number}.csv")
    page = browser.client.get(project_page).get_data(as_text=True)
    assert "Recent imports" in page
    assert "again 5.csv" in page and "first.csv" not in page  # the last five
    assert f'href="{project_page}#import-heading"' in browser.client.get(location).get_data(
        as_text=True)


def test_the_import_pages_lead_names_every_kind_of_file_it_takes(browser):
    page = browser.client.get(browser.imports_path()).get_data(as_text=True)
    lead = re.search(r'<p class="lead">(.*?)</p>', page, re.S).group(1)
    assert "from a CSV or TSV file or an Excel workbook." in lead


def test_the_same_file_again_adds_nothing(browser):
    content = HEADER + "one,en,US,\ntwo,en,US,\n"
    browser.imported(content)
    _, report = browser.imported(content)
    assert "The import is finished: 0 added, 2 already present, 0 rejected." in report


def test_a_windows_1252_file_with_extra_columns_has_its_columns_chosen_first(browser):
    response = browser.upload("Keyword;Language;Country;Volume\ngröße;de;DE;10\n".encode(
        "cp1252"), name="export.csv")
    assert response.status_code == 303 and response.headers["Location"].endswith("/columns")
    page = browser.client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Read as Windows-1252 text separated by semicolons" in page
    assert "größe" in page  # the preview
    (job,) = jobs(browser.world)
    assert job.state == "choosing" and stored(browser.world) == set()


def test_a_file_that_is_not_csv_fails_with_its_sentence_and_changes_nothing(browser):
    # One column, not named as queries: nothing to choose from (a file of two or more has
    # its columns offered: tests/service/test_tool_exports.py).
    _, report = browser.imported(b"Clicks\n1\n", name="export.csv")
    assert "Nothing was imported: No line among the first 20 of this file names a query " \
        "column" in report
    assert stored(browser.world) == set()
    (job,) = jobs(browser.world)
    assert job.state == "failed"
    event = browser.world.run(lambda s: s.scalars(select(OrgEvent).order_by(OrgEvent.id)).all()[-1])
    assert event.action == "import.failed" and event.detail.startswith(
        "export.csv: Nothing was imported: No line among")


def test_an_import_whose_every_row_is_rejected_is_a_failure_with_its_reasons(browser):
    content = HEADER + "".join(f"row {i},en,US,product;price\n" for i in range(3))
    _, report = browser.imported(content)
    (job,) = jobs(browser.world)
    assert job.state == "failed"
    assert ("Nothing was imported: all 3 rows were rejected. Rows name tags this project "
            "does not have: product (3), price (3).") in report.replace("&#34;", "\"")


def test_no_file_chosen_is_a_sentence_on_the_form(browser):
    response = browser.client.post(browser.imports_path(), data={
        "csrf_token": browser.csrf(browser.imports_path())}, content_type="multipart/form-data")
    assert response.status_code == 400
    assert ("Choose a file to import: CSV, TSV or an Excel workbook."
            in response.get_data(as_text=True))
    assert jobs(browser.world) == []


def test_the_report_lists_the_first_rejected_rows_and_the_download_has_them_all(browser):
    content = HEADER + "".join(f"row {i},en,US,nope\n" for i in range(150))
    location, report = browser.imported(content)
    assert "The first 100 of 150 rejected rows; the download has them all." in report
    assert report.count("This project has no tag named “nope”.") == 100
    download = browser.client.get(location + "/rejected.csv").get_data(as_text=True)
    assert len(download.strip().splitlines()) == 151


def test_another_organizations_project_and_imports_are_not_found(browser):
    world = browser.world
    _, _, their_project = world.new_org()
    assert browser.client.get(browser.imports_path(their_project)).status_code == 404
    assert browser.upload(HEADER + "a,en,US,\n", project_id=their_project).status_code == 404
    location, _ = browser.imported(HEADER + "a,en,US,\n")
    import_id = location.rsplit("/", 1)[-1]
    other = f"{browser.imports_path(world.other_project_id)}/{import_id}"
    for path in (other, other + "/progress", other + "/rejected.csv"):
        assert browser.client.get(path).status_code == 404
    # Strings that are no project's id (on PostgreSQL not even a uuid) are not found either.
    for project_id in ("not-a-project", world.project_id.upper(), world.project_id + "0"):
        assert browser.client.get(browser.imports_path(project_id)).status_code == 404
        path = f"{browser.imports_path(project_id)}/{import_id}"
        for page in (path, path + "/progress", path + "/rejected.csv"):
            assert browser.client.get(page).status_code == 404, page
        assert browser.upload(HEADER + "a,en,US,\n", project_id=project_id).status_code == 404


def test_the_upload_is_kept_readable_by_its_owner_only_and_removed_when_done(tmp_path):
    folder = tmp_path / "imports"
    size = import_jobs.save_upload(io.BytesIO(b"x" * 3_000_000), folder, "some-id")
    path = import_jobs.upload_path(folder, "some-id")
    assert size == 3_000_000 and path.stat().st_size == size
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_the_uploaded_file_is_gone_once_its_import_has_ended(browser, service_app):
    browser.imported(HEADER + "a,en,US,\n")
    assert os.listdir(service_app.config["IMPORTS_FOLDER"]) == []


# --- request sizes -------------------------------------------------------------------------------


def test_a_large_upload_is_accepted_there_and_nowhere_else(browser, service_app):
    content = HEADER + f"{'a long query ' * 70},en,US,brand\n" * 2500
    assert len(content) > 2 * 1024 * 1024
    _, report = browser.imported(content)
    assert "The import is finished: 1 added, 2,499 already present, 0 rejected." in report

    # Everywhere else the service takes 1 MiB.
    body = b"x" * (1024 * 1024 + 1)
    token = browser.csrf("/settings/api/generate")
    for path in ("/settings/api/generate", "/settings/signout"):
        response = browser.client.post(path, data={"csrf_token": token, "name": body.decode()})
        assert response.status_code == 413, path
    api = service_app.test_client().post("/api/queries/list", data=body,
                                         content_type="application/json", headers={
                                             "x-api-key": browser.world.key,
                                             "x-project-id": browser.world.project_id})
    assert api.status_code == 413


def test_a_file_over_the_import_limit_is_refused_with_the_limit(service_app, person):
    service_app.config["IMPORT_MAX_BYTES"] = 2 * 1024 * 1024
    browser = Browser(service_app, person).sign_in()
    response = browser.upload(HEADER + "x" * (3 * 1024 * 1024))
    assert response.status_code == 413
    page = response.get_data(as_text=True)
    assert "That file is too large" in page and "up to 2 MiB" in page
    assert jobs(person) == []


def test_before_signing_in_the_upload_takes_1_mib_too(service_app, person):
    visitor = Browser(service_app, person)
    token = visitor.csrf("/settings/signin")
    response = visitor.client.post(visitor.imports_path(), data={
        "csrf_token": token, "file": (io.BytesIO(b"x" * (2 * 1024 * 1024)), "big.csv")},
        content_type="multipart/form-data")
    assert response.status_code == 413
    assert "That file is too large" not in response.get_data(as_text=True)


# --- the job: progress, reloads, interruptions ---------------------------------------------------


def test_a_large_import_runs_as_a_job_whose_progress_survives_a_reload(service_app, browser):
    service_app.config.update(IMPORT_WAIT_SECONDS=0, IMPORT_BATCH_ROWS=500)
    content = HEADER + "".join(f"query {i:06d},en,US,sale\n" for i in range(6000))
    response = browser.upload(content, name="big.csv")
    location = response.headers["Location"]
    progress_url = location + "/progress"

    seen = []

    def finished():
        progress = browser.client.get(progress_url).get_json()
        seen.append(progress)
        return progress["done"]

    # A reload of the report page at any moment shows the job, never an error.
    page = browser.client.get(location).get_data(as_text=True)
    assert "Import of “big.csv”" in page
    assert wait_until(finished, timeout=120, interval=0.05)
    assert all(p["state"] in ("queued", "running", "finished") for p in seen)
    assert [p["percent"] for p in seen] == sorted(p["percent"] for p in seen)
    last = seen[-1]
    assert (last["state"], last["percent"], last["added"], last["rows"]) == (
        "finished", 100, 6000, 6000)
    assert last["text"] == "6,000 added, 0 already present, 0 rejected."
    report = browser.client.get(location).get_data(as_text=True)
    assert "The import is finished: 6,000 added" in report
    assert "<progress" not in report


def test_while_it_runs_the_page_shows_a_progress_bar_that_polls(service_app, browser, world):
    job_id = world.run(lambda s: import_jobs.create(
        s, world.org_id, world.project_id, None, EMAIL, "running.csv", 1000, "a" * 36,
        import_jobs.process_owner()).id)

    def running(session):
        job = session.get(ImportJob, job_id)
        job.state, job.bytes_read, job.rows, job.rejected = "running", 250, 10, 1
        job.heartbeat_at = utcnow()

    world.run(running)
    location = f"{browser.imports_path()}/{job_id}"
    page = browser.client.get(location).get_data(as_text=True)
    assert '<progress max="100" value="7"' in page
    assert f'data-import-progress="{location}/progress"' in page
    assert "settings.js" in page
    progress = browser.client.get(location + "/progress").get_json()
    # A quarter of the file read: 7 % of the job (reading is 30 % of it).
    assert progress == {"state": "running", "done": False, "percent": 7, "bytesRead": 250,
                        "fileSize": 1000, "rows": 10, "added": 0, "present": 0, "rejected": 1,
                        "blankLines": 0, "taggedByRules": 0,
                        "text": "7% done: reading the file (10 rows so far, 1 rejected)."}
    listed = browser.client.get(browser.imports_path()).get_data(as_text=True)
    assert "Importing, 7%" in listed

    def adding(session):
        job = session.get(ImportJob, job_id)
        job.bytes_read, job.rows, job.added, job.present = 1000, 41, 16, 4

    world.run(adding)
    progress = browser.client.get(location + "/progress").get_json()
    # The file read, half of its 40 good rows added or found present: 30 + 35 %.
    assert (progress["percent"], progress["text"]) == (
        65, "65% done: adding the rows (16 added, 4 already present, 1 rejected so far).")


def dead_pid() -> int:
    """The pid of a process that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_job_whose_process_died_is_shown_interrupted_never_running(browser, world):
    """Which jobs are dead (an owner process gone, a silence longer than its state allows) is
    the one rule of weblib/job_lifecycle.py (tests/test_job_lifecycle.py); an import's own:
    its page, its sentence, its report and its entry in the organization's record."""
    owner, heartbeat = f"{socket.gethostname()}:{dead_pid()}:abc", utcnow()

    def make(session):
        job = import_jobs.create(session, world.org_id, world.project_id, world.user_id,
                                 EMAIL, "lost.csv", 1000, "b" * 36, owner)
        job.state, job.heartbeat_at, job.added, job.rows, job.bytes_read = (
            "running", heartbeat, 40, 40, 400)
        return job.id

    job_id = world.run(make)
    location = f"{browser.imports_path()}/{job_id}"
    progress = browser.client.get(location + "/progress").get_json()
    assert (progress["state"], progress["done"]) == ("interrupted", True)
    report = browser.client.get(location).get_data(as_text=True)
    assert "Tagdesk stopped working on this import before it finished" in report
    assert "import the same file again to add the rest" in report
    assert "<dt>Added</dt><dd>40</dd>" in report
    assert "Interrupted" in browser.client.get(browser.imports_path()).get_data(as_text=True)
    event = world.run(lambda s: s.scalars(select(OrgEvent).order_by(OrgEvent.id)).all()[-1])
    assert (event.action, event.actor_email) == ("import.failed", EMAIL)
    assert event.detail.startswith("lost.csv: Tagdesk stopped working")


def test_the_settings_area_hands_the_lifecycle_its_stale_time(browser, world):
    """A job of another host silent for longer than IMPORT_STALE_SECONDS (60 s) is shown
    interrupted; one that beat just now is left running."""
    def make(session, import_id, heartbeat):
        job = import_jobs.create(session, world.org_id, world.project_id, None, EMAIL,
                                 "elsewhere.csv", 1000, import_id, "another-host:123:abc")
        job.state, job.heartbeat_at = "running", heartbeat
        return job.id

    silent = world.run(lambda s: make(s, "c" * 36, utcnow() - timedelta(minutes=5)))
    live = world.run(lambda s: make(s, "f" * 36, utcnow()))
    states = {job_id: browser.client.get(
        f"{browser.imports_path()}/{job_id}/progress").get_json()["state"]
        for job_id in (silent, live)}
    assert states == {silent: "interrupted", live: "running"}


def queue_upload(world, folder, upload_id: str, name: str, rows: int) -> None:
    """An import of this process, queued with its upload in `folder`: `rows` plain queries
    q0, q1, … (en, US)."""
    content = (HEADER + "".join(f"q{i},en,US,\n" for i in range(rows))).encode()
    import_jobs.save_upload(io.BytesIO(content), folder, upload_id)
    world.run(lambda s: import_jobs.create(s, world.org_id, world.project_id, None, None, name,
                                           len(content), upload_id, import_jobs.process_owner()))


def test_a_job_given_up_on_meanwhile_commits_nothing_more(service_app, world, tmp_path,
                                                          monkeypatch):
    """Its process was only slow: once the job is marked interrupted, its next range of rows
    is not committed."""
    folder = tmp_path / "jobs"
    queue_upload(world, folder, "d" * 36, "slow.csv", rows=20)
    done = import_jobs.JobSink.done
    given_up = {"done": False}

    def given_up_on_after_the_first_batch(self, batch, counts):
        done(self, batch, counts)
        if counts.added and not given_up["done"]:  # the first range is committed
            given_up["done"] = True
            with service_app.extensions["tagdesk_engine"].begin() as connection:
                connection.execute(ImportJob.__table__.update().values(state="interrupted"))

    monkeypatch.setattr(import_jobs.JobSink, "done", given_up_on_after_the_first_batch)
    state = import_jobs.run(service_app.extensions["tagdesk_sessionmaker"], "d" * 36, folder,
                            batch_rows=5)
    assert state == "interrupted"
    # The rows are added in the order of their text, five places a range: the first range on
    # SQLite; on PostgreSQL, whose two connections add the first and second at once,
    # whichever committed first.
    ordered = sorted(f"q{i}" for i in range(20))
    ranges = [{(text, "en", "US") for text in ordered[start:start + 5]} for start in (0, 5)]
    assert stored(world) in ranges[:world.run(lambda s: bulk_load.Load.on(
        s.connection(), world.project_id).writers)]
    (job,) = jobs(world)
    assert (job.state, job.added) == ("interrupted", 5)
    assert not import_jobs.upload_path(folder, "d" * 36).exists()


def test_rejected_rows_are_kept_with_the_job(browser):
    location, _ = browser.imported(HEADER + "a,en,US,nope\n")
    import_id = location.rsplit("/", 1)[-1]
    kept = browser.world.run(lambda s: s.scalar(
        select(func.count()).select_from(ImportRejection)
        .where(ImportRejection.import_id == import_id)))
    assert kept == 1


def test_migration_0016_creates_exactly_the_import_tables(database_url):
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert [d for d in differences if "import" in repr(d)] == []
    finally:
        engine.dispose()


def test_after_a_large_import_the_planners_statistics_are_fresh(service_app, world, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setattr(import_jobs, "ANALYZE_AFTER_ROWS", 3)
    folder = tmp_path / "jobs"
    queue_upload(world, folder, "e" * 36, "big.csv", rows=5)
    engine = service_app.extensions["tagdesk_engine"]
    statistics = ("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'queries'"
                  if engine.dialect.name == "sqlite" else
                  "SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'queries'")

    def analyzed():
        with engine.connect() as connection:
            return connection.exec_driver_sql(statistics).scalar()

    before = analyzed()
    assert import_jobs.run(service_app.extensions["tagdesk_sessionmaker"], "e" * 36,
                           folder) == "finished"
    assert analyzed() not in (before, None)
