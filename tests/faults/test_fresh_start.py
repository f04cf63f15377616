"""Several dashboard workers starting at once on a fresh instance (gunicorn --workers N)
create the jobs tables together: one creates them, the others wait, none fails to boot."""

from __future__ import annotations

from jobs.store import Store
from tests.support.processes import at_once

WORKERS = 6


def test_workers_create_the_jobs_tables_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'dashboard.sqlite3'}"
    at_once(lambda: Store(url).upgrade(), WORKERS)  # fails when any worker does
    assert Store(url).count_for_project("none") == 0
