"""Several dashboard workers starting at once on a fresh instance (gunicorn --workers N)
create the jobs tables together: one creates them, the others wait, none fails to boot; and a
connection that meets a new file being written waits to switch it to WAL."""

from __future__ import annotations

import sqlite3
import threading
import time

from jobs.store import Store
from tests.support.processes import at_once
from weblib.sqlite import sqlite_engine

WORKERS = 6


def upgrade(url: str) -> bool:
    return Store(url).upgrade()


def test_workers_create_the_jobs_tables_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'dashboard.sqlite3'}"
    at_once(upgrade, (url,), WORKERS)  # fails when any worker does
    assert Store(url).count_for_project("none") == 0


def test_a_connection_waits_to_switch_a_new_file_to_wal_while_another_writes(tmp_path):
    """What made one of those workers fail, now and then: on a new file (not yet in WAL), a
    connection switching it to WAL while another holds the write lock got "database is
    locked" at once — SQLite does not wait there. The engine tries again until the writer is
    done."""
    path = tmp_path / "new.sqlite3"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE first (x)")
    done = threading.Timer(0.4, writer.execute, ["COMMIT"])
    done.start()
    started = time.monotonic()
    engine = sqlite_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("SELECT count(*) FROM first").scalar() == 0
        assert time.monotonic() - started >= 0.3  # it waited for the writer
    finally:
        done.join()
        engine.dispose()
        writer.close()
