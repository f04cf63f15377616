"""A write outside a request (the command line) waits for a writer that holds SQLite's write
lock, as a request's does, instead of failing at its first write with "database is locked"
because it read first."""

import sqlite3
import threading
import time

from service import create_app
from service.org import admin
from service.store.db import session_scope, write_scope
from service.store.models import Organization
from tests.service.commands import command_line


def held_for_a_while(path, org_id: str, seconds: float) -> threading.Timer:
    """Another process's writer (as a dashboard worker mid-edit) holding the write lock."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("UPDATE organizations SET name = name || ' Ltd' WHERE id = ?", (org_id,))

    def release():
        other.execute("COMMIT")
        other.close()

    releaser = threading.Timer(seconds, release)
    releaser.start()
    return releaser


def test_a_read_then_write_waits_for_the_writer(tmp_path, sqlite_template):
    path = tmp_path / "service.sqlite3"
    path.write_bytes(sqlite_template.read_bytes())
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{path}"})
    try:
        with write_scope(app) as session:
            org_id = admin.create_org(session, "Acme")

        releaser = held_for_a_while(path, org_id, 0.5)
        started = time.monotonic()
        with write_scope(app) as session:  # set_limits reads the organization, then writes
            admin.set_limits(session, org_id, 7, 70, 700)
        assert time.monotonic() - started >= 0.4
        releaser.join()

        releaser = held_for_a_while(path, org_id, 0.5)
        result = command_line(app)("set-limits", org_id, "8", "80", "800")
        assert "Limits set: 8/s" in result.output
        releaser.join()

        with session_scope(app) as session:
            org = session.get(Organization, org_id)
            assert (org.name, org.limit_per_second) == ("Acme Ltd Ltd", 8)
    finally:
        app.extensions["tagdesk_engine"].dispose()
