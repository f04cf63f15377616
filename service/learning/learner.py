"""The suggestions' job: a thread of this process learns a project's model from a snapshot
read of its tagged queries and rejections (service.suggestions.learning), scores every query,
and writes the model and its suggestions in one short transaction
(service/engine/suggested.py); a request only asks for it and never waits.

- Asked after each write of links (`after_write`) once the project has learned: it starts
  when the links written since the last learning reach `min_share` of the links then, or
  `min_links` (at least one), and the last start is `min_seconds` old. Refresh (`refresh`)
  starts it whatever changed; so does the first look at a project's status (a project
  nobody asked suggestions of never spends a machine's time on them).
- One job per project at a time: `suggestion_models.learning_owner` names the process that
  claimed it; a claim whose process is gone, or older than `stale_seconds`, is taken over.
- An import's queries are scored against the model when the import ends (`after_import`).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session, sessionmaker

from weblib.processes import ThreadPool, owner_is_dead, process_owner

from ..engine import suggested
from ..store.db import begin_write
from ..store.models import utcnow

if TYPE_CHECKING:
    from ..suggestions.learning import Settings

log = logging.getLogger(__name__)


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
                 settings: Settings | None = None) -> None:
        self.sessions = sessions
        self.thresholds = thresholds
        self._settings = settings
        self._threads = ThreadPool(1, "tagdesk-suggestions")
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        """How it learns: as given, else learning's own (made on first use: see run)."""
        if self._settings is None:
            from ..suggestions.learning import Settings

            self._settings = Settings()
        return self._settings

    # --- asking ------------------------------------------------------------------------------

    def after_write(self, project_id: str) -> bool:
        """Start learning if the project learned before and its links changed enough since;
        whether it started."""
        return self._ask(project_id, forced=False)

    def refresh(self, project_id: str) -> bool:
        """Start learning now, unless a job is already learning the project."""
        return self._ask(project_id, forced=True)

    def learning(self, row) -> bool:
        """Whether the project's row (suggested.state) names a job still at work."""
        if row is None or row.learning_owner is None:
            return False
        stale = row.learning_since is None or utcnow() - row.learning_since > timedelta(
            seconds=self.thresholds.stale_seconds)
        return not (stale or owner_is_dead(row.learning_owner))

    def _due(self, row) -> bool:
        needed = max(1, min(self.thresholds.min_links,
                            math.ceil(self.thresholds.min_share * row.links_at_learning)))
        waited = row.asked_at is None or utcnow() - row.asked_at >= timedelta(
            seconds=self.thresholds.min_seconds)
        return row.links_changed >= needed and waited

    def _ask(self, project_id: str, forced: bool) -> bool:
        session: Session = self.sessions()
        try:
            row = suggested.state(session.connection(), project_id)
            if not forced and (row is None or row.learned_at is None):
                return False  # never learned: its status or Refresh asks first
            if row is not None and (self.learning(row) or not (forced or self._due(row))):
                return False
            session.rollback()
            begin_write(session)
            connection = session.connection()
            suggested.ensure(connection, project_id)
            row = suggested.state(connection, project_id)
            if row is None or self.learning(row) or not (forced or self._due(row)):
                session.rollback()
                return False
            suggested.claim(connection, project_id, process_owner(), utcnow())
            session.commit()
        finally:
            session.close()
        future = self._threads.submit(project_id, lambda: self.run(project_id))
        future.add_done_callback(lambda _: self._threads.futures.pop(project_id, None))
        return True

    def after_import(self, project_id: str) -> None:
        """Score the queries an import added, once it has committed."""
        key = f"score:{project_id}"
        future = self._threads.submit(key, lambda: self.score_new(project_id))
        future.add_done_callback(lambda _: self._threads.futures.pop(key, None))

    # --- the work ----------------------------------------------------------------------------

    def run(self, project_id: str) -> None:
        """Learn and score the project (claimed by _ask), then let the claim go."""
        # Imported here: scikit-learn and SciPy take ~2 s to import, paid only by a process
        # that learns or scores, not by every process of the service.
        from ..suggestions.learning import learn
        from ..suggestions.scoring import suggest

        session: Session = self.sessions()
        try:
            with session.begin():  # one read: what is learned from is one moment's
                read = suggested.snapshot(session.connection(), project_id)
            learned_at = utcnow()
            model = learn(read.learned_from, list(zip(read.rejected.query_ids.tolist(),
                                                      read.rejected.tag_ids.tolist(),
                                                      strict=True)), self.settings)
            default = suggested.default_of(model)
            scored = suggest(model, read.keys, read.texts, carried=read.links,
                             rejected=read.rejected,
                             min_confidence=min(suggested.KEPT_FROM, default)
                             if default is not None else math.inf)
            begin_write(session)
            suggested.replace(session.connection(), project_id, model, scored, read, learned_at)
            session.commit()
        finally:
            self._let_go(session, project_id)
            session.close()

    def _let_go(self, session: Session, project_id: str) -> None:
        session.rollback()
        begin_write(session)
        suggested.let_go(session.connection(), project_id, process_owner())
        session.commit()

    def score_new(self, project_id: str) -> int:
        """The queries entered since the last scoring, scored against the model; how many."""
        from ..suggestions.scoring import suggest

        session: Session = self.sessions()
        try:
            with session.begin():
                row = suggested.state(session.connection(), project_id)
                model = suggested.load(session.connection(), project_id)
                if model is None:
                    return 0
                read = suggested.unscored(session.connection(), project_id,
                                          row.scored_through)
            if not len(read.keys):
                return 0
            default = suggested.default_of(model)
            scored = suggest(model, read.keys, read.texts, carried=read.links,
                             min_confidence=min(suggested.KEPT_FROM, default)
                             if default is not None else math.inf)
            begin_write(session)
            suggested.add_scored(session.connection(), project_id, model, scored, read,
                                 int(read.keys.max()))
            session.commit()
            return len(read.keys)
        finally:
            session.close()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for every job of this process (tests, shutdown)."""
        for future in list(self._threads.futures.values()):
            future.result(timeout)

    def shutdown(self, wait: bool = False) -> None:
        self._threads.shutdown(wait)


_made = threading.Lock()


def of_app(app) -> Learner:
    """The app's learner, made on first use from its configuration."""
    found = app.extensions.get("tagdesk_learner")
    if found is None:
        with _made:
            found = app.extensions.get("tagdesk_learner")
            if found is None:
                found = app.extensions["tagdesk_learner"] = Learner(
                    app.extensions["tagdesk_sessionmaker"], thresholds_of(app.config))
    return found
