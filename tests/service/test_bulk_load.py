"""Bulk loads (service/engine/bulk_load.py): queries inserted many at a time leave every table
and the count engine's bitmaps exactly as inserting the same rows one by one does, and the API
finds and counts them exactly.

Each test loads the same rows into two projects of one database: the world's project by the
bulk path, the other project row by row (inserting.BULK_ROWS decides which path a call takes),
and compares the two projects' rows and everything derived from them, named by text, code and
tag name rather than by keys."""

from __future__ import annotations

import random
import shutil
import sqlite3
import uuid
from collections import Counter
from contextlib import closing
from datetime import datetime, timedelta
from itertools import islice

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from service import create_app
from service.api import query_filters
from service.bodies.validation import QueryListBody
from service.demo import demo
from service.demo.demo_data import generate_queries
from service.engine import bulk_load, inserting, sizes
from service.engine.held import Held
from service.engine.kinds import TAG
from service.imports import imports
from service.org import admin
from service.store.db import session_scope
from tests.service.counters import (
    assert_engine_exact,
    engine_state,
    simple_fold,
    stored_bitmaps,
)
from tests.service.migrating import migrate
from tests.support.api import Api
from tests.support.world import TAG_COLORS

TAGS = sorted(TAG_COLORS)
# Texts the folding must get right, and LIKE's own characters.
SPECIAL = ["Äpfel", "äpfelmus", "ÖL WECHSEL", "ΣΟΦΙΑ σοφίας", "STRASSE Straße ẞ",
           "İstanbul ıssız", "ǅemal ǄEMAL", "Кофе МОСКВА", "10 K Kelvin", "snow ☃ boots 🥾",
           "50% off_sale", "back\\slash \"quoted\" 'single'", "a", "Zz"]
SHORT_TERMS = ["a", "A", "ä", "Ä", "öl", "ÖL", "σο", "ß", "ẞ", "k", "K", "☃", "%", "_", "\\",
               "sc", "q", "zz", "ǆ", "ı", "İ", "мо"]
LONG_TERMS = ["schuhe", "SCHUHE", "äpfel", "straße", "strasse", "σοφία", "kelvin", "e b",
              "off_s", "\\sla", "🥾", "nike", "größe", "zzzzzz"]
WHEN = datetime(2026, 3, 1, 12, 0, 0)


def rows(count: int = 360, seed: int = 3) -> list[tuple]:
    """Realistic queries with 0 to 3 tags and times, the special texts, and a few repeats of
    earlier keys (with other tags: the first row of a key wins)."""
    rng = random.Random(seed)
    made = []
    for index, (query, language, country) in enumerate(generate_queries(count, seed)):
        tags = rng.sample(TAGS, rng.choice([0, 0, 1, 1, 1, 2, 3]))
        when = WHEN - timedelta(minutes=index % 97, milliseconds=index * 7 % 1000)
        made.append((query, language, country, tags, when))
    for index, query in enumerate(SPECIAL):
        made.append((query, "de" if index % 2 else "en", "DE" if index % 2 else "US",
                     TAGS[index % len(TAGS):][:2], WHEN))
    made += [(query, language, country, ["sale"], WHEN)
             for query, language, country, _tags, _when in made[5:300:37]]
    return made


@pytest.fixture
def two_projects(world):
    """The world, with the same tags in its other project."""
    def make(session):
        for name in TAGS:
            world.tags.setdefault(("other", name), admin.create_tag(
                session, world.other_project_id, name, TAG_COLORS[name]))
    world.run(make)
    return world


def load(world, project_id: str, batch: list[tuple], *, bulk: bool, monkeypatch,
         batch_size: int = 5000) -> int:
    """Insert `batch` ((text, language, country, tag names, time)) into the project, by the
    bulk path or row by row."""
    monkeypatch.setattr(inserting, "BULK_ROWS", 1 if bulk else 10**9)
    other = project_id != world.project_id
    normalized = [(*admin.normalize_query(q, language, country),
                   [world.tags[("other", name) if other else name] for name in names], when)
                  for q, language, country, names, when in batch]
    return world.run(lambda s: admin.insert_queries(s, project_id, normalized, batch_size))


def load_both(world, batch, monkeypatch, **options) -> tuple[int, int]:
    """(added by bulk into the world's project, added row by row into the other one)."""
    return (load(world, world.project_id, batch, bulk=True, monkeypatch=monkeypatch, **options),
            load(world, world.other_project_id, batch, bulk=False, monkeypatch=monkeypatch))


def snapshot(session, project_id: str) -> dict:
    """A project's rows, its counts and the values of its bitmaps with their sizes, without
    keys."""
    p = {"p": project_id}

    def rows_of(sql: str) -> list[tuple]:
        return sorted(tuple(row) for row in session.execute(text(sql), p))

    tag_names = {str(tag_id): name for tag_id, name in session.execute(text(
        "SELECT id, name FROM tags WHERE project_id = :p"), p)}
    state = {
        "queries": rows_of(
            "SELECT q.query, q.language, q.country, q.updated_at, "
            "(SELECT count(*) FROM query_tags l WHERE l.query_pk = q.pk) "
            "FROM queries q WHERE q.project_id = :p"),
        "links": rows_of(
            "SELECT q.query, q.language, q.country, t.name FROM query_tags l "
            "JOIN queries q ON q.pk = l.query_pk JOIN tags t ON t.id = l.tag_id "
            "WHERE q.project_id = :p"),
        # Each link carries its query's time (migration 0018).
        "stale link times": session.execute(text(
            "SELECT count(*) FROM query_tags l JOIN queries q ON q.pk = l.query_pk "
            "WHERE q.project_id = :p AND l.updated_at <> q.updated_at"), p).scalar_one(),
        "tag counts": sorted(
            (name, sizes.tag_counts(session, project_id).get(tag_id, 0))
            for tag_id, name in session.execute(text(
                "SELECT id, name FROM tags WHERE project_id = :p"), p)),
        "query count": sizes.query_counts(session, [project_id])[project_id],
        "bitmaps": sorted((kind, tag_names.get(value, value) if kind == TAG else value,
                           len(keys))
                          for (project, kind, value), keys in stored_bitmaps(session).items()
                          if project == project_id),
    }
    return state


def versions(world) -> tuple[int, int]:
    """The stamps of the last write of each project's texts."""
    return world.run(lambda s: tuple(s.execute(text(
        "SELECT (SELECT texts_stamp FROM projects WHERE id = :a), "
        "(SELECT texts_stamp FROM projects WHERE id = :b)"),
        {"a": world.project_id, "b": world.other_project_id}).one()))


def assert_same_tables(world) -> None:
    """The bulk-loaded project holds what the row-by-row one does, and the bitmaps of every
    project are those of its rows."""
    def compare(session):
        bulk = snapshot(session, world.project_id)
        by_row = snapshot(session, world.other_project_id)
        assert bulk == by_row
        assert bulk["query count"] == len(bulk["queries"])
        assert bulk["stale link times"] == 0
        assert_engine_exact(session)
        if session.get_bind().dialect.name == "sqlite":  # no write is marked as the engine's
            assert session.execute(text("SELECT count(*) FROM engine_writing")).scalar_one() == 0
    world.run(compare)


def test_a_bulk_load_leaves_every_table_as_row_by_row_does(two_projects, monkeypatch):
    batch = rows()
    before = versions(two_projects)
    added = load_both(two_projects, batch, monkeypatch)
    distinct = len({row[:3] for row in batch})
    assert added == (distinct, distinct)
    assert_same_tables(two_projects)
    after = versions(two_projects)
    assert after[0] > before[0] and after[1] > before[1]


@pytest.mark.parametrize("how", ["one range", "a repeat", "more than one range"])
def test_rows_added_in_one_range_or_several_are_as_row_by_row(two_projects, monkeypatch, how):
    """imports.add_rows (the demo's way in) adds staged rows a range of the key's order at a
    time: in one range, with a repeat, or in more than one range, the project holds what
    inserting them row by row gives."""
    batch = rows()[:374]  # every key once
    if how == "a repeat":
        batch.append(batch[0])
    world = two_projects
    normalized = [(*admin.normalize_query(q, language, country),
                   [world.tags[name] for name in names], when)
                  for q, language, country, names, when in batch]
    batches = [normalized[start:start + 50] for start in range(0, len(normalized), 50)]
    range_rows = 200 if how == "more than one range" else 5000
    added = world.run(lambda s: imports.add_rows(s, world.project_id, batches, range_rows))
    assert added == 374
    assert load(world, world.other_project_id, batch, bulk=False, monkeypatch=monkeypatch) == 374
    assert_same_tables(world)


def test_several_chunks_in_one_call(two_projects, monkeypatch):
    batch = rows(500, seed=5)
    added = load_both(two_projects, batch, monkeypatch, batch_size=64)
    assert added[0] == added[1] == len({row[:3] for row in batch})
    assert_same_tables(two_projects)


def test_importing_the_same_rows_again_adds_nothing(two_projects, monkeypatch):
    batch = rows()
    load_both(two_projects, batch, monkeypatch)
    before = two_projects.run(lambda s: snapshot(s, two_projects.project_id))
    version = versions(two_projects)[0]
    assert load(two_projects, two_projects.project_id, batch, bulk=True,
                monkeypatch=monkeypatch) == 0
    assert two_projects.run(lambda s: snapshot(s, two_projects.project_id)) == before
    assert versions(two_projects)[0] == version
    assert_same_tables(two_projects)


def test_rows_the_project_has_are_skipped_and_the_others_added(two_projects, monkeypatch):
    batch = rows()
    first = batch[::3]
    # The project already has a third of the rows (loaded either way), then gets them all.
    load(two_projects, two_projects.project_id, first, bulk=False, monkeypatch=monkeypatch)
    load(two_projects, two_projects.other_project_id, first, bulk=False,
         monkeypatch=monkeypatch)
    added = load_both(two_projects, batch, monkeypatch)
    assert added[0] == added[1] == len({row[:3] for row in batch} - {row[:3] for row in first})
    assert_same_tables(two_projects)


def test_a_bulk_load_into_a_project_with_rows_loaded_in_bulk(two_projects, monkeypatch):
    batch = rows(420, seed=9)
    load_both(two_projects, batch[:200], monkeypatch)
    load_both(two_projects, batch[150:], monkeypatch)
    assert_same_tables(two_projects)


def test_present_keys_of_every_range_take_the_numbers_their_first_row_names(two_projects,
                                                                           monkeypatch):
    """Rows of keys the project has, in every range of the key's order (the first and last
    of a range among them), replace the numbers they name with their key's first row's;
    the others are added with theirs."""
    world = two_projects
    batch = rows()  # a few keys repeated: their first row's numbers win
    keys = list(dict.fromkeys(admin.normalize_query(*row[:3]) for row in batch))
    present = keys[::3] + keys[-1:] + sorted(keys)[:1] + sorted(keys)[-1:]
    load(world, world.project_id, [(*key, [], WHEN) for key in present], bulk=False,
         monkeypatch=monkeypatch)
    normalized = [(*admin.normalize_query(*row[:3]), [], None,
                   {"clicks": index, "volume": 10 * index})
                  for index, row in enumerate(batch)]
    world.run(lambda s: imports.add_rows(s, world.project_id, [normalized], batch_rows=40))
    first = {}
    for row in normalized:
        first.setdefault(row[:3], row[5])
    stored = world.run(lambda s: {tuple(row[:3]): {"clicks": row[3], "volume": row[4]}
                                  for row in s.execute(text(
                                      "SELECT query, language, country, clicks, volume "
                                      "FROM queries WHERE project_id = :p"),
                                      {"p": world.project_id})})
    assert stored == first
    world.run(assert_engine_exact)


def test_search_and_counts_through_the_api_are_exact(live_service, two_projects, monkeypatch):
    batch = rows()
    load_both(two_projects, batch, monkeypatch)
    bulk = Api(live_service.url, two_projects.key, two_projects.project_id)
    by_row = Api(live_service.url, two_projects.key, two_projects.other_project_id)

    names = {tag_id: key[-1] if isinstance(key, tuple) else key
             for key, tag_id in two_projects.tags.items()}

    def listed(api, **body) -> tuple[int, list[tuple]]:
        response = api.queries(limit=1000, **body)
        assert response.status_code == 200, response.text
        answer = response.json()
        return answer["page"]["totalRecords"], sorted(
            (r["query"], r["language"], r["country"],
             tuple(sorted(names[int(tag)] for tag in r["tags"])))
            for r in answer["results"])

    first = {}
    for query, language, country, tags, _when in batch:
        first.setdefault((query, language, country), tuple(sorted(tags)))
    views = [{}] + [{"query": term} for term in SHORT_TERMS + LONG_TERMS] + [
        {"languages": ["de"]}, {"countries": ["us", "GB"]}, {"tagNames": ["brand"]},
        {"tagNames": ["SALE", "question"]}, {"query": "a", "languages": ["en"]},
        {"query": "schuhe", "tagNames": ["local"]}, {"query": "ä", "countries": ["DE"]}]
    texts = sorted({key[0] for key in first} | {term["query"] for term in views if "query" in term})
    folds = {value: simple_fold(value) for value in texts}  # on both databases
    for view in views:
        found = listed(bulk, **view)
        assert found == listed(by_row, **view), view
        wanted = [
            (*key, tags) for key, tags in first.items()
            if ("query" not in view or folds[view["query"]] in folds[key[0]])
            and ("languages" not in view or key[1] in view["languages"])
            and ("countries" not in view or key[2] in [c.upper() for c in view["countries"]])
            and ("tagNames" not in view
                 or {name.lower() for name in view["tagNames"]} & set(tags))]
        assert found == (len(wanted), sorted(wanted)), view
    assert sum(1 for view in views if listed(bulk, **view)[0]) > 30


def test_ids_are_new_uuids_ascending_within_a_load(two_projects, monkeypatch):
    load(two_projects, two_projects.project_id, rows(), bulk=True, monkeypatch=monkeypatch)
    ids = two_projects.run(lambda s: s.execute(text(
        "SELECT id FROM queries WHERE project_id = :p ORDER BY pk"),
        {"p": two_projects.project_id}).scalars().all())
    assert len(set(ids)) == len(ids) > 300
    assert {uuid.UUID(value).version for value in ids} == {7}
    assert ids == sorted(ids)


def test_a_failed_load_leaves_nothing_behind(two_projects, monkeypatch):
    batch = [(f"query {i}", "en", "US", [], WHEN) for i in range(40)]
    monkeypatch.setattr(inserting, "BULK_ROWS", 1)
    bad = [*batch[:-1], ("last", "en", "US", [10**6], WHEN)]  # no such tag

    def attempt(session):
        with pytest.raises(IntegrityError):
            admin.insert_queries(session, two_projects.project_id, bad)
        session.rollback()
        return session.execute(text("SELECT count(*) FROM queries")).scalar_one()

    assert two_projects.run(attempt) == 0
    assert two_projects.run(lambda s: admin.insert_queries(
        s, two_projects.project_id, batch)) == 40
    load(two_projects, two_projects.other_project_id,
         [(q, lang, country, [], when) for q, lang, country, _t, when in batch],
         bulk=False, monkeypatch=monkeypatch)
    assert_same_tables(two_projects)


# --- SQLite: the triggers that stand aside (migrations 0017 and 0026) ------------------------

GUARD = "WHEN NOT EXISTS (SELECT 1 FROM bulk_load)"
ENGINE_GUARD = "WHEN NOT EXISTS (SELECT 1 FROM engine_writing)"
# The insert triggers of 0017 to 0025, which a bulk load made stand aside.
COUNTING_TRIGGERS = ["queries_fts_insert", "queries_count_insert",
                     "language_country_count_insert", "queries_texts_version_insert",
                     "queries_text_grams_insert", "tag_count_insert"]


def insert_triggers(connection) -> dict[str, str]:
    return dict(connection.execute(text(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
        "AND tbl_name IN ('queries', 'query_tags') AND sql LIKE '%AFTER INSERT ON%'")).all())


def test_every_insert_trigger_stands_aside_during_a_load_and_only_then(tmp_path):
    # A trigger added later would also fire during bulk loads: the load must learn its work.
    engine = create_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    try:
        migrate(engine, "0025")
        with engine.connect() as connection:
            triggers = insert_triggers(connection)
        assert sorted(triggers) == sorted(COUNTING_TRIGGERS)
        assert all(sql.count(GUARD) == 1 for sql in triggers.values())
        # As 0017 left them (0021 adds to the counters' text).
        migrate(engine, "0017", down=True)
        with engine.connect() as connection:
            guarded = insert_triggers(connection)
        assert sorted(guarded) == sorted(triggers)
        migrate(engine, "0016", down=True)
        with engine.connect() as connection:
            unguarded = insert_triggers(connection)
            assert "bulk_load" not in {name for (name,) in connection.execute(text(
                "SELECT name FROM sqlite_master WHERE type = 'table'"))}
        assert sorted(unguarded) == sorted(triggers)
        assert all(GUARD not in sql for sql in unguarded.values())
        assert {name: sql.replace(GUARD + " ", "") for name, sql in guarded.items()} == unguarded
        migrate(engine, "0025")
        with engine.connect() as connection:
            assert insert_triggers(connection) == triggers
        # The count engine's: every insert trigger stands aside while the engine writes
        # (a load included), and only then.
        migrate(engine, "head")
        with engine.connect() as connection:
            at_head = insert_triggers(connection)
        assert sorted(at_head) == ["engine_outside_link_insert", "engine_outside_query_insert"]
        assert all(sql.count(ENGINE_GUARD) == 1 for sql in at_head.values())
    finally:
        engine.dispose()


def test_counts_stay_exact_through_writes_after_a_load(two_projects, monkeypatch):
    # The triggers work again once a load is over: plain writes after it (around the engine)
    # are noticed, and the next read builds the project's bitmaps again.
    batch = rows()
    load_both(two_projects, batch, monkeypatch)

    def write(session):
        for project_id in (two_projects.project_id, two_projects.other_project_id):
            session.execute(text(
                "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
                "VALUES (:id, :p, 'Plain Äpfel Straße', 'de', 'AT', :t)"),
                {"id": str(uuid.uuid4()), "p": project_id, "t": WHEN})
            session.execute(text(
                "DELETE FROM queries WHERE project_id = :p AND query = :q"),
                {"p": project_id, "q": batch[0][0]})
    two_projects.run(write)
    behind = two_projects.run(lambda s: engine_state(s)[2])
    assert behind == 2
    for project_id in (two_projects.project_id, two_projects.other_project_id):
        two_projects.run(lambda s, p=project_id: query_filters.list_queries(
            s, p, QueryListBody(), Held()))
    assert_same_tables(two_projects)
    counts = two_projects.run(lambda s: Counter(s.execute(text(
        "SELECT project_id FROM queries")).scalars()))
    assert counts[two_projects.project_id] == counts[two_projects.other_project_id]


def test_a_load_in_a_transaction_that_already_used_temporary_storage(two_projects, monkeypatch):
    # SQLite refuses to move temporary storage to files once the transaction has used it:
    # the load then keeps it in memory and goes on.
    monkeypatch.setattr(inserting, "BULK_ROWS", 1)
    batch = [(*admin.normalize_query(f"query {i}", "en", "US"), [], WHEN) for i in range(40)]

    def load_after_a_temporary_table(session):
        session.execute(text("CREATE TEMP TABLE earlier (a INTEGER)"))
        session.execute(text("INSERT INTO earlier VALUES (1)"))
        added = admin.insert_queries(session, two_projects.project_id, batch)
        session.execute(text("DROP TABLE earlier"))
        return added

    assert two_projects.run(load_after_a_temporary_table) == 40
    load(two_projects, two_projects.other_project_id,
         [(q, lang, country, [], when) for q, lang, country, _t, when in batch],
         bulk=False, monkeypatch=monkeypatch)
    assert_same_tables(two_projects)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # SQLite's own settings
def test_a_load_gives_its_connection_the_usual_sqlite_settings_back(two_projects, monkeypatch):
    engine = two_projects.app.extensions["tagdesk_engine"]

    def settings(dbapi_connection) -> tuple[int, int]:
        return tuple(dbapi_connection.execute(f"PRAGMA {name}").fetchone()[0]
                     for name in ("temp_store", "cache_size"))

    with engine.connect() as connection:
        usual = settings(connection.connection.dbapi_connection)
    assert usual == (2, -65536)  # memory, 64 MiB (service/store/db.py)
    seen = {}
    real_insert = bulk_load._SqliteLoad.insert

    def insert_and_look(self, first, last):
        seen["connection"] = self.connection.connection.dbapi_connection
        seen["during"] = settings(seen["connection"])
        return real_insert(self, first, last)

    monkeypatch.setattr(bulk_load._SqliteLoad, "insert", insert_and_look)
    load(two_projects, two_projects.project_id, rows(), bulk=True, monkeypatch=monkeypatch)
    assert seen["during"] == (1, -bulk_load.LOAD_CACHE_KIB)  # files, a larger cache
    # The load's connection, back in the pool (its transaction over).
    assert settings(seen["connection"]) == usual


def migrated(sqlite_template, path) -> str:
    """The URL of a new SQLite file at `path`, migrated: a copy of the run's migrated template
    (tests/conftest.py), as every test's database is; migrating each took ~1 s of CPU."""
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


def _seeded(tmp_path, sqlite_template, name: str) -> tuple[set, dict]:
    """seed-demo of 300 queries into a new SQLite file: (each query's key and tag names, the
    sizes of the bitmaps of one project), its bitmaps checked against its rows."""
    app = create_app({"DATABASE_URL": migrated(sqlite_template, tmp_path / name)})
    engine = app.extensions["tagdesk_engine"]
    demo.seed(app, 300)
    with session_scope(app) as session:
        queries = {tuple(row) for row in session.execute(text(
            "SELECT p.name, q.query, q.language, q.country, group_concat(t.name, ';') "
            "FROM queries q JOIN projects p ON p.id = q.project_id "
            "LEFT JOIN query_tags l ON l.query_pk = q.pk LEFT JOIN tags t ON t.id = l.tag_id "
            "GROUP BY q.pk"))}
        shop = session.execute(text(
            "SELECT id FROM projects WHERE name = 'Online shop search'")).scalar_one()
        bitmaps = {(kind, value): len(keys) for (project, kind, value), keys
                   in stored_bitmaps(session).items() if project == str(shop)}
        assert_engine_exact(session)
    engine.dispose()
    return queries, bitmaps


def test_the_demo_commits_sqlite_loads_in_chunks_with_the_same_result(tmp_path, sqlite_template,
                                                                      monkeypatch):
    """SQLite: seed-demo commits a project a range of the key's order at a time (one
    transaction of ten million made a write-ahead log no page look-up could cross quickly);
    the rows, tags and bitmaps are those of one transaction."""
    whole = _seeded(tmp_path, sqlite_template, "whole.sqlite3")
    monkeypatch.setitem(demo.RANGE_ROWS, "sqlite", 70)  # 300 queries: five transactions
    ranges = []
    insert = bulk_load._SqliteLoad.insert

    def insert_range(self, first, last):
        # What another connection sees of the project as the range starts: the ranges before
        # it, committed.
        with closing(sqlite3.connect(tmp_path / "chunked.sqlite3")) as reader:
            seen = reader.execute("SELECT count(*) FROM queries WHERE project_id = ?",
                                  (self.project_id,)).fetchone()[0]
        ranges.append((first, last, seen))
        return insert(self, first, last)

    monkeypatch.setattr(bulk_load._SqliteLoad, "insert", insert_range)
    chunked = _seeded(tmp_path, sqlite_template, "chunked.sqlite3")
    # The two small projects' 30 queries each take one range.
    assert ranges == [(1, 70, 0), (71, 140, 70), (141, 210, 140), (211, 280, 210),
                      (281, 300, 280), (1, 30, 0), (1, 30, 0)]
    assert chunked[0] == whole[0] and len(whole[0]) == 360
    assert chunked[1] == whole[1] and len(whole[1]) > 100



def _demo_rows(session) -> set[tuple]:
    """Every query of the database with each of its tags (None: no tag), named."""
    return set(map(tuple, session.execute(text(
        "SELECT p.name, q.query, q.language, q.country, t.name FROM queries q "
        "JOIN projects p ON p.id = q.project_id LEFT JOIN query_tags l ON l.query_pk = q.pk "
        "LEFT JOIN tags t ON t.id = l.tag_id"))))


@pytest.mark.parametrize("database_url", ["sqlite", pytest.param("postgres",
                         marks=pytest.mark.postgres)], indirect=True)
def test_the_demo_adds_its_rows_in_ranges_as_imports_do(database_url, tmp_path, sqlite_template,
                                                         monkeypatch):
    """seed-demo adds a project a range of the key's order at a time, as imports do; on
    PostgreSQL two connections add ranges at once. The rows and tags are those of one range
    on one connection, and the count engine's bitmaps are those of the rows."""
    whole = create_app({"DATABASE_URL": migrated(sqlite_template, tmp_path / "whole.sqlite3")})
    demo.seed(whole, 300)
    with session_scope(whole) as session:
        expected = _demo_rows(session)
    whole.extensions["tagdesk_engine"].dispose()

    app = create_app({"DATABASE_URL": database_url})
    dialect = app.extensions["tagdesk_engine"].dialect.name
    monkeypatch.setitem(demo.RANGE_ROWS, dialect, 40)  # 300 queries: eight ranges
    load_class = bulk_load._SqliteLoad if dialect == "sqlite" else bulk_load._PostgresLoad
    writers, insert = {}, load_class.insert

    def insert_range(self, first, last):
        writers.setdefault(self.project_id, set()).add(id(self.connection))
        return insert(self, first, last)

    monkeypatch.setattr(load_class, "insert", insert_range)
    demo.seed(app, 300)
    # The 300 queries' project by two connections on PostgreSQL; the 30's in one range.
    assert sorted(map(len, writers.values())) == [1, 1, 2 if dialect == "postgresql" else 1]
    with session_scope(app) as session:
        assert _demo_rows(session) == expected and len(expected) > 360
        assert_engine_exact(session)
    app.extensions["tagdesk_engine"].dispose()


def _demo_times(session) -> list[datetime]:
    return [value if isinstance(value, datetime) else datetime.fromisoformat(value)
            for value in session.execute(text(
                "SELECT q.updated_at FROM queries q JOIN projects p ON p.id = q.project_id "
                "ORDER BY p.name, q.query, q.language, q.country")).scalars()]


def test_a_large_demo_is_made_by_a_child_process_with_the_same_rows(tmp_path, sqlite_template,
                                                                   monkeypatch):
    """From MADE_ASIDE_ROWS queries, a forked child makes the demo's texts and times while this
    process tags and stages them: the same queries, tags and times (to the time the seed ran)
    as made here."""
    seeded, children = {}, []
    spawned = demo.multiprocessing.context.ForkProcess.start

    def start(process):
        children.append(process.name)
        return spawned(process)

    monkeypatch.setattr(demo.multiprocessing.context.ForkProcess, "start", start)
    for name, aside_from in (("here", 10 ** 9), ("aside", 300)):
        monkeypatch.setattr(demo, "MADE_ASIDE_ROWS", aside_from)
        children.clear()
        app = create_app({"DATABASE_URL": migrated(sqlite_template, tmp_path / f"{name}.sqlite3")})
        before = datetime.now()
        demo.seed(app, 300)
        with session_scope(app) as session:
            rows, times = _demo_rows(session), _demo_times(session)
            assert_engine_exact(session)
        app.extensions["tagdesk_engine"].dispose()
        seeded[name] = (rows, [before - time for time in times], list(children))
    (rows_here, ages_here, made_here), (rows_aside, ages_aside, made_aside) = (
        seeded["here"], seeded["aside"])
    assert made_here == [] and made_aside == ["tagdesk-demo-rows"]
    assert rows_aside == rows_here and len(rows_here) > 360
    # The same ages, give or take the moments between the two seeds.
    assert len(ages_aside) == len(ages_here)
    assert all(abs(a - b) < timedelta(seconds=30) for a, b in zip(ages_aside, ages_here,
                                                                   strict=True))


def test_a_demo_whose_rows_cannot_be_made_says_so_and_adds_nothing(tmp_path, sqlite_template,
                                                                   monkeypatch):
    monkeypatch.setattr(demo, "MADE_ASIDE_ROWS", 300)

    def broken(size, seed_value):
        yield from islice(generate_queries(size, seed_value), 0)
        raise ValueError("a generator that breaks")

    monkeypatch.setattr(demo, "_texts", broken)
    app = create_app({"DATABASE_URL": migrated(sqlite_template, tmp_path / "broken.sqlite3")})
    with pytest.raises(RuntimeError, match="The demo's queries could not be made"):
        demo.seed(app, 300)
    with session_scope(app) as session:
        assert session.execute(text("SELECT count(*) FROM queries")).scalar_one() == 0
        assert_engine_exact(session)
    app.extensions["tagdesk_engine"].dispose()
