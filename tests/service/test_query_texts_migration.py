"""Migration 0011 (PostgreSQL): `query_texts` gains each query's language and country and
names its project by number, for the rows already there and for those written after; and it
can be undone."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from service import create_app
from tests.service.migrating import P1, P2, migrate, migrated_with_rows, query_id
from tests.support.databases import postgres_database_of_its_own

pytestmark = pytest.mark.postgres

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR"), ("zapatos", "es", "MX")]
TEXT_COLUMNS = ("SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'query_texts' ORDER BY ordinal_position")


def copies(connection, columns: str, project: str) -> tuple[set, set]:
    """(the rows of query_texts with their project's id, the same computed from queries).
    `project`: how the copy names the project."""
    joined = {"number": "JOIN projects ON projects.number = query_texts.project_number",
              "id": "JOIN projects ON projects.id = query_texts.project_id"}[project]
    return (set(connection.execute(text(
                f"SELECT pk, projects.id, {columns} FROM query_texts {joined}"))),
            set(connection.execute(text(
                f"SELECT pk, project_id, {columns.replace('folded', 'lower(query)')} "
                "FROM queries"))))


def add_and_move(connection) -> None:
    connection.execute(text(
        "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
        f"VALUES ('new', '{P1}', 'Zapatillas', 'es', 'ES', '2026-01-02')"))
    connection.execute(text(f"UPDATE queries SET country = 'AT' WHERE id = '{query_id(0)}'"))
    connection.execute(text(f"UPDATE queries SET project_id = '{P2}' WHERE id = '{query_id(1)}'"))


def test_the_codes_are_copied_kept_and_dropped_again():
    with postgres_database_of_its_own("tagdesk_test_texts_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0010", ROWS)
            migrate(engine, "0011")
            with engine.begin() as connection:
                copied, actual = copies(connection, "language, country, folded", "number")
                assert copied == actual and len(copied) == len(ROWS)
                add_and_move(connection)
                copied, actual = copies(connection, "language, country, folded", "number")
                assert copied == actual and ("AT" in {row[3] for row in copied})

            migrate(engine, "0010", down=True)
            with engine.begin() as connection:
                columns = connection.scalars(text(TEXT_COLUMNS)).all()
                assert columns == ["pk", "project_id", "folded"]
                assert "number" not in connection.scalars(text(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = 'projects'")).all()
                connection.execute(text("DELETE FROM queries WHERE id = 'new'"))
                connection.execute(text("UPDATE queries SET query = 'Laufschuh' "
                                        f"WHERE id = '{query_id(0)}'"))
                copied, actual = copies(connection, "folded", "id")
                assert copied == actual and len(copied) == len(ROWS)
        finally:
            engine.dispose()


def test_init_db_vacuums_what_it_rebuilt():
    """`init-db` refreshes statistics after migrating: the pages it wrote are marked
    all-visible at once (else each page's first reader sets its hint bits and writes it). The
    copy that 0011 rebuilt is gone at head (0026); the count engine's bitmaps, which init-db
    builds, are what it rebuilds now."""
    with postgres_database_of_its_own("tagdesk_test_texts_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0010", ROWS)
            app = create_app({"TESTING": True, "DATABASE_URL": url})
            result = app.test_cli_runner().invoke(args=["init-db"])
            app.extensions["tagdesk_engine"].dispose()
            assert result.exit_code == 0 and "statistics refreshed" in result.output
            with engine.connect() as connection:
                pages, visible = connection.execute(text(
                    "SELECT relpages, relallvisible FROM pg_class "
                    "WHERE relname = 'engine_pieces'")).one()
            assert pages > 0 and visible == pages
        finally:
            engine.dispose()
