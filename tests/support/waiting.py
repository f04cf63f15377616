"""Waiting for a condition instead of sleeping for a guessed time.

A fixed sleep either wastes time or, on a busy machine, is too short. These helpers look at the
real state again and again, at short intervals, and give up only after a generous bound; a
test says what it waits for, and fails with that when it never comes. A background job has a
wait of its own: for its record to reach a state.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], timeout: float = 10.0,
               interval: float = 0.005) -> bool:
    """Poll `condition()` until it is true or `timeout` seconds have passed; whether it was
    true in the end (one last look after the deadline)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return bool(condition())


def wait_for_job(store, job_id: str, states: tuple[str, ...], timeout: float = 30.0):
    """The record of job `job_id` in the jobs `store` once its state is one of `states`;
    fails with the record it last saw after `timeout` seconds."""
    seen = []

    def reached() -> bool:
        seen[:] = [store.get(job_id)]
        return seen[0] is not None and seen[0].state in states

    assert wait_until(reached, timeout, interval=0.02), \
        f"job {job_id} did not reach {states}: {seen[0]}"
    return seen[0]
