"""A request's filter in the count engine's terms: a body (QueryFilterBody, or a filter a rule
or a saved view keeps) becomes the engine's Filter once the project's tags are known, and the
listing calls take their bodies here."""

from __future__ import annotations

from functools import partial

from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.errors import BadRequest
from ..bodies.validation import (
    MAX_ID,
    FacetsBody,
    QueryFilterBody,
    QueryListBody,
    stored_filter,
)
from ..engine import listing
from ..engine.counting import Filter, FilterOf
from ..engine.held import Held
from ..engine.numbers import BY_NAME
from ..engine.ordering import Sort
from ..store.models import Project


def _tag_ids(values: list) -> list[int]:
    """The values that can name a tag; anything else names no tag."""
    ids = []
    for value in values:
        if isinstance(value, str):
            value = value.strip()
            if not (value.isascii() and value.isdigit()):
                continue
            value = int(value)
        if 1 <= value <= MAX_ID:
            ids.append(value)
    return ids


def to_filter(body: QueryFilterBody, tags: dict[int, str]) -> Filter:
    """The body's filter with its tags resolved to the project's tag ids (`tags`: id → folded
    name). A tag that is not the project's matches nothing where it is required, and is no
    matter where excluded."""
    if body.untagged and (body.tagIds or body.tagNames):
        raise BadRequest(["'untagged': queries with no tag cannot also have one of "
                          "'tagIds' or 'tagNames'; send one or the other."])
    by_name = {name: tag_id for tag_id, name in tags.items()}

    def named(ids, names) -> tuple[list[frozenset[int]], bool]:
        """The tags of the lists as sets (one per list), and whether every one exists."""
        sets, every = [], True
        if ids:
            named_ids = [_tag_ids([ref]) for ref in ids]  # [] for a value that names no tag
            every &= all(found and found[0] in tags for found in named_ids)
            sets.append(frozenset(found[0] for found in named_ids if found and found[0] in tags))
        if names:
            wanted = {fold_tag_name(name) for name in names}
            every &= wanted <= set(by_name)
            sets.append(frozenset(by_name[name] for name in wanted if name in by_name))
        return sets, every

    sets, every = named(body.tagIds, body.tagNames)
    if body.tagMatch == "all":
        required = tuple(frozenset({tag_id}) for tag_id in sorted(set().union(*sets)))
        if not every:
            required = (frozenset(),)
    else:
        required = tuple(sets)
    excluded, _every = named(body.excludeTagIds, body.excludeTagNames)
    return Filter(
        text=body.query or "",
        languages=frozenset(code.lower() for code in body.languages or ()),
        countries=frozenset(code.upper() for code in body.countries or ()),
        required=required,
        excluded=frozenset().union(*excluded),
        untagged=bool(body.untagged),
        pattern=body.pattern or "",
        match_all=body.tagMatch == "all",
        ranges=_ranges(body),
    )


def _ranges(body: QueryFilterBody) -> tuple[tuple[str, int | None, int | None], ...]:
    """The body's numbers' bounds as the engine stores the numbers, by name."""
    found = []
    for name, bounds in sorted((body.metricRanges or {}).items()):
        number = BY_NAME[name]
        found.append((name,
                      None if bounds.min is None else number.lower_bound(bounds.min),
                      None if bounds.max is None else number.upper_bound(bounds.max)))
    return tuple(found)


def filter_of(body: QueryFilterBody) -> FilterOf:
    """The body's filter, resolved when the engine has read the project's tags."""
    return partial(to_filter, body)


def stored(kept: str) -> FilterOf:
    """A filter a rule (its condition) or a saved view keeps, as the engine reads it."""
    return filter_of(stored_filter(kept))


def check(session: Session, project_id: str, body: QueryFilterBody) -> None:
    """A BadRequest where queries/facets gives one for this body."""
    to_filter(body, listing.project_tags(session, project_id))


def list_queries(session: Session, project_id: str, body: QueryListBody, store: Held):
    """(total, rows, tags by query pk) for one page of queries/list."""
    sort = [Sort(item.field, item.direction) for item in body.sort]
    return listing.list_queries(session, project_id, filter_of(body), sort, body.page,
                                body.limit, store)


def facets(session: Session, project_id: str, body: FacetsBody, store: Held) -> dict:
    sums = tuple(dict.fromkeys(body.sums))
    found = listing.facets(session, project_id, filter_of(body), store, sums)
    if sums:
        found["currency"] = session.get(Project, project_id).currency
    return found


def totals(session: Session, project_id: str, bodies: list[QueryFilterBody],
           store: Held) -> list[int]:
    """queries/list's totalRecords of each filter, from one read of the project."""
    return listing.totals(session, project_id, [filter_of(body) for body in bodies], store)
