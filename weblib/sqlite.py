"""SQLite engines as the service's database and the dashboard's jobs database use them.

- WAL: readers run while one connection writes (synchronous=NORMAL is safe with WAL), and a
  busy database is waited for (30 s) rather than failed at once — switching a new file to WAL
  too: SQLite answers that switch "database is locked" at once, without waiting, when another
  connection is writing the file's first tables (several processes starting on one new file);
- SQLAlchemy, not pysqlite, decides when transactions begin, and a connection with the
  execution option `sqlite_begin="IMMEDIATE"` takes the write lock up front: two writers then
  queue, instead of a deferred transaction that read first failing at its first write
  (SQLITE_BUSY) when another writer got there first. Reads stay deferred;
- checkpoints off the writer's path: SQLite copies the write-ahead log into the database file
  (a checkpoint, with two fsyncs) inside the COMMIT that takes the log past 1,000 pages, so
  one request in a few paid for the writes of all (a 1,000-item set-tags at a million
  queries: 45 ms of its COMMIT, nearly every time). Here no connection checkpoints by itself
  (`wal_autocheckpoint=0`); a thread of the process does, PASSIVE (waiting for no reader or
  writer), shortly after any transaction that changed rows commits. The log file is cut back
  to JOURNAL_SIZE_LIMIT when it starts over, so a large import does not leave it at its
  largest.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine

BEGIN_OPTION = "sqlite_begin"
BEGIN_MODES = ("DEFERRED", "IMMEDIATE", "EXCLUSIVE")
BUSY_TIMEOUT = 30  # seconds
# After a commit, the checkpoint waits this long, so that a burst of commits is copied once.
CHECKPOINT_DELAY = 0.05  # seconds
# A checkpoint thread with nothing to do for this long ends; the next commit starts another.
CHECKPOINT_IDLE = 30.0  # seconds
JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024  # bytes

log = logging.getLogger(__name__)


def sqlite_engine(url: str, pragmas: Iterable[str] = ()) -> Engine:
    """An engine for a sqlite:// URL; `pragmas` ("foreign_keys=ON", …) are set on every new
    connection after the journal mode."""
    engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT,
                                              "check_same_thread": False})
    statements = [f"PRAGMA {pragma}" for pragma in (
        "synchronous=NORMAL", "wal_autocheckpoint=0", f"journal_size_limit={JOURNAL_SIZE_LIMIT}",
        *pragmas)]
    checkpointer = Checkpointer(engine.url.database)
    _checkpointers[engine] = checkpointer

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
        connection.info[_CHANGES_AT_BEGIN] = _changes(connection)

    @event.listens_for(engine, "commit")
    def _commit(connection):
        # Before the COMMIT itself: the checkpoint comes CHECKPOINT_DELAY later.
        if _changes(connection) != connection.info.pop(_CHANGES_AT_BEGIN, None):
            checkpointer.request()

    return engine


_CHANGES_AT_BEGIN = "weblib_sqlite_changes_at_begin"
_checkpointers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def checkpointer_of(engine: Engine) -> Checkpointer:
    return _checkpointers[engine]


def _changes(connection) -> int:
    """Rows this connection has inserted, updated or deleted since it was opened."""
    return connection.connection.dbapi_connection.total_changes


class Checkpointer:
    """Checkpoints one database file from a thread of its own, CHECKPOINT_DELAY after each
    request(). The thread holds only a weak reference to this object: it ends when the engine
    is gone, or after CHECKPOINT_IDLE without a request (started again by the next)."""

    def __init__(self, path: str | None):
        self.path = path
        self.wanted = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()
        self.checkpoints = 0  # how many ran (tests)

    def request(self) -> None:
        if not self.path or self.path == ":memory:":
            return
        self.wanted.set()
        with self._lock:
            # A forked process (a gunicorn worker) has the object but not the thread.
            if self._thread is None or self._pid != os.getpid():
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=_checkpoint_when_wanted, args=(weakref.ref(self), self.wanted),
                    name="sqlite-checkpoint", daemon=True)
                self._thread.start()

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def checkpoint(self) -> None:
        """One PASSIVE checkpoint: copies what it can without waiting for anyone; pages a
        reader still needs wait for the next."""
        try:
            # mode=rw: a file removed meanwhile is not made again, empty.
            connection = sqlite3.connect(Path(self.path).absolute().as_uri() + "?mode=rw",
                                         uri=True, timeout=BUSY_TIMEOUT)
        except sqlite3.Error as error:
            log.warning("no checkpoint of %s: %s", self.path, error)
            return
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.checkpoints += 1
        except sqlite3.Error as error:
            log.warning("no checkpoint of %s: %s", self.path, error)
        finally:
            connection.close()


def _checkpoint_when_wanted(owner: weakref.ref, wanted: threading.Event) -> None:
    while True:
        woken = wanted.wait(CHECKPOINT_IDLE)
        checkpointer = owner()
        if checkpointer is None:
            return
        if not woken:
            # Idle: end, unless a request came meanwhile (request() sets `wanted`, then looks
            # for the thread under the same lock).
            with checkpointer._lock:
                if not wanted.is_set():
                    checkpointer._thread = None
                    return
            continue
        del checkpointer
        time.sleep(CHECKPOINT_DELAY)
        wanted.clear()
        checkpointer = owner()
        if checkpointer is None:
            return
        checkpointer.checkpoint()
        del checkpointer


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
