"""Migration 0011 (PostgreSQL): `query_texts` gains each query's language and country, for
the rows already there and for those written after; and it can be undone."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import postgres_database_of_its_own, require_postgres
from tests.service.migrating import migrate, migrated_with_rows

pytestmark = pytest.mark.postgres

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR"), ("zapatos", "es", "MX")]
TEXT_COLUMNS = ("SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'query_texts' ORDER BY ordinal_position")


def copies(connection, columns: str) -> tuple[set, set]:
    """(the rows of query_texts, the same columns computed from queries)."""
    return (set(connection.execute(text(f"SELECT pk, project_id, {columns} FROM query_texts"))),
            set(connection.execute(text(
                f"SELECT pk, project_id, {columns.replace('folded', 'lower(query)')} "
                "FROM queries"))))


def add_and_move(connection) -> None:
    connection.execute(text(
        "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
        "VALUES ('new', 'p1', 'Zapatillas', 'es', 'ES', '2026-01-02')"))
    connection.execute(text("UPDATE queries SET country = 'AT' WHERE id = 'q0'"))


def test_the_codes_are_copied_kept_and_dropped_again():
    require_postgres()
    with postgres_database_of_its_own("tagdesk_test_texts_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0010", ROWS)
            migrate(engine, "0011")
            with engine.begin() as connection:
                copied, actual = copies(connection, "language, country, folded")
                assert copied == actual and len(copied) == len(ROWS)
                add_and_move(connection)
                copied, actual = copies(connection, "language, country, folded")
                assert copied == actual and ("AT" in {row[3] for row in copied})

            migrate(engine, "0010", down=True)
            with engine.begin() as connection:
                columns = connection.scalars(text(TEXT_COLUMNS)).all()
                assert columns == ["pk", "project_id", "folded"]
                connection.execute(text("DELETE FROM queries WHERE id = 'new'"))
                connection.execute(text("UPDATE queries SET query = 'Laufschuh' WHERE id = 'q0'"))
                copied, actual = copies(connection, "folded")
                assert copied == actual and len(copied) == len(ROWS)
        finally:
            engine.dispose()
