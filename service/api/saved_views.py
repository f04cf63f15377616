"""Saved views (an extension of the reference API, POST /api/views/…): named filters of one
project, shared by everyone of its organization, each listed with the live count of its
filter (the count engine's, as queries/list's totalRecords).

A view keeps its filter as it was sent, validated (QueryFilterBody) and without empty fields:
its tags stay named as they were sent, and are resolved whenever it is counted, as queries/list
resolves them. A tag deleted since is an unknown tag then (ids are never given again, so an id
never comes to name another tag).
"""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.records import timestamp
from ..bodies.validation import (
    CreateViewBody,
    QueryFilterBody,
    SortItem,
    UpdateViewBody,
    ViewIdBody,
)
from ..engine import listing
from ..engine.counting import FilterOf
from ..engine.held import Held
from ..store.models import SavedView, utcnow
from . import query_filters
from .named_items import NamedItems, lock_project

MAX_VIEWS = 200  # per project

ITEMS = NamedItems(SavedView, "saved view")


def _filters_text(body: QueryFilterBody) -> str:
    """The filter as stored: its fields as sent, without those that filter nothing."""
    fields = {name: value for name, value in body.model_dump(exclude_defaults=True).items()
              if value not in (None, "", [])}
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def _sort_text(sort: list[SortItem] | None) -> str | None:
    """The sort as stored (directions upper-case); None for the default order."""
    if not sort:
        return None
    listing.check_sort(sort)
    return json.dumps([{"field": item.field, "direction": item.direction.upper()}
                       for item in sort], ensure_ascii=False, separators=(",", ":"))


def _columns_text(columns: list[str] | None) -> str | None:
    """The numbers shown, each once, as stored; None for the default ones."""
    return None if columns is None else json.dumps(list(dict.fromkeys(columns)))


def _filter_of(view: SavedView) -> FilterOf:
    return query_filters.stored(view.filters)


def _record(view: SavedView, total: int) -> dict:
    return {
        "id": view.id,
        "project": view.project_id,
        "name": view.name,
        "filters": json.loads(view.filters),
        "sort": None if view.sort is None else json.loads(view.sort),
        "columns": None if view.columns is None else json.loads(view.columns),
        "totalRecords": total,
        "createdAt": timestamp(view.created_at),
        "updatedAt": timestamp(view.updated_at),
    }


def _records(session: Session, project_id: str, views: list[SavedView],
             store: Held) -> list[dict]:
    counts = listing.totals(session, project_id, [_filter_of(view) for view in views], store)
    return [_record(view, count) for view, count in zip(views, counts, strict=True)]


def list_views(session: Session, project_id: str, store: Held) -> list[dict]:
    views = session.scalars(select(SavedView).where(SavedView.project_id == project_id)).all()
    views = sorted(views, key=lambda view: (view.name_folded, view.id))
    return _records(session, project_id, views, store)


def create_view(session: Session, project_id: str, body: CreateViewBody, store: Held) -> dict:
    filters, sort = _filters_text(body.filters), _sort_text(body.sort)
    # Counted before it is kept: a filter queries/list refuses (no tag and a tag) is a 400.
    total, = query_filters.totals(session, project_id, [body.filters], store)
    folded = fold_tag_name(body.name)
    lock_project(session, project_id)
    ITEMS.make_room(session, project_id, folded, MAX_VIEWS,
                    f"This project has {MAX_VIEWS} saved views, as many as a project may "
                    "have; delete one before saving another.")
    now = utcnow()
    view = SavedView(project_id=project_id, name=body.name, name_folded=folded, filters=filters,
                     sort=sort, columns=_columns_text(body.columns), created_at=now,
                     updated_at=now)
    session.add(view)
    ITEMS.committed(session, view)
    return _record(view, total)


def update_view(session: Session, project_id: str, body: UpdateViewBody, store: Held) -> dict:
    given = body.model_fields_set
    filters = _filters_text(body.filters) if body.filters is not None else None
    sort = _sort_text(body.sort) if "sort" in given else None
    if body.filters is not None:
        query_filters.totals(session, project_id, [body.filters], store)  # a 400 before any change
    lock_project(session, project_id)
    view = ITEMS.one(session, project_id, body.id)
    if body.name is not None:
        ITEMS.rename(session, view, body.name)
    if filters is not None:
        view.filters = filters
    if "sort" in given:
        view.sort = sort
    if "columns" in given:
        view.columns = _columns_text(body.columns)
    if given - {"id"}:
        view.updated_at = utcnow()
    ITEMS.committed(session, view)
    return _records(session, project_id, [view], store)[0]


def delete_view(session: Session, project_id: str, body: ViewIdBody) -> dict:
    lock_project(session, project_id)
    view = ITEMS.one(session, project_id, body.id)
    session.delete(view)
    session.commit()
    return {"deleted": body.id}
