"""PostgreSQL: the check of a link statement's queries is planned for the rows it has
(migration 0033). After a session's statements checked many links at once, a statement of two
links is still checked through the primary key, not by reading every query: the plans are
read from auto_explain, which reports the statements a trigger runs."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from tests.service.migrating import engine_of_its_own, migrate, migrated_with_rows

QUERIES = 20_000
LARGE_STATEMENTS = 6  # PL/pgSQL may keep a generic plan after five runs


def checks_of_a_small_insert(connection) -> list[str]:
    """The plans of what the triggers ran for an INSERT of two links, after six of 2,000."""
    run = connection.exec_driver_sql
    run("INSERT INTO queries (id, project_id, query, language, country, updated_at) "
        "SELECT gen_random_uuid(), p.id, 'query ' || n, 'en', 'US', now() "
        "FROM projects p, generate_series(1, %(n)s) n WHERE p.name = 'Shop search'",
        {"n": QUERIES})
    first = run("SELECT min(pk) FROM queries").scalar_one()
    tags = [row[0] for row in run("SELECT id FROM tags ORDER BY id LIMIT 2")]
    for statement in range(LARGE_STATEMENTS):
        start = first + statement * 2_000
        run("INSERT INTO query_tags (query_pk, tag_id, updated_at) SELECT pk, %(tag)s, now() "
            "FROM queries WHERE pk >= %(start)s AND pk < %(end)s",
            {"tag": tags[0], "start": start, "end": start + 2_000})
    plans: list[str] = []
    driver = connection.connection.driver_connection
    driver.add_notice_handler(lambda notice: plans.append(notice.message_primary or ""))
    for setting in ("LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0",
                    "SET auto_explain.log_nested_statements = on",
                    "SET auto_explain.log_level = notice", "SET client_min_messages = notice"):
        run(setting)
    run("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
        "VALUES (%(a)s, %(tag)s, now()), (%(b)s, %(tag)s, now())",
        {"a": first + 15_000, "b": first + 15_001, "tag": tags[1]})
    return [plan for plan in plans if "FROM queries WHERE pk IN (SELECT query_pk FROM added)"
            in " ".join(plan.split())]


def test_a_few_links_are_checked_by_key_after_many(world):
    engine = world.app.extensions["tagdesk_engine"]
    if engine.dialect.name != "postgresql":
        pytest.skip("PostgreSQL's statement triggers (SQLite keeps its foreign keys)")
    with engine.connect() as connection:
        try:
            plans = checks_of_a_small_insert(connection)
        finally:
            connection.rollback()
    assert plans, "auto_explain reported no check of the links' queries"
    for plan in plans:
        assert "Seq Scan on queries" not in plan, plan
        assert "queries_pkey" in plan, plan


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_migration_forward_back_and_forward(kind, tmp_path):
    """0033 forward, back to 0032's function, forward again; links are still checked."""
    def definition(engine) -> str:
        if engine.dialect.name != "postgresql":
            return ""
        with engine.connect() as connection:
            return connection.exec_driver_sql(
                "SELECT pg_get_functiondef('tagdesk_check_links'::regproc)").scalar_one()

    with engine_of_its_own(kind, tmp_path, "tagdesk_plans_") as engine:
        migrated_with_rows(engine, "0033", [("shoes", "en", "US")])
        postgres = engine.dialect.name == "postgresql"
        assert ("EXECUTE" in definition(engine)) is postgres
        migrate(engine, "0032", down=True)
        assert "EXECUTE" not in definition(engine)
        assert ("PERFORM 1 FROM queries" in definition(engine)) is postgres
        migrate(engine, "head")
        assert ("EXECUTE" in definition(engine)) is postgres
        with engine.connect() as connection, pytest.raises(IntegrityError):
            connection.exec_driver_sql(
                "INSERT INTO query_tags (query_pk, tag_id, updated_at) "
                "SELECT max(pk) + 1000, 1, '2026-01-01' FROM queries")
