"""An import whose queries each have a word of their own (a tool's export: "shoes 4711",
model numbers, misspellings) changes a bitmap a query, and reads each of them before writing
it. On PostgreSQL those reads must cost the server time in proportion to the bitmaps read: a
list of (kind, value, chunk) rows compared at once took time quadratic in its length to plan
(3,000 rows: 2-7 s of planning for 50 ms of work), and 1M such rows took over 25 minutes.
Each read the import makes is planned again here, with its own parameters, and timed."""

from __future__ import annotations

import csv
import io
import re

import pytest
from sqlalchemy import event

from tests.support.databases import database_for

ROWS = 6_000
# A planning well under this whatever the machine's load: the quadratic plan of a read of
# 3,000 bitmaps took 2-7 s, a linear one takes milliseconds.
PLANNING_MS = 500


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for(request.param, request, tmp_path, sqlite_template)


@pytest.fixture
def pieces_read(service_app):
    """The statements (and their parameters) that read the count engine's bitmaps."""
    seen: list[tuple[str, object]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many):
        if statement.lstrip().upper().startswith("SELECT") and "engine_pieces" in statement:
            seen.append((statement, parameters))

    engine = service_app.extensions["tagdesk_engine"]
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


def tool_export(rows: int) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Keyword", "Country", "Clicks", "Impressions"])
    for index in range(rows):
        writer.writerow([f"running shoes {index}", "Germany", index % 90, 1000 + index])
    return out.getvalue().encode("utf-8")


def test_a_word_a_query_is_read_back_in_linear_planning_time(world, flask_cli, pieces_read,
                                                            tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes(tool_export(ROWS))
    result = flask_cli("import-queries", world.project_id, path, "--language", "en")
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(f"{ROWS}")
    assert pieces_read  # each word's bitmap read before it was written
    engine = world.app.extensions["tagdesk_engine"]
    planned = []
    with engine.connect() as connection:
        for statement, parameters in pieces_read:
            plan = connection.exec_driver_sql("EXPLAIN (SUMMARY) " + statement, parameters)
            summary = "\n".join(line for (line,) in plan)
            planned.append(float(re.search(r"Planning Time: ([\d.]+) ms", summary)[1]))
        connection.rollback()
    assert max(planned) < PLANNING_MS, sorted(planned)[-5:]
