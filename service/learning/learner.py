"""The suggestions' jobs: a job learns a project's model from a snapshot read of its tagged
queries and rejections (service.suggestions.learning), scores every query, and writes the
model and its suggestions in one short transaction with its end (service/engine/suggested.py);
another scores the queries an import added. A request only asks for a job and never waits.

- Asked after each write of links (`after_write`) once the project has learned: it starts
  when the links written since the last learning reach `min_share` of the links then, or
  `min_links` (at least one), and the last start is `min_seconds` old. Refresh (`refresh`)
  starts it whatever changed; so does the first look at a project's status (a project
  nobody asked suggestions of never spends a machine's time on them), and a look at one
  that has not learned yet once its last start is `min_seconds` old (its learning failed).
- An import's queries are scored against the model when the import ends (`after_import`).
- Each job is a row of `suggestion_jobs` on the lifecycle every background job shares
  (weblib/job_lifecycle.py): queued, claimed by the process that runs it, its heartbeat
  beaten every quarter of `stale_seconds` by a thread of that process, ended "learned",
  "scored" or "failed" with a sentence. One learning job per project at a time: whoever asks
  next marks a dead one (its process gone, or silent for `stale_seconds`) interrupted with a
  sentence, and a new one may start; a live one is left to end.
- Threads of the process that asked run the jobs; with a queue (service/learning/queue.py)
  the job's id goes on it, the queue owns the job until a worker's process claims it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from pyroaring import BitMap
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from weblib.job_lifecycle import Heartbeat
from weblib.processes import ThreadPool, process_owner

from .. import schema
from ..engine import suggested
from ..engine.suggested import FAILED, LEARN, LEARNED, SCORE, SCORED, jobs
from ..store.db import begin_write
from ..store.models import utcnow
from .queue import NOT_QUEUED, QUEUE_NAME, Queue

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..suggestions.learning import Settings

log = logging.getLogger(__name__)

STOPPED = {
    LEARN: "Tagdesk stopped learning this project's suggestions before it finished (the "
           "service restarted or its process was stopped). The suggestions learned before "
           "stay; learning starts again when it is next asked for.",
    SCORE: "Tagdesk stopped scoring the queries an import added before it finished (the "
           "service restarted or its process was stopped). The next learning scores them.",
}
BROKEN = {
    LEARN: "Something went wrong on our side while learning. It has been noted. The "
           "suggestions learned before stay.",
    SCORE: "Something went wrong on our side while scoring the queries an import added. It "
           "has been noted. The next learning scores them.",
}


@dataclass(frozen=True)
class Thresholds:
    min_links: int = 500
    min_share: float = 0.02
    min_seconds: float = 120.0
    stale_seconds: float = 3600.0


def thresholds_of(config: dict) -> Thresholds:
    """From the service's configuration (SUGGESTIONS_MIN_LINKS, …), defaults where unset."""
    default = Thresholds()
    return Thresholds(
        int(config.get("SUGGESTIONS_MIN_LINKS", default.min_links)),
        float(config.get("SUGGESTIONS_MIN_SHARE", default.min_share)),
        float(config.get("SUGGESTIONS_MIN_SECONDS", default.min_seconds)),
        float(config.get("SUGGESTIONS_STALE_SECONDS", default.stale_seconds)))


class Learner:
    def __init__(self, sessions: sessionmaker, thresholds: Thresholds = Thresholds(),
                 settings: Settings | None = None, queue: Queue | None = None) -> None:
        self.sessions = sessions
        self.thresholds = thresholds
        self._settings = settings
        self.queue = queue  # None: threads of this process run the jobs
        self._threads = ThreadPool(1, "tagdesk-suggestions")
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        """How it learns: as given, else learning's own (made on first use: see run_job)."""
        if self._settings is None:
            from ..suggestions.learning import Settings

            self._settings = Settings()
        return self._settings

    # --- asking ------------------------------------------------------------------------------

    def after_write(self, project_id: str) -> bool:
        """Start learning if the project learned before and its links changed enough since;
        whether it started."""
        return self._ask(project_id, lambda row: row is not None and row.learned_at is not None
                         and self._due(row))

    def refresh(self, project_id: str) -> bool:
        """Start learning now, unless a job is already learning the project."""
        return self._ask(project_id, lambda _row: True)

    def first_look(self, project_id: str) -> bool:
        """Start learning if the project never learned, unless a job is already learning it
        (or one has just learned it: the asker's read of the project may be older), or its
        last asking is younger than `min_seconds` (a first learning that failed is tried
        again then, not at each look)."""
        return self._ask(project_id, lambda row: row is None or (
            row.learned_at is None and self._waited(row)))

    def learning(self, row) -> bool:
        """Whether the project's row (suggested.state) names a learning job still at work."""
        seen = suggested.learning_job(row)
        return seen is not None and not jobs.is_dead(seen, self.thresholds.stale_seconds)

    def _due(self, row) -> bool:
        needed = max(1, min(self.thresholds.min_links,
                            math.ceil(self.thresholds.min_share * row.links_at_learning)))
        return row.links_changed >= needed and self._waited(row)

    def _waited(self, row) -> bool:
        """Whether the project's last asking is `min_seconds` old (or it was never asked)."""
        return row.asked_at is None or (utcnow() - row.asked_at).total_seconds() >= \
            self.thresholds.min_seconds

    def _owner(self) -> str:
        """A queued job's owner: the queue, or this process (its threads run it)."""
        return process_owner() if self.queue is None else self.queue.owner

    def _ask(self, project_id: str, wanted: Callable[[Any], bool]) -> bool:
        """Start learning if `wanted` holds of the project's row (None: never asked) and no
        job is at work; whether it started. Looked at first without a lock, so that most
        askings end there, then again holding the row."""
        session: Session = self.sessions()
        try:
            row = suggested.state(session.connection(), project_id)
            if not wanted(row) or (row is not None and self.learning(row)):
                return False
            session.rollback()
            begin_write(session)
            connection = session.connection()
            suggested.ensure(connection, project_id)
            suggested.hold(connection, project_id)
            if not wanted(suggested.state(connection, project_id)):
                session.rollback()
                return False
            if self._interrupt_dead(connection, project_id):  # a live one learns already
                session.commit()
                return False
            job_id = suggested.new_job(connection, project_id, LEARN, self._owner(), utcnow())
            session.commit()
        finally:
            session.close()
        return self._submit(job_id)

    def _interrupt_dead(self, connection, project_id: str) -> bool:
        """The project's dead jobs marked interrupted (in the caller's transaction); whether
        a learning job is still at work."""
        live = False
        for seen in suggested.watched(connection, project_id):
            if jobs.is_dead(seen, self.thresholds.stale_seconds):
                jobs.interrupt(connection, seen, STOPPED[seen.kind])
            elif seen.kind == LEARN:
                live = True
        return live

    def after_import(self, project_id: str) -> None:
        """Score the queries an import added, once it has committed, if the project has a
        model."""
        job_id = self._score_job(project_id, self._owner())
        if job_id is not None:
            self._submit(job_id)

    def _score_job(self, project_id: str, owner: str) -> str | None:
        session: Session = self.sessions()
        try:
            row = suggested.state(session.connection(), project_id)
            if row is None or row.learned_at is None:
                return None
            session.rollback()
            begin_write(session)
            job_id = suggested.new_job(session.connection(), project_id, SCORE, owner,
                                       utcnow())
            session.commit()
            return job_id
        finally:
            session.close()

    def _submit(self, job_id: str) -> bool:
        """The job to its runner; whether it got there."""
        if self.queue is None:
            future = self._threads.submit(job_id, lambda: self.run_job(job_id))
            future.add_done_callback(lambda _: self._threads.futures.pop(job_id, None))
            return True
        try:
            self.queue.put(job_id)
            return True
        except Exception:  # Redis unreachable: the job says so; the next asking starts another
            log.warning("suggestions job %s could not be queued", job_id, exc_info=True)
            session: Session = self.sessions()
            try:
                begin_write(session)
                seen = suggested.job(session.connection(), job_id)
                if seen is not None:
                    jobs.interrupt(session.connection(), seen, NOT_QUEUED)
                session.commit()
            finally:
                session.close()
            return False

    # --- the work ----------------------------------------------------------------------------

    def run_job(self, job_id: str) -> str | None:
        """Claim the queued job and run it to its end in this thread, its heartbeat beaten by
        another; its final state (None if it was not this process's to run, or was
        interrupted meanwhile)."""
        return self._run(job_id)[0]

    def _run(self, job_id: str) -> tuple[str | None, int]:
        owner = process_owner()
        session: Session = self.sessions()
        try:
            begin_write(session)
            if not jobs.claim(session.connection(), job_id, owner):
                session.rollback()
                return None, 0
            job = suggested.job(session.connection(), job_id)
            session.commit()
            work = self._learn if job.kind == LEARN else self._score
            try:
                with self._heartbeat(job_id, owner):
                    return work(session, job_id, owner, job.project_id)
            except Exception:
                session.rollback()
                log.exception("suggestions job %s (%s) failed", job_id, job.kind)
                begin_write(session)
                ended = jobs.finish(session.connection(), job_id, owner, FAILED,
                                    BROKEN[job.kind])
                session.commit()
                return (FAILED if ended else None), 0
        finally:
            session.close()

    def _heartbeat(self, job_id: str, owner: str) -> Heartbeat:
        def beat() -> bool:
            session: Session = self.sessions()
            try:
                begin_write(session)
                mine = jobs.beat(session.connection(), job_id, owner)
                session.commit()
                return mine
            finally:
                session.close()

        return Heartbeat(beat, self.thresholds.stale_seconds / 4,
                         f"tagdesk-suggestions-heartbeat-{job_id[:8]}")

    def _learn(self, session: Session, job_id: str, owner: str,
               project_id: str) -> tuple[str | None, int]:
        """Learn and score the project, its suggestions written a part at a time, then the
        model and the job's end in one short transaction, each written only while the job
        is still this process's."""
        # Imported here: scikit-learn and SciPy take ~2 s to import, paid only by a process
        # that learns or scores, not by every process of the service.
        from ..suggestions.learning import learn, sample

        with session.begin():  # one read: what is learned from is one moment's
            connection = session.connection()
            links = suggested.links(connection, project_id)
            rejected = suggested.rejections(connection, project_id)
            # A sample, so that memory is bounded whatever the project's size; the queries
            # with a rejection all teach.
            chosen = sample(links.by_tag, self.settings) | BitMap(
                rejected.query_ids.astype(np.uint32))
            learned_from = suggested.tagged_queries(connection, chosen, links)
        learned_at = utcnow()
        model = learn(learned_from, list(zip(rejected.query_ids.tolist(),
                                             rejected.tag_ids.tolist(), strict=True)),
                      self.settings)
        del learned_from
        model = dataclasses.replace(model, tag_query_counts=links.counts(model.tag_ids))
        scored = self._scored(session, job_id, owner, project_id, model, links, rejected, 0)
        if scored is None:
            return None, 0  # interrupted meanwhile: another job learns
        through, count = scored
        begin_write(session)
        connection = session.connection()
        # The model's row first, as an asking holds it before it looks at the jobs: no two
        # wait for each other.
        suggested.hold(connection, project_id)
        learned = "query" if model.learned_from == 1 else "queries"
        if not jobs.finish(connection, job_id, owner, LEARNED,
                           f"Learned from {model.learned_from:,} tagged {learned}."):
            session.rollback()
            return None, 0
        suggested.replace(connection, project_id, model, links, learned_at, through)
        session.commit()
        try:
            schema.tidy_rewritten(session.get_bind(), "query_suggestions")
        except SQLAlchemyError:  # learned all the same: autovacuum comes later
            log.warning("suggestions of project %s: VACUUM failed", project_id, exc_info=True)
        return LEARNED, count

    def _scored(self, session: Session, job_id: str, owner: str, project_id: str, model,
                links: suggested.Links, rejected, after: int) -> tuple[int, int] | None:
        """The project's queries with keys above `after` read, scored and their suggestions
        written a part at a time (each read and each write a short transaction of its own),
        none of a link in `links` or a rejection; the last key read and how many were read,
        or None when the job stopped being this process's meanwhile."""
        from ..suggestions.scoring import Suggestions, suggest

        default = suggested.default_of(model)
        count = 0
        while True:
            with session.begin():
                keys, texts = suggested.texts_after(session.connection(), project_id, after,
                                                    self.settings.scored_at_once)
            if not len(keys):
                return after, count
            # Without a default confidence none is kept: the part's old ones only go.
            found = Suggestions.none() if default is None else suggest(
                model, keys, texts, carried=links.of(keys), rejected=rejected,
                min_confidence=min(suggested.KEPT_FROM, default))
            begin_write(session)
            connection = session.connection()
            if not jobs.beat(connection, job_id, owner):
                session.rollback()
                return None
            suggested.write_part(connection, project_id, found, links.written, after,
                                 int(keys[-1]))
            session.commit()
            count += len(keys)
            after = int(keys[-1])

    def _score(self, session: Session, job_id: str, owner: str,
               project_id: str) -> tuple[str | None, int]:
        """The queries entered since the last scoring, scored against the model, their
        suggestions written a part at a time; then the job's end."""
        with session.begin():
            connection = session.connection()
            row = suggested.state(connection, project_id)
            model = suggested.load(connection, project_id)
            links = None if model is None else suggested.links(connection, project_id)
            rejected = None if model is None else suggested.rejections(connection, project_id)
        above = 0 if row is None else row.scored_through
        scored = (above, 0) if model is None else self._scored(
            session, job_id, owner, project_id, model, links, rejected, above)
        if scored is None:
            return None, 0
        through, count = scored
        begin_write(session)
        connection = session.connection()
        suggested.hold(connection, project_id)  # first, as in _learn
        if not jobs.finish(connection, job_id, owner, SCORED,
                           f"{count:,} new {'query' if count == 1 else 'queries'} scored."):
            session.rollback()
            return None, 0
        if count:
            suggested.add_scored(connection, project_id, through)
        session.commit()
        return SCORED, count

    def score_new(self, project_id: str) -> int:
        """The queries entered since the last scoring, scored against the model in this
        thread (a job of this process: the command line's import); how many."""
        job_id = self._score_job(project_id, process_owner())
        return 0 if job_id is None else self._run(job_id)[1]

    def wait(self, timeout: float | None = None) -> None:
        """Wait for every job of this process's threads (tests, shutdown)."""
        for future in list(self._threads.futures.values()):
            future.result(timeout)

    def shutdown(self, wait: bool = False) -> None:
        self._threads.shutdown(wait)
        if self.queue is not None:
            self.queue.close()


_made = threading.Lock()


def of_app(app) -> Learner:
    """The app's learner, made on first use from its configuration: with SUGGESTIONS_QUEUE
    (a Redis URL) its jobs go on that queue."""
    found = app.extensions.get("tagdesk_learner")
    if found is None:
        with _made:
            found = app.extensions.get("tagdesk_learner")
            if found is None:
                url = app.config.get("SUGGESTIONS_QUEUE")
                found = app.extensions["tagdesk_learner"] = Learner(
                    app.extensions["tagdesk_sessionmaker"], thresholds_of(app.config),
                    queue=Queue(url, app.config.get("SUGGESTIONS_QUEUE_NAME") or QUEUE_NAME)
                    if url else None)
    return found
