"""Engine and sessions. One engine per app; a session per request, closed at teardown."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from typing import TypeVar

from flask import current_app, g
from psycopg.types.string import TextLoader
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from weblib.sqlite import BEGIN_OPTION, sqlite_engine

# SQLite: the settings a bulk load changed on its connection (service/engine/bulk_load.py),
# with the values set again when the connection returns to the pool.
RESTORE_PRAGMAS = "tagdesk_bulk_load_pragmas"


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        # WAL lets readers run while a bulk update writes; foreign keys are off by default.
        engine = sqlite_engine(url, ("foreign_keys=ON", "cache_size=-65536",
                                     "mmap_size=1073741824", "temp_store=MEMORY"))

        @event.listens_for(engine, "checkin")
        def _temp_store_back(dbapi_connection, record):
            # A bulk load kept its temporary tables and sorts in files and a larger page cache
            # (service/engine/bulk_load.py): the usual settings again once its transaction is over.
            for name, value in record.info.pop(RESTORE_PRAGMAS, {}).items():
                dbapi_connection.execute(f"PRAGMA {name} = {value}")

        return engine
    # No statement is prepared by the driver: each one is planned for its own values (a
    # generic plan, one for any project and any tag, read a large project's rare tag's page in
    # ~250 ms instead of ~10), while the plans the server caches for itself (the foreign-key
    # checks, the triggers' statements) are made once and kept. Forcing a plan per execution
    # instead (plan_cache_mode = force_custom_plan) planned every foreign-key check again for
    # every row written: a quarter of an import's time.
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10,
                           connect_args={"prepare_threshold": None})

    @event.listens_for(engine, "connect")
    def _postgres_settings(dbapi_connection, _record):
        # Ids are strings to the service, whether a statement reads them through a model
        # (migration 0022 made them `uuid`) or as its own text.
        dbapi_connection.adapters.register_loader("uuid", TextLoader)
        # No parallel workers: starting them costs more than these short statements gain. No
        # JIT compilation: at ten million queries the planner's costs pass jit_above_cost on
        # ordinary pages, and compiling took 10 ms of a rare tag's page.
        dbapi_connection.execute("SET max_parallel_workers_per_gather = 0")
        dbapi_connection.execute("SET jit = off")
        dbapi_connection.commit()

    return engine


def get_session() -> Session:
    if "db_session" not in g:
        g.db_session = current_app.extensions["tagdesk_sessionmaker"]()
    return g.db_session


def begin_write(session: Session) -> None:
    """Start a write transaction that holds SQLite's write lock from its first statement."""
    if session.in_transaction():
        session.commit()
    session.connection(execution_options={BEGIN_OPTION: "IMMEDIATE"})


# PostgreSQL's deadlock and serialization failure: the transaction was rolled back whole,
# and the same work run again normally goes through.
RETRYABLE = {"40P01", "40001"}
ATTEMPTS = 3
Result = TypeVar("Result")


def retryable(error: OperationalError) -> bool:
    return getattr(error.orig, "sqlstate", None) in RETRYABLE


def retried(session: Session, write: Callable[[], Result]) -> Result:
    """`write` (a whole transaction on `session`), run again when it lost a deadlock or a
    serialization failure, up to ATTEMPTS times in all."""
    for attempt in range(ATTEMPTS):
        try:
            return write()
        except OperationalError as error:
            session.rollback()
            if not retryable(error) or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def close_session(_exc=None) -> None:
    session = g.pop("db_session", None)
    if session is not None:
        session.close()


@contextmanager
def session_scope(app):
    """A session outside a request (seeding, tests), committed on success."""
    session: Session = app.extensions["tagdesk_sessionmaker"]()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


@contextmanager
def write_scope(app):
    """A write outside a request (the command line), committed on success. It holds
    SQLite's write lock from its first statement, so a running writer is waited for, as a
    request's write does (one that read first fails at its first write, "database is
    locked", when another holds the lock)."""
    with session_scope(app) as session:
        begin_write(session)
        yield session


def init_app(app) -> None:
    engine = make_engine(app.config["DATABASE_URL"])
    app.extensions["tagdesk_engine"] = engine
    app.extensions["tagdesk_sessionmaker"] = sessionmaker(engine, expire_on_commit=False)
    app.teardown_appcontext(close_session)
