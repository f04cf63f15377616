"""Migration 0024: on SQLite the tables whose ids name something are rebuilt with AUTOINCREMENT
— every row and id kept, their indexes and triggers made again from their own text, foreign
keys consistent, and the way back leaves the schema as 0023 had it; on both databases a table
of settings sessions. A deleted id is never given again afterwards."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text

from service import schema
from service.store.db import make_engine
from tests.service.migrating import P1, engine_of_its_own, migrate, migrated_with_rows

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR"), ("zapatos", "es", "ES")]
TABLES = ("users", "api_keys", "tags", "key_events", "org_events", "password_links")
REFERRING = ("query_tags", "imports")


def fill(connection) -> None:
    """Rows in every rebuilt table, with gaps in their ids (rows deleted), and rows that refer
    to them."""
    run = lambda sql: connection.execute(text(sql))  # noqa: E731
    for user_id, email in ((1, "ann@x.example"), (2, "ben@x.example"), (5, "eve@x.example")):
        run(f"INSERT INTO users (id, org_id, email, password_hash, created_at) "
            f"VALUES ({user_id}, 'o', '{email}', 'scrypt:x', '2026-01-01')")
    for key_id in (3, 4):
        run(f"INSERT INTO api_keys (id, org_id, project_id, name, key_hash, prefix, last_four, "
            f"created_at) VALUES ({key_id}, 'o', NULL, 'k{key_id}', 'h{key_id}', 'tdk', "
            f"'abcd', '2026-01-01')")
    for tag_id, name in ((7, "brand"), (9, "sale")):
        run(f"INSERT INTO tags (id, project_id, name, name_folded, color) "
            f"VALUES ({tag_id}, '{P1}', '{name}', '{name}', '#123456')")
    run("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
        "SELECT pk, 7, '2026-01-01' FROM queries WHERE project_id = '" + P1 + "'")
    run("INSERT INTO query_tags (query_pk, tag_id, updated_at) SELECT pk, 9, '2026-01-01' "
        f"FROM queries WHERE project_id = '{P1}' ORDER BY pk LIMIT 1")
    run("INSERT INTO key_events (id, org_id, user_id, action, key_id, key_prefix, key_last_four, "
        "key_name, at, actor_email) VALUES (11, 'o', 1, 'generated', 3, 'tdk', 'abcd', 'k3', "
        "'2026-01-01', 'ann@x.example')")
    run("INSERT INTO org_events (id, org_id, user_id, actor_email, action, subject, detail, at) "
        "VALUES (13, 'o', 2, 'ben@x.example', 'tag.created', 'brand', '', '2026-01-01')")
    run("INSERT INTO password_links (id, user_id, token_hash, created_at, expires_at) "
        "VALUES (17, 5, 'digest', '2026-01-01', '2026-01-08')")
    run("INSERT INTO imports (id, org_id, project_id, user_id, file_name, file_size, state, "
        "message, bytes_read, last_line, rows, added, present, rejected, created_at) VALUES "
        f"('i', 'o', '{P1}', 2, 'f.csv', 1, 'finished', '', 1, 1, 1, 1, 0, 0, '2026-01-01')")
    if connection.dialect.name == "postgresql":  # the ids given here, as if numbered
        for table in TABLES:
            run(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}")


def contents(connection) -> dict[str, list]:
    return {table: [tuple(row) for row in connection.execute(
        text(f"SELECT * FROM {table} ORDER BY 1, 2"))] for table in TABLES + REFERRING}


# The columns of tags that migration 0026 drops (the count engine counts a tag's queries).
TAG_COUNTERS = ("query_count", "links_version")


def named_contents(connection) -> dict[str, list[dict]]:
    return {table: [dict(row._mapping) for row in connection.execute(
        text(f"SELECT * FROM {table} ORDER BY 1, 2"))] for table in TABLES + REFERRING}


def sqlite_schema(connection) -> dict[str, str]:
    return {f"{kind} {name}": sql for kind, name, sql in connection.execute(text(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))}


def tag_counts(connection) -> list[tuple]:
    return [tuple(row) for row in connection.execute(
        text("SELECT id, query_count FROM tags ORDER BY id"))]


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_ids_are_never_given_twice_and_everything_else_stays(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_ids_") as engine:
        migrated_with_rows(engine, "0023", ROWS)
        with engine.begin() as connection:
            fill(connection)
            before = contents(connection)
            counts = tag_counts(connection)
            shape = sqlite_schema(connection) if kind == "sqlite" else None
        assert counts == [(7, 2), (9, 1)]  # the triggers of 0005 counted the links

        migrate(engine, "0024")
        with engine.begin() as connection:
            assert contents(connection) == before  # every row, with its id
            if kind == "sqlite":
                after = sqlite_schema(connection)
                changed = {name for name in shape if after.get(name) != shape[name]}
                assert changed == {f"table {table}" for table in TABLES}
                for table in TABLES:  # the key alone changed
                    assert after[f"table {table}"] == shape[f"table {table}"].replace(
                        "\n\tid INTEGER NOT NULL, \n",
                        "\n\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n",
                    ).replace("\n\tPRIMARY KEY (id), \n", "\n")
                assert set(after) - set(shape) == {"table settings_sessions",
                                                   "index ix_settings_sessions_user_id"}
                assert connection.execute(text("PRAGMA foreign_key_check")).all() == []
                sequence = dict(connection.execute(text(
                    "SELECT name, seq FROM sqlite_sequence")).all())
                assert sequence == {"users": 5, "api_keys": 4, "tags": 9, "key_events": 11,
                                    "org_events": 13, "password_links": 17}
            # The triggers that count a tag's links still do.
            connection.execute(text("DELETE FROM query_tags WHERE tag_id = 9"))
            assert tag_counts(connection) == [(7, 2), (9, 0)]
            # The newest ones deleted, the next ones get new ids.
            connection.execute(text("DELETE FROM password_links"))
            connection.execute(text("DELETE FROM users WHERE id = 5"))
            connection.execute(text("DELETE FROM tags WHERE id = 9"))
            connection.execute(text(
                "INSERT INTO users (org_id, email, password_hash, created_at) "
                "VALUES ('o', 'newb@x.example', 'scrypt:x', '2026-01-01')"))
            connection.execute(text(
                "INSERT INTO tags (project_id, name, name_folded, color) "
                f"VALUES ('{P1}', 'new', 'new', '#123456')"))
            new_user = connection.execute(text(
                "SELECT id FROM users WHERE email = 'newb@x.example'")).scalar_one()
            new_tag = connection.execute(text(
                "SELECT id FROM tags WHERE name = 'new'")).scalar_one()
            assert new_user > 5 and new_tag > 9
            connection.execute(text("DELETE FROM users WHERE id = :id"), {"id": new_user})
            connection.execute(text("DELETE FROM tags WHERE id = :id"), {"id": new_tag})
            connection.execute(text(
                "INSERT INTO users (id, org_id, email, password_hash, created_at) "
                "VALUES (5, 'o', 'eve@x.example', 'scrypt:x', '2026-01-01')"))
            connection.execute(text(
                f"INSERT INTO tags (id, project_id, name, name_folded, color) "
                f"VALUES (9, '{P1}', 'sale', 'sale', '#123456')"))
            connection.execute(text(
                "INSERT INTO query_tags (query_pk, tag_id, updated_at) SELECT pk, 9, "
                f"'2026-01-01' FROM queries WHERE project_id = '{P1}' ORDER BY pk LIMIT 1"))
            connection.execute(text(
                "INSERT INTO password_links (id, user_id, token_hash, created_at, "
                "expires_at) VALUES (17, 5, 'digest', '2026-01-01', '2026-01-08')"))
            assert contents(connection) == before

        migrate(engine, "0023", down=True)
        with engine.begin() as connection:
            assert contents(connection) == before
            assert tag_counts(connection) == counts
            if kind == "sqlite":
                assert sqlite_schema(connection) == shape  # as 0023 had it, exactly
                assert connection.execute(text("PRAGMA foreign_key_check")).all() == []
            connection.execute(text("DELETE FROM query_tags WHERE tag_id = 9"))
            assert tag_counts(connection) == [(7, 2), (9, 0)]
        migrate(engine, "head")


def test_the_rebuild_refuses_to_run_with_foreign_keys_on(tmp_path):
    """With them on, dropping the old table would delete, by cascade, what refers to its rows
    (every link of every tag): the migration stops before, and nothing changes."""
    url = f"sqlite:///{tmp_path / 'on.sqlite3'}"
    engine = make_engine(url)  # the service's engine: foreign keys on
    try:
        migrated_with_rows(engine, "0023", ROWS)
        with engine.begin() as connection:
            fill(connection)
            before = contents(connection)
        with engine.begin() as connection, pytest.raises(RuntimeError, match="foreign keys"):
            command.upgrade(schema.alembic_config(connection), "0024")
        with engine.begin() as connection:
            assert contents(connection) == before
        assert schema.revision(engine) == "0023"
        with engine.begin() as connection:
            named_before = named_contents(connection)
        assert schema.upgrade(engine)  # the way the service migrates: foreign keys off
        with engine.begin() as connection:
            after = named_contents(connection)
            # Every row kept, without the counters the count engine (0026) replaced; columns
            # later migrations added are left out.
            kept = {table: set(rows[0]) if rows else set()
                    for table, rows in named_before.items()}
            assert {table: [{column: value for column, value in row.items()
                             if column in kept[table]} for row in rows]
                    for table, rows in after.items()} == \
                {table: [{column: value for column, value in row.items()
                          if not (table == "tags" and column in TAG_COUNTERS)}
                         for row in rows] for table, rows in named_before.items()}
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1  # on again
    finally:
        engine.dispose()
