"""An import's range of rows that loses a deadlock is run again, as set-tags is: on PostgreSQL
a range that updates present queries' numbers re-checks the links of rules with ranges, and
another writer (a rule's unapply) may hold those rows meanwhile. The fault is PostgreSQL's
own error, raised by a trigger on the range's first update of `queries` (a sequence counts,
which no rollback takes back); the import goes on, every row in, and each number updated is
counted once.
"""

from __future__ import annotations

import io

import pytest
from sqlalchemy import text

from service.imports import imports
from service.store.db import session_scope

POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
PRESENT = [(f"present {n}", "en", "US", []) for n in range(6)]
FAULT = [
    "CREATE SEQUENCE import_fault",
    "CREATE FUNCTION import_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF nextval('import_fault') = 1 THEN RAISE EXCEPTION 'deadlock detected (injected)' "
    "USING ERRCODE = '40P01'; END IF; RETURN NULL; END $$",
    "CREATE TRIGGER import_fault AFTER UPDATE ON queries FOR EACH STATEMENT "
    "EXECUTE FUNCTION import_fault()",
]
CLEARED = ["DROP TRIGGER IF EXISTS import_fault ON queries",
           "DROP FUNCTION IF EXISTS import_fault()", "DROP SEQUENCE IF EXISTS import_fault"]


def run_all(app, statements) -> None:
    with session_scope(app) as session:
        for statement in statements:
            session.execute(text(statement))


@POSTGRES_ONLY
def test_a_range_that_lost_a_deadlock_is_run_again_and_counted_once(service_app, world):
    world.add_queries(PRESENT)
    rows = [f"present {n},en,US,{100 + n}\n" for n in range(6)] + \
        [f"new {n},en,US,{n}\n" for n in range(4)]
    data = ("query,language,country,clicks\n" + "".join(rows)).encode()
    run_all(service_app, FAULT)
    try:
        with session_scope(service_app) as session:
            counts = imports.import_file(session, world.project_id, io.BytesIO(data))
        with session_scope(service_app) as session:
            faults = session.execute(text("SELECT last_value FROM import_fault")).scalar()
            clicks = dict(session.execute(text(
                "SELECT query, clicks FROM queries WHERE project_id = :p"),
                {"p": world.project_id}).all())
    finally:
        run_all(service_app, CLEARED)
    assert faults >= 2  # the first update failed, a later one went through
    assert (counts.added, counts.present, counts.renumbered) == (4, 6, 6)
    assert clicks == {**{f"present {n}": 100 + n for n in range(6)},
                      **{f"new {n}": n for n in range(4)}}
