"""A transaction outside a request (the command line, the settings' scripts, the demo) waits
for a writer that holds SQLite's write lock, as a request's does, instead of failing at its
first write with "database is locked" because it read first."""

import sqlite3
import threading
import time

from service import create_app
from service.org import admin
from service.store.db import session_scope
from service.store.models import Organization


def test_a_read_then_write_outside_a_request_waits_for_the_writer(tmp_path, sqlite_template):
    path = tmp_path / "service.sqlite3"
    path.write_bytes(sqlite_template.read_bytes())
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{path}"})
    try:
        with session_scope(app) as session:
            org_id = admin.create_org(session, "Acme")

        # Another process's writer (as a dashboard worker mid-edit) holds the write lock.
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE organizations SET name = 'Acme Ltd' WHERE id = ?", (org_id,))
        releaser = threading.Timer(0.5, other.execute, ("COMMIT",))
        releaser.start()
        started = time.monotonic()
        with session_scope(app) as session:  # set_limits reads the organization, then writes
            admin.set_limits(session, org_id, 7, 70, 700)
        waited = time.monotonic() - started
        releaser.join()
        other.close()

        assert waited >= 0.4
        with session_scope(app) as session:
            org = session.get(Organization, org_id)
            assert (org.name, org.limit_per_second) == ("Acme Ltd", 7)
    finally:
        app.extensions["tagdesk_engine"].dispose()
