"""SQLite's checkpoints run beside the writers, not inside their COMMIT (weblib/sqlite.py): a
commit returns with its pages still in the write-ahead log, a thread copies them into the
database file a moment later, and the log file is cut back when it starts over."""

from __future__ import annotations

import sqlite3
import time

import pytest
from sqlalchemy import text

from weblib import sqlite as weblib_sqlite
from weblib.sqlite import checkpointer_of, sqlite_engine

PAGE = 4096
BIG = 2_000  # rows of one page each: ~8 MB, past SQLite's default of 1,000 pages a checkpoint


def write_big(connection) -> None:
    connection.execute(text("CREATE TABLE IF NOT EXISTS blobs (body BLOB)"))
    connection.execute(text("INSERT INTO blobs (body) SELECT randomblob(:size) FROM "
                            "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                            "WHERE i < :rows) SELECT i FROM n)"),
                       {"size": PAGE - 100, "rows": BIG})


def write_row(engine, value: int) -> None:
    """One row written and committed (the table made by the first)."""
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE IF NOT EXISTS t (x)"))
        connection.execute(text("INSERT INTO t VALUES (:x)"), {"x": value})


def wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.fixture
def engine_at(tmp_path):
    """Makes engines on files in tmp_path (settings patched before the call apply), disposed
    after the test."""
    engines = []

    def make(name: str = "db.sqlite3"):
        engines.append(sqlite_engine(f"sqlite:///{tmp_path / name}"))
        return engines[-1]

    yield make
    for engine in engines:
        engine.dispose()


@pytest.fixture
def slow_checkpoints(monkeypatch):
    """Two seconds between a commit and its checkpoint: time to look at the files, even on a
    busy machine."""
    monkeypatch.setattr(weblib_sqlite, "CHECKPOINT_DELAY", 2.0)


def test_without_the_engine_sqlite_checkpoints_inside_the_commit(tmp_path):
    """The premise: a plain connection's COMMIT of ~8 MB copies it into the file at once."""
    path = tmp_path / "plain.sqlite3"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("BEGIN")
    connection.execute("CREATE TABLE blobs (body BLOB)")
    connection.execute("INSERT INTO blobs SELECT randomblob(?) FROM (WITH RECURSIVE n(i) AS "
                       "(SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT i FROM n)",
                       (PAGE - 100, BIG))
    connection.execute("COMMIT")
    assert path.stat().st_size > BIG * PAGE * 0.9
    connection.close()


def test_a_commit_leaves_its_pages_in_the_log_and_a_thread_copies_them(tmp_path, engine_at,
                                                                        slow_checkpoints):
    path = tmp_path / "db.sqlite3"
    engine = engine_at()
    with engine.begin() as connection:
        write_big(connection)
    committed = time.monotonic()
    size_after_commit = path.stat().st_size
    wal_after_commit = path.with_name(path.name + "-wal").stat().st_size
    assert time.monotonic() - committed < 1.5  # looked before the checkpoint was due
    assert size_after_commit < BIG * PAGE * 0.5
    assert wal_after_commit > BIG * PAGE * 0.9
    assert wait_for(lambda: path.stat().st_size > BIG * PAGE * 0.9)
    assert wait_for(lambda: checkpointer_of(engine).checkpoints == 1)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM blobs")).scalar() == BIG


def test_a_transaction_that_changed_no_row_asks_for_no_checkpoint(engine_at):
    engine = engine_at()
    checkpointer = checkpointer_of(engine)
    write_row(engine, 1)
    assert wait_for(lambda: checkpointer.checkpoints == 1)
    for _ in range(5):
        with engine.begin() as connection:
            connection.execute(text("SELECT * FROM t")).all()
    time.sleep(weblib_sqlite.CHECKPOINT_DELAY * 4)
    assert checkpointer.checkpoints == 1


def test_the_log_is_cut_back_when_it_starts_over(tmp_path, engine_at, monkeypatch):
    monkeypatch.setattr(weblib_sqlite, "JOURNAL_SIZE_LIMIT", 256 * 1024)
    wal = tmp_path / "db.sqlite3-wal"
    engine = engine_at()
    checkpointer = checkpointer_of(engine)
    with engine.begin() as connection:
        write_big(connection)
    assert wal.stat().st_size > BIG * PAGE * 0.9
    assert wait_for(lambda: checkpointer.checkpoints == 1)
    with engine.begin() as connection:  # the next writer starts the log over
        connection.execute(text("INSERT INTO blobs VALUES (x'00')"))
    assert wal.stat().st_size <= 256 * 1024


def test_an_idle_thread_ends_and_the_next_commit_starts_another(engine_at, monkeypatch):
    monkeypatch.setattr(weblib_sqlite, "CHECKPOINT_IDLE", 0.2)
    engine = engine_at()
    checkpointer = checkpointer_of(engine)
    write_row(engine, 1)
    assert wait_for(lambda: checkpointer.checkpoints == 1)
    assert wait_for(lambda: checkpointer.thread is None)
    write_row(engine, 2)
    assert wait_for(lambda: checkpointer.checkpoints == 2)


def test_a_checkpoint_due_after_the_file_is_gone_does_not_make_it_again(tmp_path, engine_at,
                                                                       slow_checkpoints):
    engine = engine_at("gone.sqlite3")
    checkpointer = checkpointer_of(engine)
    write_row(engine, 1)
    engine.dispose()
    for leftover in tmp_path.iterdir():
        leftover.unlink()
    time.sleep(weblib_sqlite.CHECKPOINT_DELAY + 1.0)
    assert list(tmp_path.iterdir()) == []
    assert checkpointer.checkpoints == 0
