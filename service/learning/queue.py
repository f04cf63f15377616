"""The suggestions' jobs on RQ workers over Redis (SUGGESTIONS_QUEUE): `Queue.put` puts a
job's id — and nothing else — on the queue; `flask --app service suggestions-worker` (`work`)
takes it, finds the job in the service's database with its own configuration (the same
TAGDESK_* settings as the service) and runs it (Learner.run_job).

While a job waits in the queue its owner is the queue, not the process that asked for it: a
web worker that exits does not take queued jobs with it. Once a worker claims it, the owner
is the process RQ forked to run it, whose end — or its silent heartbeat, from another host —
lets the next asking mark it interrupted and start another.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from weblib.job_lifecycle import RQ_FAILURE_TTL, RQ_NO_TIME_LIMIT, RQ_RESULT_TTL, queue_owner

QUEUE_NAME = "tagdesk-suggestions"
PERFORM = "service.learning.queue.perform"
NOT_QUEUED = ("It could not be queued: the job queue (Redis) did not answer. Nothing was "
              "changed; learning starts again when it is next asked for.")



class Queue:
    def __init__(self, redis_url: str, name: str = QUEUE_NAME):
        self.redis_url = redis_url
        self.name = name
        self.owner = queue_owner(name)
        self._queue = None
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _rq(self):
        """RQ's queue, with a connection of this process's own (a forked web worker must not
        share its parent's socket)."""
        with self._lock:
            if self._queue is None or self._pid != os.getpid():
                import redis
                from rq import Queue as RQQueue

                self._queue = RQQueue(self.name, connection=redis.Redis.from_url(self.redis_url))
                self._pid = os.getpid()
            return self._queue

    def put(self, job_id: str) -> None:
        self._rq().enqueue(PERFORM, job_id, job_id=job_id,
                           description=f"Tagdesk suggestions job {job_id}",
                           job_timeout=RQ_NO_TIME_LIMIT, result_ttl=RQ_RESULT_TTL,
                           failure_ttl=RQ_FAILURE_TTL)

    def close(self) -> None:
        with self._lock:
            queue, self._queue = self._queue, None
        if queue is not None:
            queue.connection.close()


# Set by `work` before its loop starts; every process RQ forks for a job inherits them.
_run_job: Callable[[str], Any] | None = None
_engine = None


def perform(job_id: str) -> str | None:
    """What the queue's messages call (by this import path)."""
    if _run_job is None:
        raise RuntimeError("Tagdesk's suggestions jobs run on workers started with "
                           "`flask --app service suggestions-worker`.")
    if _engine is not None:
        _engine.dispose(close=False)  # a forked process: connections of its own
    return _run_job(job_id)


def work(run_job: Callable[[str], Any], engine, redis_url: str, queue_name: str, *,
         burst: bool = False, name: str | None = None) -> None:
    """RQ's worker on the queue until it is stopped (or empty, with `burst`)."""
    global _run_job, _engine
    import redis
    from rq import Queue as RQQueue
    from rq import Worker

    # Learning's libraries imported once here: each forked process finds them loaded.
    from ..suggestions import learning, scoring  # noqa: F401

    _run_job, _engine = run_job, engine
    connection = redis.Redis.from_url(redis_url)
    Worker([RQQueue(queue_name, connection=connection)], connection=connection,
           name=name).work(burst=burst)
