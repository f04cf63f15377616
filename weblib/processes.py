"""Background work of this process, as the dashboard's jobs (jobs/) and the settings area's
imports (service/imports/import_jobs.py) both run it: each job records the process that owns it
(host, pid and a random token), whoever looks at a job can tell that its owner on this host
is gone, and a small pool of this process's threads runs the jobs by id.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)

# This process: host, pid and a random token (a restarted container may reuse the pid).
PROCESS_TOKEN = secrets.token_hex(6)


def process_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{PROCESS_TOKEN}"


def owner_is_dead(owner: str | None) -> bool:
    """True when `owner` was a process on this host that no longer runs."""
    if not owner:
        return True
    host, _, rest = owner.partition(":")
    pid_text, _, token = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another host: only its heartbeat can tell
    pid = int(pid_text)
    if pid == os.getpid():
        return token != PROCESS_TOKEN
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class ThreadPool:
    """A few threads of this process that run jobs by id, started on first use and again in a
    forked worker (threads do not survive a fork); `futures` holds the jobs submitted here."""

    def __init__(self, workers: int, thread_name_prefix: str):
        self.workers = workers
        self.thread_name_prefix = thread_name_prefix
        self._executor: ThreadPoolExecutor | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self.futures: dict[str, Future] = {}

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None or self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(
                    self.workers, thread_name_prefix=self.thread_name_prefix)
                self._pid = os.getpid()
                self.futures = {}
            return self._executor

    def submit(self, job_id: str, run: Callable[[], Any]) -> Future:
        """Run `run()` in a thread of the pool: its result, or None when it raised (the job
        records its own failures; the log is the last resort)."""
        future = self._pool().submit(self._run, job_id, run)
        self.futures[job_id] = future
        return future

    @staticmethod
    def _run(job_id: str, run: Callable[[], Any]) -> Any:
        try:
            return run()
        except Exception:
            log.exception("job %s could not run", job_id)
            return None

    def shutdown(self, wait: bool = False) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)
