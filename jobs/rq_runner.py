"""`RQRunner`: background jobs on RQ workers over Redis, for the scale-out mode (several
dashboard processes or hosts sharing Redis and one jobs database).

`submit` puts the job's id — and nothing else — on a Redis queue; a worker started with
`flask --app app worker` (jobs/rq_worker.py) takes it and calls `run_job`. The worker finds the
job in the jobs database and the org key in the server-side session store with its own
configuration (the same TAGDESK_* settings as the dashboard), so no key, password or database
address ever sits in Redis as a job's arguments.

While a job waits in the queue its owner is the queue, not the web process that queued it: a
web worker that exits (a deploy, gunicorn's max-requests) does not take queued jobs with it.
Once a worker claims the job, the owner is that worker's process, and its end — or its silent
heartbeat, from another host — shows the job as interrupted, with Resume (jobs/store.py).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading

from weblib.job_lifecycle import RQ_FAILURE_TTL, RQ_NO_TIME_LIMIT, RQ_RESULT_TTL, queue_owner

from .store import Store

log = logging.getLogger(__name__)

JOBS_QUEUE = "tagdesk-jobs"
PERFORM = "jobs.rq_worker.perform"
NOT_QUEUED = ("It could not be queued: the job queue (Redis) did not answer. Nothing was "
              "changed; resume it to try again.")


class RQRunner:
    def __init__(self, redis_url: str, queue_name: str, jobs_database_url: str):
        self.redis_url = redis_url
        self.queue_name = queue_name
        self.jobs_database_url = jobs_database_url
        self._queue = None
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def queue(self):
        """The queue, with a connection of this process's own (a forked web worker must not
        share its parent's socket)."""
        with self._lock:
            if self._queue is None or self._pid != os.getpid():
                import redis
                from rq import Queue

                connection = redis.Redis.from_url(self.redis_url)
                self._queue = Queue(self.queue_name, connection=connection)
                self._pid = os.getpid()
            return self._queue

    def submit(self, job_id: str) -> None:
        store = Store.for_url(self.jobs_database_url)
        # Before it is on the queue, so no worker can have claimed it yet.
        store.update(job_id, owner=queue_owner(self.queue_name))
        try:
            self.queue().enqueue(
                PERFORM, job_id,
                # Unique per submission: a resumed job is queued again under a new id.
                job_id=f"{job_id}-{secrets.token_hex(4)}",
                description=f"Tagdesk job {job_id}",
                job_timeout=RQ_NO_TIME_LIMIT, result_ttl=RQ_RESULT_TTL,
                failure_ttl=RQ_FAILURE_TTL)
        except Exception:  # Redis unreachable: the job says so and can be resumed later
            log.warning("job %s could not be queued", job_id, exc_info=True)
            store.finish(job_id, "interrupted", NOT_QUEUED)

    def shutdown(self, wait: bool = False) -> None:
        with self._lock:
            queue, self._queue = self._queue, None
        if queue is not None:
            queue.connection.close()
