"""The jobs database is migrated with Alembic (jobs/schema.py, jobs/migrations/), on SQLite and
on PostgreSQL: a fresh database gets exactly the tables the store uses, a database made by the
old `metadata.create_all` keeps its rows and is stamped, and it shares a database with the
service without either history getting in the other's way."""

from __future__ import annotations

import time

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, insert, inspect, text

from app import create_app
from jobs import schema
from jobs.deltas import Change
from jobs.store import Store, edits, lock_waiters, metadata
from queryapi import QueryFilters
from tests.support.dashboard import close_app
from tests.support.processes import at_once

JOBS_TABLES = {"edits", "edit_changes", "project_locks", "lock_waiters"}
WORKERS = 6


def head() -> str:
    return ScriptDirectory.from_config(schema.alembic_config(None)).get_current_head()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path):
    """The URL of an empty database of this test's own."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
        return
    from tests.support.databases import postgres_database_of_its_own

    with postgres_database_of_its_own("tagdesk_jobs_migrations_") as url:
        yield url


@pytest.fixture
def second_database(request, database, tmp_path):
    """Another empty database of the same kind."""
    if database.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other.sqlite3'}"
        return
    from tests.support.databases import postgres_database_of_its_own

    with postgres_database_of_its_own("tagdesk_jobs_migrations_") as url:
        yield url


def migrated(url: str) -> bool:
    store = Store(url)
    try:
        return store.upgrade()
    finally:
        store.engine.dispose()


def revision(url: str) -> str | None:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return schema.revision(connection)
    finally:
        engine.dispose()


def move_to(url: str, step, target: str) -> None:
    """Alembic's upgrade or downgrade of the jobs database to `target`, by hand."""
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            step(schema.alembic_config(connection), target)
    finally:
        engine.dispose()


def layout(url: str) -> dict:
    """Tables, columns, keys and indexes of the jobs tables, as the database reports them."""
    engine = create_engine(url)
    try:
        found = inspect(engine)
        return {table: {
            "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default"))
                        for c in found.get_columns(table)],
            "primary_key": found.get_pk_constraint(table),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                              for i in found.get_indexes(table)),
            "unique": found.get_unique_constraints(table),
            "foreign_keys": found.get_foreign_keys(table),
        } for table in sorted(set(found.get_table_names()) & JOBS_TABLES)}
    finally:
        engine.dispose()


def old_layout(url: str) -> None:
    """What a dashboard made before the jobs database had migrations."""
    engine = create_engine(url)
    try:
        metadata.create_all(engine)
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_a_fresh_database_is_migrated_to_exactly_the_tables_create_all_made(database,
                                                                            second_database):
    assert migrated(database) is True
    assert revision(database) == head()
    assert table_names(database) == JOBS_TABLES | {"jobs_alembic_version"}
    engine = create_engine(database)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"version_table": schema.VERSION_TABLE})
            assert compare_metadata(context, metadata) == []
            command.check(schema.alembic_config(connection))  # what autogenerate would see
    finally:
        engine.dispose()
    old_layout(second_database)
    assert layout(database) == layout(second_database)
    assert migrated(database) is False  # at head: nothing to do


def test_the_first_revision_goes_down_and_up_again(database):
    migrated(database)
    move_to(database, command.downgrade, "base")
    assert table_names(database) & JOBS_TABLES == set()
    assert revision(database) is None
    assert migrated(database) is True
    assert revision(database) == head()


def test_a_database_made_by_create_all_keeps_its_rows_and_is_stamped(database):
    old_layout(database)
    store = Store(database)  # no migration yet: the rows a dashboard of before wrote
    try:
        edit = store.record_finished(
            [Change("q1", "running shoes", "en", "US", (3,), ()),
             Change("q2", "laufschuhe", "de", "DE", (), (4,))],
            project_id="p", kind="edit", scope="rows", delta={"add": [3]}, actor="Ann",
            masked_key="tdk_…abcd", session_ref="sid")
        job = store.create(project_id="p", kind="export", scope="filter", state="interrupted",
                           sort=[["query", "ASC"]], message="It stopped.")
        assert store.try_lock("p", job.id)
        with store.writing() as connection:
            connection.execute(insert(lock_waiters).values(project_id="p", waiter="w",
                                                           since=time.time()))
        before = (store.get(edit.id), store.get(job.id), store.changes(edit.id))
    finally:
        store.engine.dispose()
    assert revision(database) is None

    assert migrated(database) is True
    assert revision(database) == head()
    store = Store(database)
    try:
        assert (store.get(edit.id), store.get(job.id), store.changes(edit.id)) == before
        assert not store.try_lock("p", "someone else")  # the lease is still held
        assert store.waiters("p") == 1
        assert store.for_project("p") == [store.get(job.id), store.get(edit.id)]
    finally:
        store.engine.dispose()
    assert migrated(database) is False


def test_a_filter_job_kept_before_resumes_over_the_same_queries(database):
    """A filter job keeps its filter as the API's body (QueryFilters.to_body); one kept in
    the former shape is rewritten, and back again by the downgrade."""
    move_to(database, command.upgrade, schema.BASELINE)
    former = {"text": "shoe", "languages": ["de"], "countries": [], "tag_names": ["sale"],
              "tag_ids": [], "tag_match": "all", "not_tag_names": ["brand"]}
    rule = {"ruleId": 4, "ruleName": "price words"}
    store = Store(database)
    try:
        job = store.create(project_id="p", kind="edit", scope="filter", state="interrupted",
                           scope_filter=former)
        rule_job = store.create(project_id="p", kind="edit", scope="rule", state="done",
                                scope_filter=rule)
    finally:
        store.engine.dispose()

    assert migrated(database) is True
    store = Store(database)
    try:
        body = store.get(job.id).scope_filter
        assert body == {"query": "shoe", "languages": ["de"], "tagNames": ["sale"],
                        "tagMatch": "all", "excludeTagNames": ["brand"]}
        assert QueryFilters.from_body(body) == QueryFilters(
            text="shoe", languages=("de",), tag_names=("sale",), tag_match="all",
            exclude_tag_names=("brand",))
        assert store.get(rule_job.id).scope_filter == rule
    finally:
        store.engine.dispose()

    move_to(database, command.downgrade, schema.BASELINE)
    store = Store(database)
    try:
        assert store.get(job.id).scope_filter == former
        assert store.get(rule_job.id).scope_filter == rule
    finally:
        store.engine.dispose()


def test_a_database_with_only_some_jobs_tables_and_no_version_is_left_alone(database):
    engine = create_engine(database)
    try:
        edits.create(engine)
    finally:
        engine.dispose()
    with pytest.raises(schema.UnknownLayout, match="edits"):
        migrated(database)
    assert table_names(database) == {"edits"}


def test_the_jobs_tables_share_a_database_with_the_service(database):
    from service import schema as service_schema

    assert migrated(database) is True
    engine = create_engine(database)
    try:
        service_schema.upgrade(engine)
        service_head = ScriptDirectory.from_config(
            service_schema.alembic_config(None)).get_current_head()
        assert service_schema.revision(engine) == service_head
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT version_num FROM alembic_version")) == \
                service_head
            assert connection.scalar(text("SELECT version_num FROM jobs_alembic_version")) == \
                head()
            # A new jobs revision, autogenerated here, would not touch the service's tables.
            command.check(schema.alembic_config(connection))
    finally:
        engine.dispose()
    assert migrated(database) is False
    assert revision(database) == head()
    assert JOBS_TABLES | {"organizations", "queries"} <= table_names(database)


def test_workers_starting_at_once_migrate_a_fresh_database_once(database):
    outcomes = at_once(migrated, (database,), WORKERS)
    assert sorted(outcomes) == [False] * (WORKERS - 1) + [True]
    assert revision(database) == head()


def test_the_dashboard_adopts_the_jobs_database_it_made_before(shop, dashboard_config,
                                                               database):
    old_layout(database)
    store = Store(database)
    try:
        edit = store.create(project_id=shop.project_id, kind="edit", scope="filter",
                            state="done", scope_words="everything")
    finally:
        store.engine.dispose()
    app = create_app({**dashboard_config, "JOBS_DATABASE_URL": database})
    try:
        assert app.extensions["tagdesk_jobs"].get(edit.id) == edit
        assert revision(database) == head()
    finally:
        close_app(app)
