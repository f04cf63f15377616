"""Migration 0026: the count engine replaces the derived tables and their triggers. Forward,
every project's bitmaps equal its rows and no trigger writes derived rows; back, the schema of
0025 is there again, definition for definition, with every derived row as 0025's triggers
keep it; and forward again."""

from __future__ import annotations

import pytest
from pyroaring import BitMap
from sqlalchemy import text

from service import schema
from tests.service.counters import expected_bitmaps, stored_bitmaps
from tests.service.migrating import P1, P2, engine_of_its_own, migrate, migrated_with_rows

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("ΣΟΦΙΑ σοφός", "el", "GR"), ("İstanbul  otel", "tr", "TR"), ("100% cotton", "en", "GB"),
        ("a_b", "en", "US"), ("größe 39", "de", "AT"), ("x", "fr", "FR")] + [
        (f"schuhe {n}", "de", "DE") for n in range(40)]
TERMS = ["schu", "hoe", "σοφ", "otel", "cotton", "größe"]


def add_tags_and_links(engine) -> None:
    with engine.begin() as connection:
        for project, name in ((P1, "brand"), (P1, "sale"), (P2, "brand")):
            connection.execute(text(
                "INSERT INTO tags (project_id, name, name_folded, color) "
                "VALUES (:p, :n, :n, '#123456')"), {"p": project, "n": name})
        connection.execute(text(
            "INSERT INTO query_tags (query_pk, tag_id, updated_at) "
            "SELECT q.pk, t.id, q.updated_at FROM queries q JOIN tags t "
            "ON t.project_id = q.project_id WHERE (q.pk + t.id) % 3 = 0"))


def schema_objects(connection) -> set:
    """Every table, index, trigger and function as the database defines it."""
    if connection.dialect.name == "sqlite":
        return set(connection.execute(text(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")))
    return set(connection.execute(text(
        "SELECT 'trigger', tgname, pg_get_triggerdef(oid) FROM pg_trigger "
        "WHERE NOT tgisinternal UNION "
        "SELECT 'function', proname, pg_get_functiondef(oid) FROM pg_proc "
        "WHERE proname LIKE 'tagdesk%%' UNION "
        "SELECT 'index', indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' UNION "
        "SELECT 'column', table_name || '.' || column_name, data_type || ' ' || "
        "coalesce(column_default, '') || ' ' || is_nullable || ' ' || coalesce(collation_name, '') "
        "FROM information_schema.columns WHERE table_schema = 'public' UNION "
        "SELECT 'constraint', conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE connamespace = 'public'::regnamespace")))


def derived(connection) -> dict:
    """What 0025's triggers keep, as counts and contents (versions aside: they only move)."""
    def rows(sql):
        return sorted(tuple(map(str, row)) for row in connection.execute(text(sql)))

    found = {
        "projects": rows("SELECT id, query_count FROM projects"),
        "tags": rows("SELECT id, query_count FROM tags"),
        "codes": rows("SELECT project_id, language, country, query_count "
                      "FROM language_country_counts WHERE query_count > 0"),
        "grams": rows("SELECT project_id, gram, query_count FROM text_gram_counts "
                      "WHERE query_count > 0"),
        "link times": rows("SELECT l.query_pk, l.updated_at = q.updated_at FROM query_tags l "
                           "JOIN queries q ON q.pk = l.query_pk"),
    }
    if connection.dialect.name == "sqlite":
        for term in TERMS:
            found[term] = rows(
                f"SELECT rowid FROM queries_fts WHERE queries_fts MATCH '\"{term}\"'")
    else:
        found["texts"] = rows("SELECT pk, project_number, language, country, folded "
                              "FROM query_texts")
    return found


def assert_0023_bitmaps_current_and_exact(connection) -> None:
    """PostgreSQL at 0025: the bitmap index of 0023 is current and holds what the rows give.
    (Rows written by hand at 0025, as these tests write them, leave it behind; the way back
    from 0026 builds it.)"""
    assert all(connection.execute(text(
        "SELECT words_version = texts_version FROM projects")).scalars())
    assert all(connection.execute(text("SELECT keys_version = links_version FROM tags")).scalars())
    stored: dict = {}
    for table, width in (("text_words", 2), ("code_keys", 3), ("tag_keys", 1)):
        for *key, _chunk, keys in connection.execute(text(f"SELECT * FROM {table}")):
            stored.setdefault((table, *key[:width]), BitMap()).update(
                BitMap.deserialize(bytes(keys)))
    expected: dict = {}
    for pk, number, language, country, folded in connection.execute(text(
            "SELECT pk, project_number, language, country, folded FROM query_texts")):
        for word in set(folded.split(" ")) - {""}:
            expected.setdefault(("text_words", number, word), BitMap()).add(pk)
        expected.setdefault(("code_keys", number, language, country), BitMap()).add(pk)
    for pk, tag_id in connection.execute(text("SELECT query_pk, tag_id FROM query_tags")):
        expected.setdefault(("tag_keys", tag_id), BitMap()).add(pk)
    assert stored == expected


def assert_engine_exact(engine) -> None:
    with engine.connect() as connection:
        assert stored_bitmaps(connection) == expected_bitmaps(connection)
        assert connection.execute(text(
            "SELECT count(*) FROM projects WHERE changes_outside <> changes_indexed")
        ).scalar_one() == 0


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_forward_back_and_forward_again(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_engine_") as engine:
        migrated_with_rows(engine, "0025", ROWS)
        add_tags_and_links(engine)
        with engine.connect() as connection:
            before, kept = schema_objects(connection), derived(connection)

        assert schema.upgrade(engine)  # 0026, then every project's bitmaps built
        assert_engine_exact(engine)
        with engine.connect() as connection:
            triggers = {name for kind_, name, _sql in schema_objects(connection)
                        if kind_ == "trigger"}
        # What is left: foreign-key checks and referential actions, and the counting of
        # writes that go around the engine; none writes a derived row.
        assert all(name.startswith("engine_outside_") or name.endswith(
            ("_check_project", "_check_moved_project", "_check_links", "_check_moved_link",
             "_delete_queries", "_truncate_queries", "_delete_links", "_truncate_links",
             "_delete_rows", "_truncate_rows", "_time_given")) for name in triggers), triggers

        migrate(engine, "0025", down=True)
        with engine.connect() as connection:
            assert schema_objects(connection) == before
            assert derived(connection) == kept
            if kind == "postgres":
                assert_0023_bitmaps_current_and_exact(connection)

        assert schema.upgrade(engine)
        assert_engine_exact(engine)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_write_around_the_engine_is_counted(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_engine_outside_") as engine:
        migrated_with_rows(engine, "0025", ROWS)
        schema.upgrade(engine)
        changes = "SELECT id, changes_outside FROM projects ORDER BY id"
        with engine.begin() as connection:
            first = dict(connection.execute(text(changes)).all())
            # "x" is the eighth row: project P1's (migrated_with_rows).
            connection.execute(text("UPDATE queries SET country = 'CH' WHERE query = 'x'"))
        with engine.connect() as connection:
            moved = dict(connection.execute(text(changes)).all())
        assert {str(project) for project in first if moved[project] > first[project]} == {P1}
        schema.rebuild_behind(engine)
        assert_engine_exact(engine)
