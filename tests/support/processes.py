"""Child processes of a test (or a benchmark): a process group stopped, and workers spawned to
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


def _released(work: Callable[..., object], args: tuple, barrier, reports) -> None:
    try:
        barrier.wait(60)
        reports.put((True, work(*args)))
    except Exception as error:  # reported to the caller, which fails on any
        reports.put((False, repr(error)))


def at_once(work: Callable[..., object], args: tuple, count: int,
            timeout: float = 90) -> list[object]:
    """What `work(*args)` returned in each of `count` new processes, released together by a
    barrier (as workers of one server starting at once). Fails when any of them raised or did
    not exit cleanly. Spawned, not forked: a fork of a test worker copied its other threads'
    locks and its browser's connection, and once a child hung and the worker's browser with
    it; so `work` is a module-level function and `args` can be pickled."""
    context = multiprocessing.get_context("spawn")
    barrier, reports = context.Barrier(count), context.Queue()
    workers = [context.Process(target=_released, args=(work, args, barrier, reports))
               for _ in range(count)]
    for worker in workers:
        worker.start()
    try:
        outcomes = [reports.get(timeout=timeout) for _ in workers]
    finally:
        for worker in workers:
            worker.join(30)
            if worker.is_alive():  # never left behind for the test run's exit to wait on
                worker.kill()
                worker.join(5)
    errors = [error for done, error in outcomes if not done]
    assert not errors, f"{len(errors)} of {count} workers failed: {errors}"
    exits = [worker.exitcode for worker in workers]
    assert exits == [0] * count, f"exit codes of the workers: {exits}"
    return [value for _, value in outcomes]
