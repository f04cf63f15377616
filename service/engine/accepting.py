"""Suggestions accepted (an extension: suggestions/accept, service/api/suggestions.py), a part
at a time as rules apply (service/engine/rule_links.py): each call is one transaction through
a Writer, and its `cursor` (the last query key it reached) is where the next carries on. The
links record who accepted them and that they were suggested; the Writer takes the
suggestions away with them (service/engine/suggestion_links.py)."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import Boolean, Integer, String, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..store.models import is_uuid, utcnow
from . import kinds
from .counting import Counter, FilterOf
from .keys import keys_condition
from .listing import counter, project_tags
from .suggested import KEPT_FROM
from .tables import Query, query_suggestions, query_tags
from .tag_holds import hold_tags
from .tagging import touch
from .writer import Writer

# Queries a call tags at most: a part is well under a second on either database.
PART = 20_000


def keys_of(session: Session, project_id: str, ids: list[str]) -> dict[str, int]:
    """The keys of the project's queries among `ids` (public ids), by id."""
    wanted = sorted({query_id for query_id in ids if is_uuid(query_id)})
    if not wanted:
        return {}
    rows = session.execute(select(Query.id, Query.pk).where(
        Query.project_id == project_id, Query.id.in_(wanted)))
    return {str(query_id): pk for query_id, pk in rows}


def chosen(counting: Counter, tag_id: int, keys: list[int] | None, condition: FilterOf | None,
           tags: dict[int, str], min_confidence: float | None) -> BitMap:
    """The queries named (by key, suggested the tag at any kept confidence, or at
    min_confidence) or matched by the condition (at the default confidence, or at
    min_confidence) that lack the tag."""
    if keys is not None:
        found = counting.suggested_among(
            tag_id, keys, KEPT_FROM if min_confidence is None else min_confidence)
    else:
        found = counting.matches(condition(tags)) & counting.suggested(tag_id, min_confidence)
    return found - counting.tag(tag_id)


def accept_part(session: Session, project_id: str, tag_id: int, keys: list[int] | None,
                condition: FilterOf | None, min_confidence: float | None, after: int,
                actor: str | None, store) -> dict | None:
    """Tag the next part (keys above `after`) of the chosen queries; None when the tag is
    not the project's. The caller has begun the write and commits."""
    if not hold_tags(session, project_id, [tag_id]):
        return None
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    candidates = chosen(counting, tag_id, keys, condition, tags, min_confidence)
    start = candidates.rank(after) if after else 0
    part = candidates[start:start + PART]
    writer = Writer(session.connection(), project_id).begin()
    now = utcnow()
    made = BitMap()
    if part:
        dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
        # Each link keeps the confidence it was suggested at (read before the Writer takes
        # the suggestion away): taken away again, it gives the suggestion back.
        confidence = select(query_suggestions.c.confidence).where(
            query_suggestions.c.query_pk == Query.pk,
            query_suggestions.c.tag_id == tag_id).scalar_subquery()
        links = dialect.insert(query_tags).from_select(
            ["query_pk", "tag_id", "updated_at", "added_at", "added_by", "suggested",
             "suggested_confidence"],
            select(Query.pk, literal(tag_id, Integer), literal(now), literal(now),
                   literal(actor, String), literal(True, Boolean), confidence).where(
                keys_condition(session, Query.pk, list(part)))
        ).on_conflict_do_nothing().returning(query_tags.c.query_pk)
        made = BitMap(session.execute(links).scalars())
        writer.changes.add(kinds.TAG, str(tag_id), made)
        touch(session, list(made), now)
    writer.finish()
    rows = session.execute(select(Query.id, Query.query, Query.language, Query.country).where(
        keys_condition(session, Query.pk, list(made))).order_by(Query.pk)).all() if made else []
    last = part.max() if part else after
    return {"tagged": len(made), "checked": len(part), "matching": len(candidates),
            "remaining": max(len(candidates) - start - len(part), 0),
            "cursor": last if start + len(part) < len(candidates) else None,
            "queries": [{"id": str(query_id), "query": text, "language": language,
                         "country": country} for query_id, text, language, country in rows]}
