"""The file of an import's rejected rows keeps each row's numbers: a Search Console export
imported through the settings area over real HTTP, a row rejected, its rejected-rows CSV
downloaded with the row's clicks, impressions, CTR and position as the import read them, and,
fixed, imported again with them. SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import csv
import io

import pytest

from service.imports import imports
from tests.support.imports import Administrator

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def table(rows: list[list]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def test_the_rejected_rows_file_has_the_rows_numbers(administrator, world, api, flask_cli,
                                                     tmp_path):
    content = table([["Top queries", "Clicks", "Impressions", "CTR", "Position"],
                     ["laufschuhe", "1,412", "11,743", "12.02%", "7.2"],
                     ["", "37", "2,048", "1.81%", "12.5"],
                     ["x" * 1001, "5", "50", "10%", "3"]])
    columns = administrator.upload(world.project_id, content, name="Queries.csv")
    form = {"csrf_token": administrator.csrf(columns), "query_column": "Top queries",
            "language": "en", "country": "US"}
    started = administrator.post(columns, data={**form, "action": "import"})
    report = started.headers["Location"]
    assert administrator.finished(report)["rejected"] == 2
    download = administrator.get(report + "/rejected.csv")
    assert download.status_code == 200
    rows = list(csv.reader(io.StringIO(download.text.removeprefix("\ufeff"))))
    assert rows[0] == ["line", "reason", "query", "language", "country", "tags", "clicks",
                       "impressions", "ctr", "position"]
    assert rows[1] == ["3", "The query is empty.", "", "en", "US", "", "37", "2,048", "1.81%",
                       "12.5"]
    assert rows[2][0] == "4" and rows[2][6:] == ["5", "50", "10%", "3"]

    # Fixed, the file imports again with its numbers.
    rows[1][2] = "trail schuhe"
    path = tmp_path / "fixed.csv"
    path.write_bytes(table(rows[:2]))
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 0, done.output
    found = api.queries(limit=10, include=["metrics"]).json()["results"]
    assert {q["query"]: q["metrics"] for q in found}["trail schuhe"] == {
        "clicks": 37, "impressions": 2048, "ctr": round(37 / 2048, 6), "position": 12.5}


def test_rejected_rows_as_csv_with_numbers_and_without():
    rows = [imports.Rejected(2, "The query is empty.", "", "en", "US", "",
                             (("clicks", "=1+1"), ("volume", "1,234"))),
            imports.Rejected(3, "A field on this line is longer than 1,000 characters.",
                             numbers=(("clicks", ""), ("volume", "")))]
    parsed = list(csv.reader(io.StringIO("".join(imports.rejected_csv(rows))[1:])))
    assert parsed == [["line", "reason", "query", "language", "country", "tags", "clicks",
                       "volume"],
                      ["2", "The query is empty.", "", "en", "US", "", "'=1+1", "1,234"],
                      ["3", "A field on this line is longer than 1,000 characters.", "", "",
                       "", "", "", ""]]
    plain = [imports.Rejected(2, "The query is empty.", "", "en", "US", "")]
    assert list(csv.reader(io.StringIO("".join(imports.rejected_csv(plain))[1:])))[0] == [
        "line", "reason", "query", "language", "country", "tags"]
