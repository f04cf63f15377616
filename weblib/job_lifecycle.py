"""The lifecycle of a background job, the same for the dashboard's jobs (jobs/store.py) and
the service's imports: a job is queued, claimed by exactly one worker (running), and ends in
a state of its own side's; while it runs, a thread of its process beats its heartbeat. A job
is dead when its owner process is gone (weblib.processes.owner_is_dead) or it has been silent
longer than its state allows; whoever looks at it next marks it interrupted with a sentence,
only as it was seen.

Each side keeps its own table, work and sentences: a `Lifecycle` acts on any SQLAlchemy table
with the columns in COLUMNS (a time column holds whatever its `Clock` makes: seconds since
the epoch, or naive UTC datetimes), through a Connection or an ORM Session, inside the
caller's transaction. Each move is one conditional UPDATE from the states it leaves, so it
happens once whoever tries it at the same moment:

    queued --claim--> running --finish--> an ended state
    queued, running --interrupt--> interrupted --requeue--> queued
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Table, select, update

from .processes import owner_is_dead

log = logging.getLogger(__name__)

QUEUED, RUNNING, INTERRUPTED = "queued", "running", "interrupted"
# A queued job has no heartbeat yet (it may wait for a free worker): only its owner's end, or
# a silence this long, says it will not start.
QUEUED_STALE_SECONDS = 3600.0
# What the lifecycle reads and writes of a job's row.
COLUMNS = ("id", "state", "owner", "heartbeat_at", "created_at", "finished_at", "message")
# How long stopping a heartbeat waits for a beat under way.
JOIN_SECONDS = 5.0


# A job run by an RQ worker (the dashboard's jobs/rq_runner.py, the service's suggestions'
# service/learning/queue.py). Such a job may run for hours: RQ's time limit (180 s by default)
# would kill it; whether it is still alive is the heartbeat's business. Its end is in its own
# database, so RQ keeps no result; a job RQ saw fail is kept a week in RQ's registries.
RQ_NO_TIME_LIMIT = -1
RQ_RESULT_TTL = 0
RQ_FAILURE_TTL = 7 * 24 * 3600


def queue_owner(queue_name: str) -> str:
    """A queued job's owner: not a process of this host (no pid), so only a very long silence
    counts it as lost (QUEUED_STALE_SECONDS)."""
    return f"queue:{queue_name}"


@dataclass(frozen=True)
class Clock:
    """The time a table's time columns hold: `now()`, and `seconds` of the difference of two."""

    now: Callable[[], Any]
    seconds: Callable[[Any], float]


EPOCH_SECONDS = Clock(time.time, float)


class Seen(Protocol):
    """A job as it was read: a row, or an ORM object, with the lifecycle's columns."""

    id: Any
    state: str
    owner: str | None
    heartbeat_at: Any
    created_at: Any


class Executes(Protocol):
    """A Connection, or an ORM Session, in the caller's transaction."""

    def execute(self, statement, *args, **kwargs) -> Any: ...


class Lifecycle:
    """The moves of the jobs kept in `table`. `ended`: the states a finished job may end in;
    `working`: the states besides queued and running in which a process works on a job (its
    heartbeat beats, and the rule for dead looks after it)."""

    def __init__(self, table: Table, clock: Clock, ended: Sequence[str],
                 working: Sequence[str] = ()):
        missing = [name for name in COLUMNS if name not in table.c]
        if missing:
            raise ValueError(f"{table.name} lacks the columns {', '.join(missing)}")
        self.table = table
        self.c = table.c
        self.clock = clock
        self.ended = tuple(ended)
        self.watched = (QUEUED, RUNNING, *working)

    def _move(self, db: Executes, job_id: Any, leaving: Sequence[str], *also: ColumnElement,
              **values) -> bool:
        result = db.execute(
            update(self.table).where(self.c.id == job_id, self.c.state.in_(leaving), *also)
            .values(**values).execution_options(synchronize_session=False))
        return result.rowcount == 1

    # --- the moves -------------------------------------------------------------------------

    def claim(self, db: Executes, job_id: Any, owner: str, *also: ColumnElement,
              **values) -> bool:
        """queued -> running, owned by `owner`, its heartbeat beaten now (and `values`
        written), if it is queued and `also` holds; whether this call took it."""
        return self._move(db, job_id, (QUEUED,), *also, state=RUNNING, owner=owner,
                          heartbeat_at=self.clock.now(), **values)

    def beat(self, db: Executes, job_id: Any, owner: str, *also: ColumnElement,
             state: str = RUNNING) -> bool:
        """The heartbeat of a job `owner` works on (in `state`); whether it still does."""
        return self._move(db, job_id, (state,), self.c.owner == owner, *also,
                          heartbeat_at=self.clock.now())

    def finish(self, db: Executes, job_id: Any, owner: str, state: str, message: str = "",
               **values) -> bool:
        """running -> `state` (one of `ended`), if `owner` still runs it; whether it did."""
        if state not in self.ended:
            raise ValueError(f"a job ends in one of {self.ended}, not {state!r}")
        now = self.clock.now()
        return self._move(db, job_id, (RUNNING,), self.c.owner == owner, state=state,
                          message=message, finished_at=now, heartbeat_at=now, **values)

    def interrupt(self, db: Executes, job: Seen, message: str, **values) -> bool:
        """queued or running -> interrupted with `message`, only as `job` was seen (the same
        owner, no heartbeat since); whether it was."""
        return self._move(db, job.id, (QUEUED, RUNNING), *self.still_as_seen(job),
                          state=INTERRUPTED, message=message, finished_at=self.clock.now(),
                          **values)

    def requeue(self, db: Executes, job_id: Any, owner: str, **values) -> bool:
        """interrupted -> queued, owned by `owner` (the process or queue that will run it)."""
        return self._move(db, job_id, (INTERRUPTED,), state=QUEUED, owner=owner, message=None,
                          finished_at=None, **values)

    # --- the one rule for dead -------------------------------------------------------------

    def allowed_silence(self, state: str, stale_seconds: float) -> float:
        """How long a job in `state` may go without a heartbeat."""
        return max(stale_seconds, QUEUED_STALE_SECONDS) if state == QUEUED else stale_seconds

    def is_dead(self, job: Seen, stale_seconds: float, now: Any = None) -> bool:
        """A job a process should be working on, whose owner process is gone or which has
        been silent longer than its state allows."""
        if job.state not in self.watched:
            return False
        now = self.clock.now() if now is None else now
        seen = job.created_at if job.heartbeat_at is None else job.heartbeat_at
        return owner_is_dead(job.owner) or \
            self.clock.seconds(now - seen) > self.allowed_silence(job.state, stale_seconds)

    def dead(self, jobs: Sequence[Seen], stale_seconds: float) -> list:
        now = self.clock.now()
        return [job for job in jobs if self.is_dead(job, stale_seconds, now)]

    def watching(self, db: Executes, *where: ColumnElement) -> list:
        """The jobs (as seen now) that a process should be working on, among `where`."""
        c = self.c
        return list(db.execute(select(c.id, c.state, c.owner, c.heartbeat_at, c.created_at)
                               .where(c.state.in_(self.watched), *where)).all())

    def still_as_seen(self, job: Seen) -> tuple[ColumnElement, ...]:
        """The job's owner and heartbeat unchanged since it was seen (a heartbeat since then
        says its process lives)."""
        c = self.c
        return (c.owner.is_(None) if job.owner is None else c.owner == job.owner,
                c.heartbeat_at.is_(None) if job.heartbeat_at is None
                else c.heartbeat_at == job.heartbeat_at)


class Heartbeat:
    """A thread that calls `beat()` every `interval` seconds until `stop()`, or until `beat`
    answers False (the job is no longer its process's). A beat that raises is logged and
    tried again at the next: the job's own writes keep it alive meanwhile."""

    def __init__(self, beat: Callable[[], bool], interval: float, name: str):
        self.beat = beat
        self.interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            # A beat stuck on an unreachable database does not hold the job up: a late one
            # writes nothing once the job has ended.
            self._thread.join(timeout=JOIN_SECONDS)

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                if not self.beat():
                    return
            except Exception:
                log.warning("%s: heartbeat not written", self._thread.name, exc_info=True)
