"""Workbooks and zip archives built to cost what they do not hold, uploaded over real HTTP and
given to the command line: each is refused with a sentence, and nothing ends, stalls or
exhausts the process that reads it.

- A 2 KB .xlsx with cells at A1 and XFD1048576, an .xlsx of one row of a million cells, an
  .ods whose repeats declare a hundred million cells, an .xlsx of millions of shared strings,
  a small table with a value far below it (a box of ten million cells, nearly all empty): in
  a service of its own (its peak memory is its own), another organization's calls timed
  meanwhile.
- Search Console archives with a bad CRC, an encrypted member, an unsupported compression
  method, a member cut short, a member that inflates far past its declared size, the archive
  cut in half; a workbook whose sheet has a bad CRC: the Columns page (or the import's report)
  says the usual sentence, never a 500.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py),
except the service of its own (memory, not the database).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import requests

from service.imports import import_jobs
from tests.support import hostile_files
from tests.support.imports import HEADER, Administrator, ServiceProcess, Timed
from tests.support.xlsx import workbook

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"
UNREADABLE = "is damaged or cannot be read"
FAR = "a sheet may reach at most row 1,048,576 and column 16,384, its rows × columns may be " \
      "at most 20,000,000 cells, and at most 2,000,000 of them (or as many as hold a value) " \
      "may be empty"
# The most a hostile upload may add to the service's peak memory.
PEAK_MIB = 64

HOSTILE_WORKBOOKS = {
    "far-cell.xlsx": (hostile_files.far_cell_xlsx, "as far as row 1,048,576 and column 16,384"),
    "wide-row.xlsx": (hostile_files.wide_row_xlsx, FAR),
    "repeats.ods": (lambda: hostile_files.repeated_ods(1_000_000, 100),
                    "as far as row 1,000,001 and column 100"),
    "strings.xlsx": (lambda: hostile_files.shared_strings_xlsx(3_000_000),
                     "holds 3,000,000 shared strings, more than its cells with a value (6)"),
    "empty-box.xlsx": (lambda: hostile_files.far_cell_xlsx(far_cell='<c r="T500000"><v>1</v>'
                                                                   '</c>'),
                       "as far as row 500,000 and column 20, 9,999,993 of its 10,000,000 "
                       "cells empty: " + FAR),
}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # memory, not the database
def test_hostile_workbooks_are_refused_without_ending_or_filling_the_service(database_url,
                                                                           tmp_path):
    """Each hostile workbook, uploaded to a service in a process of its own: its import fails
    with the sentence naming the bounds, the service's peak memory grows by less than
    PEAK_MIB, and another organization's calls all answer, none slower than a second.
    (Before: the far cell ended the process, SIGABRT; a row of a million cells took +100 MiB,
    the repeats +600 MiB.) The box of ten million cells, nearly all empty, is within the
    box bound and refused for its empty space: calamine would have built it whole."""
    server = ServiceProcess(database_url, tmp_path, {"IMPORT_WAIT_SECONDS": 0})
    try:
        world = server.world
        person = Administrator(server.url, world["email"], world["password"])
        # A small workbook's Columns page first, so that what every workbook's reading loads
        # is in the idle figure.
        warm = workbook({"Sheet1": [["query", "language", "country"], ["warm", "en", "US"]]})
        columns = person.upload(world["project_id"], warm, name="warm.xlsx")
        assert person.get(columns).status_code == 200
        idle = server.status("VmHWM")
        with Timed(server.url, world["other_key"]) as timed:
            for name, (content, sentence) in HOSTILE_WORKBOOKS.items():
                report = person.upload(world["project_id"], content(), name=name)
                assert not report.endswith("/columns"), name
                progress = person.finished(report, timeout=60)
                page = person.get(report).text
                assert progress["state"] == "failed" and sentence in page, (name, page[-3000:])
                grown = server.status("VmHWM") - idle
                assert grown < PEAK_MIB << 20, f"{name}: peak +{grown / 2**20:.0f} MiB"
        answer = requests.get(server.url + "/api/projects/list",
                              headers={"x-api-key": world["other_key"]}, timeout=30)
        assert answer.status_code == 200
        assert len(timed.seconds) >= 5 and max(timed.seconds) < 1.0, sorted(timed.seconds)[-5:]
    finally:
        server.stop()
        shutil.rmtree(tmp_path / "imports", ignore_errors=True)


def test_the_command_line_refuses_hostile_workbooks_with_the_bounds(world, flask_cli,
                                                                    tmp_path):
    """The command line reads workbooks as the settings do: a row of a million cells and
    repeats of a hundred million are refused with the sentence, nothing imported."""
    for name, content in (("wide.xlsx", hostile_files.wide_row_xlsx()),
                          ("repeats.ods", hostile_files.repeated_ods(1_000_000, 100))):
        path = tmp_path / name
        path.write_bytes(content)
        done = flask_cli("import-queries", world.project_id, path)
        assert done.exit_code == 1, done.output
        assert FAR in done.output, done.output
        assert "added" not in done.output


def test_an_opendocument_spreadsheets_sheets_are_bounded_together(world, flask_cli, tmp_path):
    """calamine holds every sheet of an .ods at once: sheets each within the bounds are
    refused when together they are not."""
    path = tmp_path / "sheets.ods"
    path.write_bytes(hostile_files.repeated_ods(800_000, 10, sheets=3))  # 8,000,010 cells each
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 1, done.output
    assert "The sheets of this spreadsheet span 24,000,030 cells together" in done.output, \
        done.output
    assert "may together reach at most row 1,048,576 and column 16,384, its rows × columns " \
        "may be at most 20,000,000 cells" in done.output


def test_an_empty_styled_cell_far_away_is_no_reason_to_refuse(api, world, flask_cli, tmp_path):
    """Only cells with a value make a sheet's extent (as calamine reads it): an empty styled
    cell at XFD1048576, and a <dimension> that claims the whole sheet, are passed over."""
    content = hostile_files.far_cell_xlsx(dimension="A1:XFD1048576",
                                          far_cell='<c r="XFD1048576" s="1"/>')
    path = tmp_path / "styled.xlsx"
    path.write_bytes(content)
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 0, done.output
    assert {q["query"] for q in api.queries().json()["results"]} == {"boots"}


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(live_service, world) -> Administrator:
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def test_a_far_cell_workbook_waiting_on_its_columns_page_is_said_at_every_visit(
        world, administrator, service_config):
    """A workbook left on its Columns page (uploaded when its sheet was not yet measured)
    whose cells reach XFD1048576: each visit of the page says why it cannot be read, and the
    service answers on (each visit ended the process before)."""
    good = workbook({"Sheet1": [["query", "language", "country"], ["boots", "en", "US"]]})
    columns = administrator.upload(world.project_id, good, name="keywords.xlsx")
    assert columns.endswith("/columns")
    import_id = columns.rstrip("/").split("/")[-2]
    stored = import_jobs.upload_path(Path(service_config["IMPORTS_FOLDER"]), import_id)
    stored.write_bytes(hostile_files.far_cell_xlsx())
    for _ in range(2):
        page = administrator.get(columns)
        assert page.status_code == 200
        assert "as far as row 1,048,576 and column 16,384" in page.text, page.text[-3000:]


@pytest.mark.parametrize("how", hostile_files.DAMAGES)
def test_a_damaged_zip_archive_is_one_sentence_never_a_500(api, world, administrator, how):
    """A Search Console archive damaged `how`: its Columns page (or, for an archive whose
    directory cannot be read, its import's report) says the archive cannot be read; nothing
    is imported, and the service answers on."""
    content = hostile_files.damaged_zip(how, inflated=64 << 20)
    report = administrator.upload(world.project_id, content, name="Performance.zip")
    if report.endswith("/columns"):
        page = administrator.get(report)
        assert page.status_code == 200, page.text[-2000:]
        text = page.text
    else:
        assert administrator.finished(report)["state"] == "failed"
        text = administrator.get(report).text
    assert UNREADABLE in text or "cannot be opened as one" in text, text[-3000:]
    assert api.queries().json()["results"] == []
    assert api.projects().status_code == 200


def test_the_command_line_says_the_same_of_a_damaged_archive(world, flask_cli, tmp_path):
    for how in hostile_files.DAMAGES:
        path = tmp_path / f"{how}.zip"
        path.write_bytes(hostile_files.damaged_zip(how, inflated=64 << 20))
        done = flask_cli("import-queries", world.project_id, path, "--language", "en",
                         "--country", "US")
        assert done.exit_code == 1, (how, done.output)
        assert UNREADABLE in done.output or "cannot be opened as one" in done.output, \
            (how, done.output)


def test_a_workbook_whose_sheet_has_a_bad_crc_is_refused(world, flask_cli, tmp_path,
                                                        administrator):
    content = hostile_files.bad_crc_workbook(
        workbook({"Sheet1": [["query", "language", "country"], ["boots", "en", "US"]]}))
    path = tmp_path / "bad.xlsx"
    path.write_bytes(content)
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 1 and UNREADABLE in done.output, done.output
    report = administrator.upload(world.project_id, content, name="bad.xlsx")
    if report.endswith("/columns"):
        assert UNREADABLE in administrator.get(report).text
    else:
        assert administrator.finished(report)["state"] == "failed"
        assert UNREADABLE in administrator.get(report).text


def test_an_ordinary_upload_still_goes_in(api, world, administrator):
    report = administrator.upload(world.project_id, HEADER + "boots,en,US,\n")
    assert administrator.finished(report)["state"] == "finished"
