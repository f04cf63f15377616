"""Who runs background jobs: behind `JobRunner.submit(job_id)`, so the dashboard does not know
whether threads of its own process or RQ workers over Redis (`RQRunner`, jobs/rq_runner.py, the
scale-out mode) run them.

`ThreadRunner` runs `run_job` in a small pool of threads of the web process that submitted the
job (started on first use, and again in a forked worker). Jobs in flight when the process
stops are found by the next start (or by any worker, from their silent heartbeat) and shown as
interrupted, with Resume. `InlineRunner` runs the job in the caller's thread: for tests and
benchmarks that want the job done when `submit` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from weblib.processes import ThreadPool

from .work import run_job


class JobRunner(Protocol):
    def submit(self, job_id: str) -> None: ...

    def shutdown(self, wait: bool = False) -> None: ...


class ThreadRunner:
    def __init__(self, config: Callable[[], dict], workers: int = 2):
        self._config = config
        self._threads = ThreadPool(workers, "tagdesk-job")

    def submit(self, job_id: str) -> None:
        config = self._config()
        self._threads.submit(job_id, lambda: run_job(job_id, config))

    def wait(self, job_id: str, timeout: float | None = None) -> str | None:
        """Tests and benchmarks: wait for a submitted job to end."""
        future = self._threads.futures.get(job_id)
        return None if future is None else future.result(timeout)

    def shutdown(self, wait: bool = False) -> None:
        self._threads.shutdown(wait)


class InlineRunner:
    def __init__(self, config: Callable[[], dict]):
        self._config = config

    def submit(self, job_id: str) -> None:
        run_job(job_id, self._config())

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        return None

    def shutdown(self, wait: bool = False) -> None:
        return None
