"""The references between projects, queries, tags and links hold as foreign keys hold them: on
SQLite by its foreign keys, on PostgreSQL by the statement triggers of migration 0020 (checked
and cascaded once per statement, and an import's own new rows not locked again)."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.exc import IntegrityError

from service.api.query_filters import list_queries
from service.bodies.validation import QueryListBody
from service.engine import sizes
from service.engine.held import Held
from service.engine.tables import Query
from service.store.models import Project, Tag
from tests.service.counters import assert_counters_exact
from tests.service.migrating import migrate, migrated_with_rows
from tests.support.databases import postgres_database_of_its_own

ROWS = [("red shoes", "en", "US", ["brand"]), ("blue shoes", "en", "GB", ["brand", "sale"]),
        ("boots", "de", "DE", [])]
# Migrations 0019 and 0020 (PostgreSQL): the copies of the texts (query_texts, until 0026).
COUNTS = ("SELECT (SELECT count(*) FROM queries), (SELECT count(*) FROM query_tags), "
          "(SELECT count(*) FROM query_texts)")
# Since 0026: the count engine's bitmaps instead.
ENGINE_COUNTS = ("SELECT (SELECT count(*) FROM queries), (SELECT count(*) FROM query_tags), "
                 "(SELECT count(*) FROM engine_pieces)")
ORPHANS = ("SELECT (SELECT count(*) FROM query_tags l WHERE NOT EXISTS "
           "(SELECT 1 FROM queries q WHERE q.pk = l.query_pk)), "
           "(SELECT count(*) FROM queries q WHERE NOT EXISTS "
           "(SELECT 1 FROM projects p WHERE p.id = q.project_id))")


def rows_and_links(world) -> tuple[int, int]:
    return world.run(lambda s: s.execute(text(
        "SELECT (SELECT count(*) FROM queries), (SELECT count(*) FROM query_tags)")).one())


def tag_counts(world) -> dict[str, int]:
    """How many queries carry each tag of the world's project, as the service counts them."""
    def counted(session):
        counts = sizes.tag_counts(session, world.project_id)
        return {name: counts.get(tag_id, 0) for tag_id, name in session.execute(
            select(Tag.id, Tag.name).where(Tag.project_id == world.project_id))}
    return world.run(counted)


def insert_query(session, project_id: str, text_: str = "new") -> None:
    session.execute(text(
        "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
        "VALUES (:id, :project, :query, 'en', 'US', '2026-01-01')"),
        {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, text_)), "project": project_id,
         "query": text_})


@pytest.mark.parametrize("statement", [
    "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
    "VALUES ('00000000-0000-4000-8000-0000000000aa', '00000000-0000-4000-8000-0000000000bb', "
    "'q', 'en', 'US', '2026-01-01')",
    "INSERT INTO query_tags (query_pk, tag_id, updated_at) "
    "SELECT pk, 999999, updated_at FROM queries LIMIT 1",
    "INSERT INTO query_tags (query_pk, tag_id, updated_at) "
    "SELECT 999999, id, '2026-01-01' FROM tags LIMIT 1",
])
def test_a_row_naming_what_does_not_exist_is_refused(world, statement):
    world.add_queries(ROWS)
    with pytest.raises(IntegrityError, match="(?i)foreign key"):
        world.run(lambda s: s.execute(text(statement)))
    assert rows_and_links(world) == (3, 3)


def test_deleting_a_tag_a_query_or_a_project_takes_what_depends_on_it(world):
    world.add_queries(ROWS)
    world.add_queries([("other", "en", "US", [])], project_id=world.other_project_id)
    world.run(lambda s: s.delete(s.get(Tag, world.tags["sale"])))
    assert rows_and_links(world) == (4, 2)
    world.run(lambda s: s.execute(Query.__table__.delete().where(Query.query == "red shoes")))
    assert rows_and_links(world) == (3, 1)
    assert tag_counts(world)["brand"] == 1
    world.run(lambda s: s.delete(s.get(Project, world.project_id)))
    assert rows_and_links(world) == (1, 0)
    kept = world.run(lambda s: s.scalars(select(Query.query)).all())
    assert kept == ["other"]


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_the_bitmaps_follow_their_queries_and_go_with_their_project(world):
    world.add_queries(ROWS)
    world.run(lambda s: s.execute(Query.__table__.delete().where(Query.query == "boots")))
    assert rows_and_links(world) == (2, 3)
    # Deleted around the engine: the next read builds the project's bitmaps again.
    world.run(lambda s: list_queries(s, world.project_id, QueryListBody(), Held()))
    assert_counters_exact(world)
    world.run(lambda s: s.execute(text("TRUNCATE projects CASCADE")))
    assert world.run(lambda s: s.execute(text(ENGINE_COUNTS)).one()) == (0, 0, 0)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_an_import_does_not_lock_its_own_new_rows(world):
    """The rows a transaction inserts are its own until it commits: checking their links does
    not lock them again (a foreign key's check wrote a lock into each one)."""
    world.add_queries(ROWS)
    locked = world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM queries WHERE xmax <> 0")).scalar_one())
    assert locked == 0


def _racing(engine, first, second) -> tuple[BaseException | None, BaseException | None]:
    """`first` runs in a transaction left open while `second` starts on another connection
    (and waits for a lock), then `first` commits and `second` finishes. The errors each
    raised."""
    errors: list[BaseException | None] = [None, None]
    started = threading.Event()

    def run_second():
        try:
            with engine.begin() as connection:
                started.set()
                second(connection)
        except Exception as error:  # noqa: BLE001 - reported to the test
            errors[1] = error

    try:
        with engine.begin() as connection:
            first(connection)
            thread = threading.Thread(target=run_second)
            thread.start()
            started.wait(10)
            time.sleep(0.5)  # the second is now waiting for the first's locks
            assert thread.is_alive()
    except Exception as error:  # noqa: BLE001 - reported to the test
        errors[0] = error
    thread.join(20)
    return errors[0], errors[1]


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_project_deleted_while_a_query_is_added_leaves_no_orphan(world, service_app):
    engine = service_app.extensions["tagdesk_engine"]
    delete_project = text("DELETE FROM projects WHERE id = :id")
    # Added first: the delete waits for it, then its cascade takes the new query too.
    errors = _racing(engine, lambda c: insert_query(c, world.project_id),
                     lambda c: c.execute(delete_project, {"id": world.project_id}))
    assert errors == (None, None)
    # Deleted first: the insert waits for it, then finds no project.
    errors = _racing(engine, lambda c: c.execute(delete_project, {"id": world.other_project_id}),
                     lambda c: insert_query(c, world.other_project_id))
    assert errors[0] is None and isinstance(errors[1], IntegrityError)
    with engine.connect() as connection:
        assert connection.execute(text(ORPHANS)).one() == (0, 0)
        assert connection.execute(text("SELECT count(*) FROM queries")).scalar_one() == 0


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_query_deleted_while_it_is_tagged_leaves_no_orphan(world, service_app):
    world.add_queries(ROWS)
    engine = service_app.extensions["tagdesk_engine"]
    link = text("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
                "SELECT pk, :tag, updated_at FROM queries WHERE query = 'boots'")
    delete_boots = text("DELETE FROM queries WHERE query = 'boots'")
    errors = _racing(engine, lambda c: c.execute(link, {"tag": world.tags["brand"]}),
                     lambda c: c.execute(delete_boots))
    assert errors == (None, None)
    with engine.connect() as connection:
        assert connection.execute(text(ORPHANS)).one() == (0, 0)
    assert tag_counts(world)["brand"] == 2


@pytest.mark.postgres
def test_migration_0020_replaces_the_foreign_keys_and_gives_them_back():
    with postgres_database_of_its_own("tagdesk_test_statement_keys_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0019", [("a", "en", "US"), ("b", "en", "US")])

            def foreign_keys(table: str) -> set[str]:
                return {key["name"] for key in inspect(engine).get_foreign_keys(table)}

            assert "queries_project_id_fkey" in foreign_keys("queries")
            migrate(engine, "0020")
            assert foreign_keys("queries") == set()
            assert foreign_keys("query_tags") == foreign_keys("query_texts") == set()
            with pytest.raises(IntegrityError), engine.begin() as connection:
                insert_query(connection, "no such project")
            migrate(engine, "0019", down=True)
            assert foreign_keys("queries") == {"queries_project_id_fkey"}
            assert foreign_keys("query_tags") == {"query_tags_query_pk_fkey",
                                                  "query_tags_tag_id_fkey"}
            assert foreign_keys("query_texts") == {"query_texts_pk_fkey"}
            with engine.begin() as connection:
                connection.execute(text("DELETE FROM projects"))
                assert connection.execute(text(COUNTS)).one() == (0, 0, 0)
        finally:
            engine.dispose()
