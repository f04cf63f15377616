"""Several dashboard workers starting at once on a fresh instance (gunicorn --workers N)
create the jobs tables together: one creates them, the others wait, none fails to boot."""

from __future__ import annotations

import multiprocessing

from jobs.store import Store

WORKERS = 6


def _start(url: str, barrier, failures) -> None:
    barrier.wait(10)
    try:
        Store(url).upgrade()
    except Exception as error:  # reported to the test, which fails on any
        failures.put(repr(error))


def test_workers_create_the_jobs_tables_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'dashboard.sqlite3'}"
    context = multiprocessing.get_context("fork")
    barrier, failures = context.Barrier(WORKERS), context.Queue()
    workers = [context.Process(target=_start, args=(url, barrier, failures))
               for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    errors = [failures.get() for _ in range(failures.qsize())]
    assert errors == []
    assert all(worker.exitcode == 0 for worker in workers)
    assert Store(url).count_for_project("none") == 0
