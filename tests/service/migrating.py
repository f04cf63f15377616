"""A database as an older deployment left it: migrated to a past revision, holding rows; and the
text-gram counters a later migration leaves in it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, create_engine, text

from service import schema
from service.store.models import Base
from tests.service.folding import expected_gram_counts, stored_gram_counts
from tests.support.databases import postgres_database_of_its_own


@contextmanager
def database_of_its_own(kind: str, tmp_path: Path, prefix: str) -> Iterator[str]:
    """The URL of an empty database: a SQLite file in `tmp_path` ("sqlite"), or a PostgreSQL
    database named from `prefix`, dropped afterwards ("postgres")."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.sqlite3'}"
    else:
        with postgres_database_of_its_own(prefix) as url:
            yield url


# The projects' ids, and the id of the query at `index` of the rows: ids as the service makes
# them (PostgreSQL stores them as `uuid` from migration 0022).
P1 = "00000000-0000-4000-8000-0000000000f1"
P2 = "00000000-0000-4000-8000-0000000000f2"


@contextmanager
def engine_of_its_own(kind: str, tmp_path: Path, prefix: str) -> Iterator[Engine]:
    """An engine on an empty database of its own (database_of_its_own), disposed of after."""
    with database_of_its_own(kind, tmp_path, prefix) as url:
        engine = create_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()


def query_id(index: int) -> str:
    return f"00000000-0000-4000-8000-{index:012d}"


def migrated_with_rows(engine, revision: str, rows) -> None:
    """Migrate to `revision`, then add an organization with projects P1 and P2 and the
    queries `rows` ((text, language, country, …)), spread over both projects."""
    with schema.migrating(engine) as connection:
        command.upgrade(schema.alembic_config(connection), revision)
        connection.execute(text("INSERT INTO organizations (id, name, created_at) "
                                "VALUES ('o', 'Org', '2026-01-01')"))
        for project in (P1, P2):
            connection.execute(text(
                "INSERT INTO projects (id, org_id, name, created_at) "
                "VALUES (:id, 'o', :name, '2026-01-01')"), {"id": project, "name": project[-2:]})
        for index, (query, language, country, *_rest) in enumerate(rows):
            connection.execute(text(
                "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
                "VALUES (:id, :project, :query, :language, :country, '2026-01-01')"),
                {"id": query_id(index), "project": P1 if index % 3 else P2, "query": query,
                 "language": language, "country": country})


# The longest strings whose matches text_gram_counts held (migrations 0009 to 0025): on SQLite
# only the terms shorter than the trigram index's three characters (what service/api/search.py
# said until the count engine, migration 0026, replaced both).
COUNTED_GRAM_LENGTH = {"postgresql": 4, "sqlite": 2}


def migrate(engine, revision: str, *, down: bool = False) -> None:
    with schema.migrating(engine) as connection:
        step = command.downgrade if down else command.upgrade
        step(schema.alembic_config(connection), revision)


def ids_after_a_delete(engine, table: str, insert) -> list[int]:
    """Rows "a" and "b" of project P1 added to `table` by the statement `insert`, "b" deleted,
    then "c" added: the ids `table` holds, in order ([1, 3] where an id is never given
    again)."""
    with engine.begin() as connection:
        connection.execute(insert, {"project": P1, "name": "a"})
        connection.execute(insert, {"project": P1, "name": "b"})
        connection.execute(text(f"DELETE FROM {table} WHERE name = 'b'"))
        connection.execute(insert, {"project": P1, "name": "c"})
        return list(connection.execute(text(f"SELECT id FROM {table} ORDER BY id")).scalars())


def model_differences(engine) -> list:
    """What autogenerate finds between the database and the service's models (Base.metadata):
    each test keeps the differences of the tables it is about."""
    with engine.connect() as connection:
        return compare_metadata(MigrationContext.configure(connection), Base.metadata)


def model_differences_after(engine, before: str, revision: str) -> list:
    """Migrate to `before` with one query in it (migrated_with_rows), then up to `revision`:
    the model_differences of the database it leaves."""
    migrated_with_rows(engine, before, [("shoes", "en", "US")])
    migrate(engine, revision)
    return model_differences(engine)


def gram_counts_after(engine, revision: str, rows, target: str) -> tuple[dict, dict]:
    """Migrate to `revision` with `rows` (migrated_with_rows), then on to `target`: the
    text-gram counters stored, and those recomputed from the queries."""
    migrated_with_rows(engine, revision, rows)
    migrate(engine, target)
    longest = COUNTED_GRAM_LENGTH[engine.dialect.name]
    with engine.connect() as connection:
        return stored_gram_counts(connection), expected_gram_counts(connection, longest)
