"""Suggested tags (an extension, POST /api/suggestions/…): the status of a project's learned
suggestions, Refresh (learning in the background, service/learning/learner.py), accepting
suggestions a part at a time as rules apply (service/engine/accepting.py) and rejecting them
for good (service/engine/suggested.py). Listing and filtering by suggestion are queries/list's
and queries/facets' (`include: ["suggestions"]`, `suggestedTagIds`, `minConfidence`)."""

from __future__ import annotations

from typing import Annotated

from flask import current_app
from pydantic import Field, model_validator
from sqlalchemy.orm import Session

from weblib.job_lifecycle import INTERRUPTED

from ..bodies.errors import BadRequest, NotFound
from ..bodies.records import timestamp
from ..bodies.validation import (
    MAX_ITEMS,
    Confidence,
    Int,
    QueryFilterBody,
    Strict,
    Text,
    read_actor,
)
from ..engine import accepting, suggested
from ..engine.held import Held
from ..engine.listing import counter, project_tags
from ..engine.tag_holds import hold_tags
from ..learning.learner import of_app
from ..store.db import begin_write, retried
from . import query_filters

READY, LEARNING, TOO_FEW = "ready", "learning", "too few tags"
TAG_GONE = "'tagId': {} is not a tag of this project."
QueryIds = Annotated[list[Text], Field(min_length=1, max_length=MAX_ITEMS)]


class StatusBody(Strict):
    """The status takes no field."""


class RefreshBody(Strict):
    """Refresh takes no field."""


class AcceptBody(Strict):
    tagId: Int  # noqa: N815
    # Absent: None. The defaults are never validated, so a `null` is a 400.
    queryIds: QueryIds = None  # noqa: N815
    filters: QueryFilterBody = None
    minConfidence: Confidence = None  # noqa: N815
    cursor: Int = Field(0, ge=0)  # where the previous part stopped (a query key)

    @model_validator(mode="after")
    def _one_choice(self) -> AcceptBody:
        if (self.queryIds is None) == (self.filters is None):
            raise ValueError("give 'queryIds' or 'filters', one of the two")
        return self


class RejectBody(Strict):
    tagId: Int  # noqa: N815
    queryIds: QueryIds  # noqa: N815


def _keys(session: Session, project_id: str, ids: list[str]) -> list[int]:
    """The keys of the queries named; not found (404) where the project has none of one, as
    set-tags answers an item that matches no query (another organization's id included)."""
    found = accepting.keys_of(session, project_id, ids)
    unknown = [query_id for query_id in dict.fromkeys(ids) if query_id not in found]
    if unknown:
        session.rollback()
        named = ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
        raise NotFound(f"No query {named} in this project.")
    return sorted(set(found.values()))


def _confidence(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def status(session: Session, project_id: str, _body: StatusBody, store: Held) -> dict:
    learner = of_app(current_app)
    row = suggested.state(session.connection(), project_id)
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    counts = {tag_id: len(counting.tag(tag_id)) for tag_id in tags}  # the held bitmaps
    minimum = learner.settings.min_queries
    best = max(counts.values(), default=0)
    answer = {"learnedAt": timestamp(row.learned_at) if row and row.learned_at else None,
              "learnedFrom": row.learned_from if row and row.learned_at else None,
              "heldBackRight": _confidence(row.held_back_right) if row else None,
              "defaultConfidence": _confidence(row.default_confidence) if row else None}
    if best < minimum:
        state = TOO_FEW
        answer["needed"] = minimum - best
    elif learner.learning(row) or row is None or row.learned_at is None:
        state = LEARNING
        session.rollback()
        learner.first_look(project_id)  # never learned: it starts now, unless at work
    else:
        state = READY
    last = suggested.last_learning(session.connection(), project_id)
    if last is not None and last.state in (suggested.FAILED, INTERRUPTED):
        answer["problem"] = last.message  # and none learns now: a new one would be newest
    answer["tags"] = [{"id": tag_id, "suggested": len(counting.suggested(tag_id, None))}
                      for tag_id in sorted(tags) if counts.get(tag_id, 0) >= minimum]
    return {"state": state, **answer}


def refresh(session: Session, project_id: str, _body: RefreshBody) -> dict:
    session.rollback()
    started = of_app(current_app).refresh(project_id)
    return {"state": LEARNING, "started": started}


def suggestions_of(session: Session, project_id: str, keys: list[int],
                   min_confidence: float | None) -> dict[int, list[dict]]:
    """queries/list's `include: ["suggestions"]`: each query's, best first."""
    found = suggested.of_queries(session.connection(), project_id, keys, min_confidence)
    return {pk: [{"tagId": tag_id, "confidence": _confidence(value)} for tag_id, value in pairs]
            for pk, pairs in found.items()}


def accept(session: Session, project_id: str, body: AcceptBody, store: Held) -> dict:
    """The next part of the chosen suggestions becomes links (`queries`: those that gained
    the tag, what an Undo takes back with tags-edit)."""
    if body.filters is not None:
        query_filters.check(session, project_id, body.filters)  # queries/list's 400s, first
    actor = read_actor()

    def write() -> dict:
        begin_write(session)
        keys = None if body.queryIds is None else _keys(session, project_id, body.queryIds)
        done = accepting.accept_part(
            session, project_id, body.tagId, keys,
            None if body.filters is None else query_filters.filter_of(body.filters),
            None if body.minConfidence is None else float(body.minConfidence),
            body.cursor, actor, store)
        if done is None:
            session.rollback()
            raise BadRequest([TAG_GONE.format(body.tagId)])
        session.commit()
        return done

    done = retried(session, write)
    of_app(current_app).after_write(project_id)
    return done


def reject(session: Session, project_id: str, body: RejectBody) -> dict:
    actor = read_actor()

    def write() -> dict:
        begin_write(session)
        if not hold_tags(session, project_id, [body.tagId]):
            session.rollback()
            raise BadRequest([TAG_GONE.format(body.tagId)])
        keys = _keys(session, project_id, body.queryIds)
        rejected = suggested.reject(session.connection(), project_id, body.tagId, keys, actor)
        session.commit()
        return {"rejected": rejected}

    return retried(session, write)
