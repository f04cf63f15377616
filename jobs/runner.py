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

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from .work import run_job

log = logging.getLogger(__name__)


class JobRunner(Protocol):
    def submit(self, job_id: str) -> None: ...

    def shutdown(self, wait: bool = False) -> None: ...


class ThreadRunner:
    def __init__(self, config: Callable[[], dict], workers: int = 2):
        self._config = config
        self._workers = workers
        self._executor: ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self.futures: dict[str, Future] = {}

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(self._workers,
                                                    thread_name_prefix="tagdesk-job")
                self._pid = os.getpid()
                self.futures = {}
            return self._executor

    def submit(self, job_id: str) -> None:
        config = self._config()
        future = self._pool().submit(self._run, job_id, config)
        self.futures[job_id] = future

    @staticmethod
    def _run(job_id: str, config: dict) -> str | None:
        try:
            return run_job(job_id, config)
        except Exception:  # run_job records its own failures; this is the last resort
            log.exception("job %s could not run", job_id)
            return None

    def wait(self, job_id: str, timeout: float | None = None) -> str | None:
        """Tests and benchmarks: wait for a submitted job to end."""
        future = self.futures.get(job_id)
        return None if future is None else future.result(timeout)

    def shutdown(self, wait: bool = False) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)


class InlineRunner:
    def __init__(self, config: Callable[[], dict]):
        self._config = config

    def submit(self, job_id: str) -> None:
        run_job(job_id, self._config())

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        return None

    def shutdown(self, wait: bool = False) -> None:
        return None
