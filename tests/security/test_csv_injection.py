"""Hostile data in CSV exports: a query text, a language or country code, or a tag name that
starts with a formula character (=, +, -, @) is written with a leading apostrophe, so that a
spreadsheet shows it as text instead of running it — in the streamed download and in the
file an export job writes.
"""

from __future__ import annotations

import csv
import io
import re

import pytest

from tests.support.dashboard import csrf_token
from tests.support.security import make_org, start_site

FORMULA_STARTS = ("=", "+", "-", "@")
ROWS = [
    ("=HYPERLINK(\"https://evil.example\",\"click\")", "=cmd|' /C calc'!A0", "@SUM(1)",
     ["=brand"]),
    ("+1+1", "+de", "-US", ["@sale"]),
    ("-2+3", "en", "=1", []),
    ("@mention", "-x", "+y", ["=brand", "@sale"]),
    ("plain text", "en", "US", []),
]
TAGS = {"=brand": "#1f77b4", "@sale": "#ff7f0e"}


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("csv"), sqlite_template, EXPORT_STREAM_LIMIT=2)
    site.org = make_org(site.service_app, "Acme", {"Shop search": ROWS}, TAGS)
    site.visitor_ = site.visitor()
    assert site.visitor_.sign_in(site.org.key).status_code == 303
    yield site
    site.stop()


def assert_spreadsheet_safe(text: str) -> None:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["query", "language", "country", "tags", "updated"]
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


def test_an_export_jobs_file_is_safe_to_open_in_a_spreadsheet(site):
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
    assert_spreadsheet_safe(download.text)
