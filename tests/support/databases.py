"""The shared PostgreSQL and Redis, databases of a test's own, and the service's database URL
for a test (a copy of the migrated SQLite template, or the run's emptied PostgreSQL one)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, text

POSTGRES_ADMIN_URL = os.environ.get(
    "TAGDESK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("TAGDESK_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@contextmanager
def postgres_database_of_its_own(prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    name = prefix + secrets.token_hex(4)
    admin_engine = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin_engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin_engine.dispose()


# One engine per database URL for the whole run: emptying is done before most tests.
_engines: dict[str, object] = {}

# Every table of the schema but Alembic's emptied and every sequence restarted. Row by row
# while the tables are small (the foreign keys' triggers off for this transaction, which
# takes a superuser, as the tests' default URL is): TRUNCATE of the 20 tables took ~140 ms a
# test, this ~10 ms. Once their rows, live or dead, pass TRUNCATE_FROM bytes, or for a user
# who is not a superuser, TRUNCATE: no test reads the dead rows of the one before it.
TRUNCATE_FROM = 4 * 1024 * 1024
EMPTY_EVERY_TABLE = f"""
DO $$
DECLARE
  name text;
  every_table text;
BEGIN
  SELECT string_agg(format('%I', tablename), ', ') INTO every_table FROM pg_tables
  WHERE schemaname = 'public' AND tablename <> 'alembic_version';
  IF (SELECT sum(pg_relation_size(format('%I', tablename)::regclass)) FROM pg_tables
      WHERE schemaname = 'public') > {TRUNCATE_FROM}
     OR NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'TRUNCATE ' || every_table || ' RESTART IDENTITY';
    RETURN;
  END IF;
  SET LOCAL session_replication_role = replica;
  FOR name IN SELECT tablename FROM pg_tables
              WHERE schemaname = 'public' AND tablename <> 'alembic_version' LOOP
    EXECUTE format('DELETE FROM %I', name);
  END LOOP;
  FOR name IN SELECT sequencename FROM pg_sequences WHERE schemaname = 'public' LOOP
    EXECUTE format('ALTER SEQUENCE %I RESTART', name);
  END LOOP;
END $$;
"""


def empty_postgres(url: str) -> None:
    """Every row of the test run's database gone and its ids starting again at 1."""
    engine = _engines.get(url)
    if engine is None:
        engine = _engines[url] = create_engine(url, pool_size=1)
    with engine.begin() as connection:
        connection.execute(text(EMPTY_EVERY_TABLE))


def database_for(kind: str, request, tmp_path, sqlite_template) -> str:
    """The service's database for this test: "postgres" (the run's database, emptied; the
    `postgres_database` fixture of tests/conftest.py) or a copy of the SQLite template."""
    if kind == "postgres":
        url = request.getfixturevalue("postgres_database")
        empty_postgres(url)
        return url
    path = tmp_path / "service.sqlite3"
    shutil.copy(sqlite_template, path)
    return f"sqlite:///{path}"


def close_service_app(app) -> None:
    """A service app of a test closed: the jobs its threads run (learning, imports) waited
    for, then its connections closed. A job left running would write into the next test's
    database (on PostgreSQL, emptied for that test: a deadlock with the emptying)."""
    for runner in ("tagdesk_learner", "tagdesk_imports"):
        if (found := app.extensions.get(runner)) is not None:
            found.shutdown(wait=True)
    app.extensions["tagdesk_engine"].dispose()
