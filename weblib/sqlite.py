"""SQLite engines as the service's database and the dashboard's jobs database use them.

- WAL: readers run while one connection writes (synchronous=NORMAL is safe with WAL), and a
  busy database is waited for (30 s) rather than failed at once — switching a new file to WAL
  too: SQLite answers that switch "database is locked" at once, without waiting, when another
  connection is writing the file's first tables (several processes starting on one new file);
- SQLAlchemy, not pysqlite, decides when transactions begin, and a connection with the
  execution option `sqlite_begin="IMMEDIATE"` takes the write lock up front: two writers then
  queue, instead of a deferred transaction that read first failing at its first write
  (SQLITE_BUSY) when another writer got there first. Reads stay deferred.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterable

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine

BEGIN_OPTION = "sqlite_begin"
BEGIN_MODES = ("DEFERRED", "IMMEDIATE", "EXCLUSIVE")
BUSY_TIMEOUT = 30  # seconds


def sqlite_engine(url: str, pragmas: Iterable[str] = ()) -> Engine:
    """An engine for a sqlite:// URL; `pragmas` ("foreign_keys=ON", …) are set on every new
    connection after the journal mode."""
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT,
                                              "check_same_thread": False})
    statements = [f"PRAGMA {pragma}" for pragma in ("synchronous=NORMAL", *pragmas)]

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # the "begin" listener starts transactions
        cursor = dbapi_connection.cursor()
        _switch_to_wal(cursor)
        for statement in statements:
            cursor.execute(statement)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        mode = connection.get_execution_options().get(BEGIN_OPTION, "DEFERRED")
        if mode not in BEGIN_MODES:
            raise ValueError(f"{BEGIN_OPTION} must be one of {BEGIN_MODES}, not {mode!r}")
        connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


def _switch_to_wal(cursor: sqlite3.Cursor) -> None:
    """`PRAGMA journal_mode=WAL`, tried again for up to BUSY_TIMEOUT while the file is locked:
    SQLite's busy timeout does not cover it when waiting could deadlock (another connection
    holds the write lock while this one reads), and it then fails at once."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(random.uniform(0.01, 0.05))  # spread the processes that start together
