"""Where edits, jobs and their progress are kept: SQLAlchemy Core tables in the dashboard's
own database (JOBS_DATABASE_URL: SQLite in the instance folder by default, PostgreSQL through
the same URL form). The tables are created and upgraded with Alembic at start-up
(jobs/schema.py, jobs/migrations/), like the service's; `metadata` below is what the newest
revision makes.

- `edits`: one row per edit a person made (in-page or in the background), per undo and per
  export — the activity log, and a background job's state and progress. Any process can read
  it, so any worker answers a progress poll.
- `edit_changes`: exactly what an edit did, one row per query it changed (added and removed
  tag ids, and the query's key). Undo reads it. A query appears at most once per edit (the
  primary key), and a background batch's rows are written *before* its write to the API
  (`batch` > the edit's `batches`: pending) and confirmed after, so an interruption between
  the two is noticed and resolved on resume.
- `project_locks`: a short lease per project held from a read of fresh tags to the write based
  on it, so that two edits in this dashboard never interleave their read-modify-write on the
  same project — whichever process or host they run in.

The org key is never stored here: a job keeps the id of the session (in the server-side
session store) that holds it.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from weblib.job_lifecycle import EPOCH_SECONDS, Lifecycle
from weblib.processes import process_owner as process_owner  # the owner pages give an edit
from weblib.sqlite import BEGIN_OPTION, sqlite_engine

from . import schema
from .deltas import Change
from .edit import ACTIVE, FINISHED, Edit

metadata = MetaData()

edits = Table(
    "edits", metadata,
    Column("id", String(32), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("kind", String(16), nullable=False),           # edit | undo | export | tag
    Column("scope", String(16), nullable=False),          # rows | filter
    Column("scope_filter", JSON, nullable=True),          # a filter job's QueryFilters.to_body()
    Column("scope_words", Text, nullable=False, default=""),
    Column("delta", JSON, nullable=True),                 # Delta.to_json()
    Column("tag_names", JSON, nullable=True),             # {"id": name}, for sentences
    Column("sort", JSON, nullable=True),                  # exports: [[field, direction]]
    Column("undo_of", String(32), nullable=True),
    Column("undone_by", String(32), nullable=True),
    Column("state", String(16), nullable=False),          # queued running done cancelled
    Column("message", Text, nullable=True),               #   interrupted failed
    Column("expected", Integer, nullable=False, default=0),  # the count the person confirmed
    Column("total", Integer, nullable=False, default=0),     # best current estimate
    Column("processed", Integer, nullable=False, default=0),
    Column("changed", Integer, nullable=False, default=0),
    Column("untouched", Integer, nullable=False, default=0),  # already right, nothing to write
    Column("cursor_k", Integer, nullable=False, default=0),
    Column("cursor_last", String(255), nullable=True),
    Column("batches", Integer, nullable=False, default=0),
    Column("pending_batch", Integer, nullable=True),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    Column("session_ref", String(255), nullable=True),
    Column("actor", String(100), nullable=False, default=""),
    Column("masked_key", String(64), nullable=False, default=""),
    Column("owner", String(255), nullable=True),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float, nullable=True),
    Column("run_started_at", Float, nullable=True),
    Column("run_processed_start", Integer, nullable=False, default=0),
    Column("heartbeat_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    Column("requests", Integer, nullable=False, default=0),
    Column("rate_limited", Integer, nullable=False, default=0),
    Column("file", String(500), nullable=True),
    Index("edits_project_created", "project_id", "created_at"),
    Index("edits_state", "state"),
)

edit_changes = Table(
    "edit_changes", metadata,
    Column("edit_id", String(32), primary_key=True),
    Column("query_id", String(255), primary_key=True),
    Column("query", Text, nullable=False),
    Column("language", String(64), nullable=False),
    Column("country", String(64), nullable=False),
    Column("added", String(2000), nullable=False),     # tag ids, comma-separated
    Column("removed", String(2000), nullable=False),
    Column("batch", Integer, nullable=False, default=0),
    Index("edit_changes_batch", "edit_id", "batch"),
)

project_locks = Table(
    "project_locks", metadata,
    Column("project_id", String(64), primary_key=True),
    Column("holder", String(64), nullable=False),
    Column("expires_at", Float, nullable=False),
)

# Edits waiting for a project's lease: a job that holds it for a while lets them in.
lock_waiters = Table(
    "lock_waiters", metadata,
    Column("project_id", String(64), primary_key=True),
    Column("waiter", String(64), primary_key=True),
    Column("since", Float, nullable=False),
)

# The moves of a job's state, its heartbeat and the rule for a dead one (weblib.job_lifecycle).
lifecycle = Lifecycle(edits, EPOCH_SECONDS, ended=FINISHED)

# A running job's process writes a heartbeat this often; one silent for STALE_SECONDS is
# taken to have died with its process (configurable: JOBS_STALE_SECONDS).
HEARTBEAT_SECONDS = 2.0
STALE_SECONDS = 30.0
# A project's lease lasts this long unless renewed (a job's heartbeat renews it); an in-page
# edit holds it for one read and one write, well within it.
LOCK_LEASE_SECONDS = 60.0
INSERT_CHUNK = 500
# PostgreSQL advisory lock taken while the tables are migrated ("tdjobs" in ASCII).
SCHEMA_LOCK_ID = 0x74646A6F6273

# What a person reads on a job whose process (a web worker after a restart, an RQ worker) is gone.
STOPPED_WORKING = ("Tagdesk stopped working on this before it finished (a restart or a lost "
                   "worker).")

def new_id() -> str:
    return uuid.uuid4().hex


_EDIT_FIELDS = [f.name for f in fields(Edit)]


def _edit(row) -> Edit | None:
    if row is None:
        return None
    mapping = row._mapping
    return Edit(**{name: mapping[name] for name in _EDIT_FIELDS})


# The statement, for drivers with %s placeholders (psycopg) and with ? (sqlite3).
INSERT_CHANGES = {
    False: "INSERT INTO edit_changes (edit_id, query_id, query, language, country, added, "
           "removed, batch) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
    True: "INSERT INTO edit_changes (edit_id, query_id, query, language, country, added, "
          "removed, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
}


def _ids_text(ids) -> str:
    return ",".join(str(int(tag_id)) for tag_id in ids)


def _ids_of(text: str | None) -> tuple[int, ...]:
    return tuple(int(part) for part in (text or "").split(",") if part)


def _change_row(edit_id: str, change: Change, batch: int) -> tuple:
    return (edit_id, change.query_id, change.query, change.language, change.country,
            _ids_text(change.added), _ids_text(change.removed), batch)


def _change(row) -> Change:
    return Change(row.query_id, row.query, row.language, row.country, _ids_of(row.added),
                  _ids_of(row.removed))


def _chunks(items: list, size: int = INSERT_CHUNK) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


# Read by every whole queries page: built once (building and keying the statement on each call
# cost two to four times the read itself, 0.2–0.5 ms a page).
UNFINISHED = (select(edits)
              .where(edits.c.project_id == bindparam("project_id"),
                     edits.c.state.in_((*ACTIVE, "interrupted")))
              .order_by(edits.c.created_at.desc()))


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # WAL, and writers that take the write lock up front (`writing`): see weblib.sqlite.
        return sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)


class Store:
    """The dashboard's tables. One per database URL per process (`for_url`)."""

    _instances: dict[tuple[int, str], Store] = {}
    _instances_lock = threading.Lock()

    def __init__(self, url: str):
        self.url = url
        self.engine = make_engine(url)

    @classmethod
    def for_url(cls, url: str) -> Store:
        key = (os.getpid(), url)
        with cls._instances_lock:
            store = cls._instances.get(key)
            if store is None:
                store = cls._instances[key] = cls(url)
                store.upgrade()
            return store

    @classmethod
    def forget(cls, url: str) -> None:
        with cls._instances_lock:
            store = cls._instances.pop((os.getpid(), url), None)
        if store is not None:
            store.engine.dispose()

    @contextmanager
    def writing(self):
        """A write transaction (committed at the end, rolled back on error)."""
        with self.engine.connect() as connection:
            connection = connection.execution_options(**{BEGIN_OPTION: "IMMEDIATE"})
            with connection.begin():
                yield connection

    def _insert_changes(self, connection, rows: list[tuple]) -> None:
        """Many change rows at once, straight through the driver (a batch of 1,000 would spend
        most of its time in per-row parameter processing otherwise)."""
        if not rows:
            return
        statement = INSERT_CHANGES[self.engine.dialect.paramstyle == "qmark"]
        for chunk in _chunks(rows):
            connection.exec_driver_sql(statement, chunk)

    def upgrade(self) -> bool:
        """Create or migrate the tables (jobs/schema.py); True when anything was done.
        Several workers may start at once on a fresh database: the first migrates it while
        the others wait, then find it at the newest revision. On SQLite the write lock is
        taken before the checks (a deferred transaction that read first fails at its first
        CREATE instead of waiting); on PostgreSQL an advisory lock serializes them."""
        with self.writing() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:id)"),
                                   {"id": SCHEMA_LOCK_ID})
            return schema.upgrade(connection)


    # --- reading -------------------------------------------------------------------------

    def get(self, edit_id: str) -> Edit | None:
        with self.engine.connect() as connection:
            return _edit(connection.execute(select(edits).where(edits.c.id == edit_id)).first())

    def for_project(self, project_id: str, limit: int = 50, offset: int = 0) -> list[Edit]:
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(edits).where(edits.c.project_id == project_id)
                .order_by(edits.c.created_at.desc(), edits.c.id).limit(limit).offset(offset))
            return [_edit(row) for row in rows]

    def count_for_project(self, project_id: str) -> int:
        with self.engine.connect() as connection:
            return connection.scalar(select(func.count()).select_from(edits).where(
                edits.c.project_id == project_id)) or 0

    def unfinished(self, project_id: str) -> list[Edit]:
        """Jobs of a project that are queued, running or interrupted (newest first)."""
        with self.engine.connect() as connection:
            rows = connection.execute(UNFINISHED, {"project_id": project_id})
            return [_edit(row) for row in rows]

    def changes(self, edit_id: str, query_ids: Iterable[str] | None = None) -> dict[str,
                                                                                  Change]:
        """The recorded changes of an edit (all, or those of these queries)."""
        found: dict[str, Change] = {}
        with self.engine.connect() as connection:
            if query_ids is None:
                rows = connection.execute(select(edit_changes).where(
                    edit_changes.c.edit_id == edit_id))
                return {row.query_id: _change(row) for row in rows}
            for chunk in _chunks(list(query_ids)):
                rows = connection.execute(select(edit_changes).where(
                    edit_changes.c.edit_id == edit_id, edit_changes.c.query_id.in_(chunk)))
                found.update({row.query_id: _change(row) for row in rows})
        return found

    def pending_changes(self, edit_id: str, batch: int) -> dict[str, Change]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(edit_changes).where(
                edit_changes.c.edit_id == edit_id, edit_changes.c.batch == batch))
            return {row.query_id: _change(row) for row in rows}

    # --- writing -------------------------------------------------------------------------

    def create(self, **values) -> Edit:
        values.setdefault("id", new_id())
        values.setdefault("created_at", time.time())
        values.setdefault("scope_words", "")
        with self.writing() as connection:
            connection.execute(insert(edits).values(**values))
        return self.get(values["id"])

    def record_finished(self, changes: list[Change], **values) -> Edit:
        """An edit done within a request: the edit and its changes in one transaction."""
        now = time.time()
        values.setdefault("id", new_id())
        values.update(created_at=values.get("created_at", now), started_at=now,
                      finished_at=now, state="done")
        with self.writing() as connection:
            connection.execute(insert(edits).values(**values))
            self._insert_changes(connection, [_change_row(values["id"], change, 0)
                                              for change in changes])
        return self.get(values["id"])

    def update(self, edit_id: str, **values) -> None:
        with self.writing() as connection:
            connection.execute(update(edits).where(edits.c.id == edit_id).values(**values))

    def claim(self, edit_id: str, owner: str) -> Edit | None:
        """queued -> running, for this process (one of all the workers that try); None if it
        is not queued (any more), or was cancelled before it started."""
        now = time.time()
        with self.writing() as connection:
            connection.execute(update(edits).where(
                edits.c.id == edit_id, edits.c.state == "queued", edits.c.cancel_requested
            ).values(state="cancelled", finished_at=now))
            if not lifecycle.claim(connection, edit_id, owner, run_started_at=now,
                                   run_processed_start=edits.c.processed,
                                   started_at=func.coalesce(edits.c.started_at, now)):
                return None
        return self.get(edit_id)

    def heartbeat(self, edit_id: str, owner: str) -> bool:
        """Whether the job is still this owner's and running."""
        with self.writing() as connection:
            return lifecycle.beat(connection, edit_id, owner)

    def begin_batch(self, edit_id: str, batch: int, changes: list[Change]) -> None:
        """Before a batch's write: its intended changes, marked pending."""
        with self.writing() as connection:
            connection.execute(delete(edit_changes).where(
                edit_changes.c.edit_id == edit_id, edit_changes.c.batch == batch))
            self._insert_changes(connection, [_change_row(edit_id, change, batch)
                                              for change in changes])
            connection.execute(update(edits).where(edits.c.id == edit_id).values(
                pending_batch=batch))

    def commit_batch(self, edit_id: str, batch: int, counters: dict,
                     replace_changes: list[Change] | None = None) -> None:
        """After a batch's write: its changes confirmed, the counters and the walk's position
        stored — exactly what was done so far."""
        with self.writing() as connection:
            if replace_changes is not None:
                connection.execute(delete(edit_changes).where(
                    edit_changes.c.edit_id == edit_id, edit_changes.c.batch == batch))
                self._insert_changes(connection, [_change_row(edit_id, change, batch)
                                                  for change in replace_changes])
            connection.execute(update(edits).where(edits.c.id == edit_id).values(
                batches=batch, pending_batch=None, heartbeat_at=time.time(), **counters))

    def finish(self, edit_id: str, state: str, message: str | None = None,
               **values) -> None:
        with self.writing() as connection:
            connection.execute(update(edits).where(edits.c.id == edit_id).values(
                state=state, message=message, finished_at=time.time(), **values))

    def request_cancel(self, edit_id: str) -> Edit | None:
        """Running jobs stop at their next batch boundary; queued and interrupted ones stop
        now (exactly what was done so far stays done)."""
        now = time.time()
        with self.writing() as connection:
            connection.execute(update(edits).where(
                edits.c.id == edit_id, edits.c.state.in_(("queued", "interrupted"))
            ).values(state="cancelled", cancel_requested=True, finished_at=now))
            connection.execute(update(edits).where(
                edits.c.id == edit_id, edits.c.state == "running"
            ).values(cancel_requested=True))
        return self.get(edit_id)

    def cancel_requested(self, edit_id: str) -> bool:
        with self.engine.connect() as connection:
            return bool(connection.scalar(select(edits.c.cancel_requested).where(
                edits.c.id == edit_id)))

    def requeue(self, edit_id: str, owner: str, **values) -> bool:
        """interrupted -> queued (Resume)."""
        with self.writing() as connection:
            return lifecycle.requeue(connection, edit_id, owner, cancel_requested=False,
                                     **values)

    def mark_undone(self, edit_id: str, undo_id: str) -> bool:
        """Claim an edit for one undo (a second Undo click finds it taken)."""
        with self.writing() as connection:
            result = connection.execute(update(edits).where(
                edits.c.id == edit_id, edits.c.undone_by.is_(None)
            ).values(undone_by=undo_id))
            return result.rowcount == 1

    def release_undo(self, edit_id: str, undo_id: str) -> None:
        """An undo that could not start gives the edit back."""
        with self.writing() as connection:
            connection.execute(update(edits).where(
                edits.c.id == edit_id, edits.c.undone_by == undo_id).values(undone_by=None))

    def interrupt_dead(self, stale_seconds: float = STALE_SECONDS,
                       project_id: str | None = None) -> int:
        """Jobs left queued or running by a process that is gone (weblib.job_lifecycle's
        rule: its owner process on this host no longer runs, or it has been silent longer than
        its state allows): interrupted; how many."""
        where = () if project_id is None else (edits.c.project_id == project_id,)
        with self.engine.connect() as connection:
            dead = lifecycle.dead(lifecycle.watching(connection, *where), stale_seconds)
        interrupted = 0
        for job in dead:
            with self.writing() as connection:
                if lifecycle.interrupt(connection, job, STOPPED_WORKING):
                    interrupted += 1
                    # A lease the dead job held is free at once (not only when it expires).
                    connection.execute(delete(project_locks).where(
                        project_locks.c.holder == job.id))
        return interrupted

    # --- the per-project lease -----------------------------------------------------------

    def try_lock(self, project_id: str, holder: str,
                 lease: float = LOCK_LEASE_SECONDS) -> bool:
        now = time.time()
        with self.writing() as connection:
            connection.execute(delete(project_locks).where(
                project_locks.c.project_id == project_id, project_locks.c.expires_at < now))
            # The same holder again (a job resumed after its process died holding it).
            mine = connection.execute(update(project_locks).where(
                project_locks.c.project_id == project_id, project_locks.c.holder == holder
            ).values(expires_at=now + lease))
            if mine.rowcount == 1:
                return True
            try:
                with connection.begin_nested():
                    connection.execute(insert(project_locks).values(
                        project_id=project_id, holder=holder, expires_at=now + lease))
                return True
            except IntegrityError:
                return False

    def unlock(self, project_id: str, holder: str) -> None:
        with self.writing() as connection:
            connection.execute(delete(project_locks).where(
                project_locks.c.project_id == project_id, project_locks.c.holder == holder))

    def renew_lock(self, project_id: str, holder: str,
                   lease: float = LOCK_LEASE_SECONDS) -> None:
        with self.writing() as connection:
            connection.execute(update(project_locks).where(
                project_locks.c.project_id == project_id, project_locks.c.holder == holder
            ).values(expires_at=time.time() + lease))

    def lock(self, project_id: str, holder: str, wait: float | None = None,
             poll: float = 0.01) -> None:
        """Take the project's lease, waiting for it (as a registered waiter, so that a job
        holding it lets go at its next batch). `wait`: give up (LockBusy) after this many
        seconds; None waits as long as it takes."""
        if self.try_lock(project_id, holder):
            return
        deadline = None if wait is None else time.monotonic() + wait
        with self.writing() as connection:
            connection.execute(delete(lock_waiters).where(
                lock_waiters.c.project_id == project_id, lock_waiters.c.waiter == holder))
            connection.execute(insert(lock_waiters).values(
                project_id=project_id, waiter=holder, since=time.time()))
        try:
            while not self.try_lock(project_id, holder):
                if deadline is not None and time.monotonic() > deadline:
                    raise LockBusy(project_id)
                time.sleep(poll)
        finally:
            with self.writing() as connection:
                connection.execute(delete(lock_waiters).where(
                    lock_waiters.c.project_id == project_id, lock_waiters.c.waiter == holder))

    def waiters(self, project_id: str, stale: float = 60.0) -> int:
        """How many others wait for the project's lease (recently registered)."""
        with self.engine.connect() as connection:
            return connection.scalar(select(func.count()).select_from(lock_waiters).where(
                lock_waiters.c.project_id == project_id,
                lock_waiters.c.since > time.time() - stale)) or 0

    @contextmanager
    def project_lock(self, project_id: str, holder: str, wait: float | None = None,
                     poll: float = 0.01):
        """Hold the project's lease from a fresh read to the write based on it."""
        self.lock(project_id, holder, wait, poll)
        try:
            yield
        finally:
            self.unlock(project_id, holder)


class LockBusy(Exception):
    """Another edit of the same project holds the lease for longer than we may wait."""
