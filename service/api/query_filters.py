"""A request's filter in the count engine's terms: a body (QueryFilterBody, or a filter a rule
or a saved view keeps) becomes the engine's Filter once the project's tags are known (the body
says how, field by field: QueryFilterBody.to_filter), and the listing calls take their bodies
here."""

from __future__ import annotations

from sqlalchemy.orm import Session

from ..bodies.validation import (
    FacetsBody,
    QueryFilterBody,
    QueryListBody,
    stored_filter,
)
from ..engine import listing
from ..engine.counting import FilterOf
from ..engine.held import Held
from ..engine.ordering import Sort
from ..store.models import Project


def filter_of(body: QueryFilterBody) -> FilterOf:
    """The body's filter, resolved when the engine has read the project's tags."""
    return body.to_filter


def stored(kept: str) -> FilterOf:
    """A filter a rule (its condition) or a saved view keeps, as the engine reads it."""
    return filter_of(stored_filter(kept))


def check(session: Session, project_id: str, body: QueryFilterBody) -> None:
    """A BadRequest where queries/facets gives one for this body."""
    body.to_filter(listing.project_tags(session, project_id))


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
