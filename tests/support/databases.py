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


def empty_postgres(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "TRUNCATE query_tags, queries, tags, api_keys, projects, organizations "
            "RESTART IDENTITY CASCADE"))
    engine.dispose()


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
