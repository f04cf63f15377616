"""Child processes of a test (or a benchmark): a process group stopped, and workers forked to
start the same work at the same moment."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
from collections.abc import Callable


def stop_group(process: subprocess.Popen, grace: float = 15) -> None:
    """Stop a process started with `start_new_session=True`, and its children with it (the
    group): SIGTERM, then SIGKILL if it has not ended after `grace` seconds; with `grace` 0,
    SIGKILL at once (nothing to finish, no seconds of the caller's time spent)."""
    if process.poll() is not None:
        return
    if grace > 0:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=15)


def _released(work: Callable[[], object], barrier, reports) -> None:
    barrier.wait(30)
    try:
        reports.put((True, work()))
    except Exception as error:  # reported to the caller, which fails on any
        reports.put((False, repr(error)))


def at_once(work: Callable[[], object], count: int, timeout: float = 90) -> list[object]:
    """What `work()` returned in each of `count` forked processes, released together by a
    barrier (as workers of one server starting at once). Fails when any of them raised or did
    not exit cleanly."""
    context = multiprocessing.get_context("fork")  # `work` may be a closure: nothing pickled
    barrier, reports = context.Barrier(count), context.Queue()
    workers = [context.Process(target=_released, args=(work, barrier, reports))
               for _ in range(count)]
    for worker in workers:
        worker.start()
    outcomes = [reports.get(timeout=timeout) for _ in workers]
    for worker in workers:
        worker.join(30)
    errors = [error for done, error in outcomes if not done]
    assert not errors, f"{len(errors)} of {count} workers failed: {errors}"
    exits = [worker.exitcode for worker in workers]
    assert exits == [0] * count, f"exit codes of the workers: {exits}"
    return [value for _, value in outcomes]

