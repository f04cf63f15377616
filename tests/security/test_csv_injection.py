"""Hostile data in CSV exports: a query text, a language or country code, or a tag name that
starts with a formula character (=, +, -, @) is written with a leading apostrophe, so that a
spreadsheet shows it as text instead of running it — in the streamed download and in the
file an export job writes.

A formula after a comma, a semicolon or a tab inside a cell (`semi;=1+1;`) is a cell of its
own in a spreadsheet whose list separator is that character: it gets its apostrophe too, and
the cell is in double quotes — in both exports and in the settings area's file of rejected
rows. The rule itself (weblib/spreadsheet_cells.py) is proved on every string by
tests/security/test_spreadsheet_cells.py.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.support.dashboard import csrf_token
from tests.support.security import make_org, start_site
from tests.support.waiting import wait_until

FORMULA_STARTS = ("=", "+", "-", "@")
EMAIL = "ann@acme.example"
# Formulas after a separator inside a cell: read as cells of their own by a spreadsheet whose
# list separator is a semicolon, a comma or a tab.
SEPARATED = [
    ("semi;=1+1;", "en", "US", ["plain", "ok;=evil"]),
    ("a,=HYPERLINK(\"https://evil.example\",\"click\")", "en", "US", []),
    ("x; -2+3", "en", "GB", ["=brand", "@sale"]),
    ("list;@SUM(1);+1", "fr", "FR", ["@sale"]),
    ("quoted,\"=1+1", "en", "US", []),
    ("codes in cells", "de;=1", "x,@y", []),
]
ROWS = [
    ("=HYPERLINK(\"https://evil.example\",\"click\")", "=cmd|' /C calc'!A0", "@SUM(1)",
     ["=brand"]),
    ("+1+1", "+de", "-US", ["@sale"]),
    ("-2+3", "en", "=1", []),
    ("@mention", "-x", "+y", ["=brand", "@sale"]),
    ("plain text", "en", "US", []),
    *SEPARATED,
]
TAGS = {"=brand": "#1f77b4", "@sale": "#ff7f0e", "plain": "#2ca02c", "ok;=evil": "#d62728"}


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("csv"), sqlite_template, EXPORT_STREAM_LIMIT=2)
    site.org = make_org(site.service_app, "Acme", {"Shop search": ROWS}, TAGS, email=EMAIL)
    site.visitor_ = site.visitor()
    assert site.visitor_.sign_in(site.org.key).status_code == 303
    yield site
    site.stop()


def assert_spreadsheet_safe(text: str) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    # And a column per number the service keeps (none is ever negative: no cell of them
    # starts with "-").
    assert rows[0] == ["query", "language", "country", "tags", "updated", "clicks",
                       "impressions", "ctr", "position", "volume", "cpc", "difficulty"]
    assert len(rows) == len(ROWS) + 1
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(FORMULA_STARTS), (cell, row)
    exported = {row[0] for row in rows[1:]}
    assert "'=HYPERLINK(\"https://evil.example\",\"click\")" in exported
    assert "plain text" in exported


def test_the_streamed_download_is_safe_to_open_in_a_spreadsheet(site):
    download = site.visitor_.get(f"/projects/{site.org.project_id}/export.csv")
    assert download.status_code == 200
    assert_spreadsheet_safe(download.text)


def export_jobs_file(site) -> str:
    """The file of an export job started from the queries page, as downloaded."""
    project = site.org.project_id
    visitor = site.visitor_
    token = csrf_token(visitor.get(f"/projects/{project}/queries").text)
    started = visitor.post(f"/projects/{project}/export", data={"csrf_token": token},
                           headers={"HX-Request": "true"})
    assert started.status_code == 200
    link = re.search(r'href="(/projects/[^"]+/download)"',
                     visitor.get(f"/projects/{project}/activity").text)
    assert link, "the export job's download is not offered"
    download = visitor.get(link.group(1))
    assert download.status_code == 200
    return download.text


def test_an_export_jobs_file_is_safe_to_open_in_a_spreadsheet(site):
    assert_spreadsheet_safe(export_jobs_file(site))


# --- formulas after a separator inside a cell --------------------------------------------------


def spreadsheet_cells(text: str):
    """Every cell a spreadsheet could make of a CSV text: read with a comma, a semicolon or a
    tab as its separator (honouring double quotes), and split at every one of them and at line
    breaks by a program that ignores quotes."""
    for delimiter in (",", ";", "\t"):
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            yield from row
    yield from re.split(r"[,;\t\r\n]", text)


def runs_as_formula(cell: str) -> bool:
    """Whether a spreadsheet could run the cell: after any spaces or double quotes (which a
    program may drop), it starts with a formula character, a tab or a line break."""
    return cell.lstrip(' "').startswith((*FORMULA_STARTS, "\t", "\r", "\n"))


def assert_no_formula_in_any_locale(text: str) -> None:
    formulas = [cell for cell in spreadsheet_cells(text) if runs_as_formula(cell)]
    assert formulas == []


def test_a_formula_after_a_separator_in_a_cell_is_guarded_in_the_streamed_download(site):
    download = site.visitor_.get(f"/projects/{site.org.project_id}/export.csv")
    assert download.status_code == 200
    assert_no_formula_in_any_locale(download.text)
    # The cells themselves come back whole from a reader of commas.
    exported = {row[0] for row in csv.reader(io.StringIO(download.text))}
    assert "semi;'=1+1;" in exported and "x;' -2+3" in exported


def test_a_formula_after_a_separator_in_a_cell_is_guarded_in_an_export_jobs_file(site):
    assert_no_formula_in_any_locale(export_jobs_file(site))


def test_a_formula_after_a_separator_in_a_cell_is_guarded_in_the_rejected_rows_file(site):
    """Rows the settings area's import rejects, as the file had them: the download of rejected
    rows guards them as the export does (tabs, which an import rejects, included)."""
    visitor = site.visitor()
    assert visitor.settings_sign_in(EMAIL).status_code == 303
    imports = f"/settings/projects/{site.org.project_id}/imports"
    content = ('query,language,country,tags\r\n'
               '"semi;=1+1;",en,US,nope\r\n'
               '"a,=HYPERLINK(""https://evil.example"")",en,US,nope\r\n'
               'x;@SUM(1),de;-1,DE,"=brand;+nope"\r\n'
               '"tab\t=1+1",en,"US\t@x",\r\n')
    uploaded = visitor.post(imports, data={"csrf_token": csrf_token(visitor.get(imports).text)},
                            files={"file": ("hostile.csv", content.encode(), "text/csv")})
    assert uploaded.status_code == 303, uploaded.text[:500]
    report = uploaded.headers["Location"]
    assert wait_until(lambda: visitor.get(report + "/progress").json()["done"], 30, 0.05)
    assert visitor.get(report + "/progress").json()["rejected"] == 4
    download = visitor.get(report + "/rejected.csv")
    assert download.status_code == 200
    text = download.content.decode("utf-8-sig")
    assert_no_formula_in_any_locale(text)
    rows = list(csv.reader(io.StringIO(text)))
    assert [row[2] for row in rows[1:]] == [
        "semi;'=1+1;", "a,'=HYPERLINK(\"https://evil.example\")", "x;'@SUM(1)", "tab\t'=1+1"]
