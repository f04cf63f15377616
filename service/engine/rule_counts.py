"""The counts of rules (service/api/rules.py), from the project's bitmaps as queries/facets counts:
how many queries a rule's condition matches, how many of those carry all its tags already,
and a sample of those that lack one."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import select
from sqlalchemy.orm import Session

from .counting import Counter, FilterOf
from .held import Held
from .keys import keys_condition
from .listing import COLUMNS, counter, project_tags, tags_by_query
from .tables import Query

SAMPLE = 20


def _carriers(counting: Counter, tag_ids: list[int]) -> BitMap | None:
    """The queries that carry every one of the tags (None: no tag, which every query carries)."""
    if not tag_ids:
        return None
    bitmaps = sorted((counting.tag(tag_id) for tag_id in tag_ids), key=len)
    return BitMap.intersection(*bitmaps) if len(bitmaps) > 1 else BitMap(bitmaps[0])


def counts(session: Session, project_id: str, rules: list[tuple[FilterOf, list[int]]],
           store: Held) -> list[tuple[int, int]]:
    """(matching, carrying) of each (condition, tag ids): one read of the project for all."""
    if not rules:
        return []
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    found = []
    for condition, tag_ids in rules:
        matches = counting.matches(condition(tags))
        carriers = _carriers(counting, tag_ids)
        carrying = len(matches) if carriers is None else matches.intersection_cardinality(
            carriers)
        found.append((len(matches), carrying))
    return found


def preview(session: Session, project_id: str, condition: FilterOf, tag_ids: list[int],
            store: Held):
    """(matching, lacking, rows of SAMPLE lacking queries, their tags by pk): the latest to
    enter the project first (the highest keys: no sort of all of them is needed)."""
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    matches = counting.matches(condition(tags))
    carriers = _carriers(counting, tag_ids)
    lacking = BitMap() if carriers is None else matches - carriers
    sample = list(lacking[-SAMPLE:]) if lacking else []
    rows = []
    if sample:
        rows = session.execute(select(*COLUMNS).where(
            keys_condition(session, Query.pk, sample)).order_by(Query.pk.desc())).all()
    return len(matches), len(lacking), rows, tags_by_query(session, [row.pk for row in rows])
