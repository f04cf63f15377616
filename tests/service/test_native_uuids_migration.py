"""Migration 0022: on PostgreSQL, project and query ids become `uuid` and back, keeping every
row, foreign key and trigger; the service still reads and writes them as strings."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from service import create_app
from service.api.query_filters import list_queries
from service.bodies.validation import QueryListBody
from service.engine.held import Held
from service.org import admin
from service.store.db import session_scope
from tests.service.migrating import P1, P2, migrate, migrated_with_rows, query_id
from tests.support.databases import postgres_database_of_its_own

pytestmark = pytest.mark.postgres

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR"), ("zapatos", "es", "MX")]
ID_TYPES = ("SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'public' AND (column_name = 'project_id' OR "
            "(table_name IN ('projects', 'queries') AND column_name = 'id')) ORDER BY 1")
TRIGGERS = "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal"
FOREIGN_KEYS = ("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE contype = 'f'")


def schema_of(connection) -> tuple[dict, set, set]:
    """The id columns' types, the triggers (without parentheses: PostgreSQL prints a condition
    it parsed again with fewer) and the foreign keys."""
    triggers = {(name, definition.replace("(", "").replace(")", ""))
                for name, definition in connection.execute(text(TRIGGERS))}
    return (dict(connection.execute(text(ID_TYPES)).all()), triggers,
            set(connection.execute(text(FOREIGN_KEYS)).all()))


def stored_rows(connection) -> list:
    return connection.execute(text(
        "SELECT pk, id::text, project_id::text, query, language, country, updated_at "
        "FROM queries ORDER BY pk")).all()


def counters(connection) -> list:
    return connection.execute(text(
        "SELECT p.id::text, p.query_count, (SELECT count(*) FROM queries q "
        "WHERE q.project_id = p.id), (SELECT sum(c.query_count) FROM language_country_counts c "
        "WHERE c.project_id = p.id) FROM projects p ORDER BY 1")).all()


def test_ids_become_uuids_and_back_with_rows_keys_and_triggers_kept():
    with postgres_database_of_its_own("tagdesk_test_uuids_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0021", ROWS)
            with engine.begin() as connection:
                connection.execute(text("INSERT INTO tags (project_id, name, name_folded, color) "
                                        "VALUES (:p, 'brand', 'brand', '#123456')"), {"p": P1})
                connection.execute(text("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
                                        "VALUES (2, 1, '2026-01-01')"))
                types, triggers, keys = schema_of(connection)
                before = counters(connection)
                rows = stored_rows(connection)
            assert set(types.values()) == {"character varying"} and len(types) == 8

            migrate(engine, "0022")
            with engine.begin() as connection:
                after_types, after_triggers, after_keys = schema_of(connection)
                assert set(after_types.values()) == {"uuid"}
                assert after_types.keys() == types.keys()
                # The same triggers (their conditions now compare uuids), the same keys.
                assert {name for name, _ in after_triggers} == {name for name, _ in triggers}
                assert after_keys == keys
                assert counters(connection) == before and stored_rows(connection) == rows
                # The triggers run on the new type: a query added, moved and removed.
                connection.execute(text(
                    "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
                    "VALUES (:id, :p, 'Zapatillas', 'es', 'ES', '2026-01-02')"),
                    {"id": query_id(99), "p": P2})
                connection.execute(text("UPDATE queries SET project_id = :p WHERE id = :id"),
                                   {"p": P1, "id": query_id(99)})
                connection.execute(text("DELETE FROM queries WHERE id = :id"),
                                   {"id": query_id(1)})
                changed = counters(connection)
                assert [row[1] for row in changed] == [row[2] for row in changed]
                assert [row[1] for row in changed] == [row[3] for row in changed]
                assert connection.execute(text("SELECT query_count FROM tags")).scalar() == 0
                # A project's queries go with it, through the statement trigger of 0020.
                connection.execute(text("DELETE FROM projects WHERE id = :p"), {"p": P2})
                assert connection.execute(text(
                    "SELECT count(*) FROM queries WHERE project_id = :p"), {"p": P2}).scalar() == 0
                remaining, kept = counters(connection), stored_rows(connection)

            migrate(engine, "0021", down=True)
            with engine.begin() as connection:
                back_types, back_triggers, back_keys = schema_of(connection)
                assert back_types == types and back_triggers == triggers and back_keys == keys
                assert counters(connection) == remaining
                assert stored_rows(connection) == kept
        finally:
            engine.dispose()


def test_the_service_reads_uuids_as_strings_and_refuses_other_strings_quietly():
    """Through the models and through a statement's own text, ids come back as strings; a
    string that is not an id finds no project instead of failing the statement."""
    with postgres_database_of_its_own("tagdesk_test_uuid_reads_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "head", ROWS)
        finally:
            engine.dispose()
        app = create_app({"TESTING": True, "DATABASE_URL": url, "REDIS_URL": None})
        try:
            with session_scope(app) as session:
                raw = session.execute(text("SELECT id, project_id FROM queries ORDER BY pk"))
                assert raw.first() == (query_id(0), P2)
                total, rows, _tags = list_queries(
                    session, P1, QueryListBody(limit=10), Held())
                assert total == 2 and {row.id for row in rows} == {query_id(1), query_id(2)}
                assert {row.project_id for row in rows} == {P1}
                assert admin.project_by_id(session, "Keyword research") is None
                assert admin.project_by_id(session, P1.upper()) is None
                assert admin.project_by_id(session, P1).id == P1
        finally:
            app.extensions["tagdesk_engine"].dispose()
