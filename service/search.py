"""Sorting checks shared by the list endpoints, and the tags listing (queries are listed by
the count engine: service/engine/listing.py)."""

from __future__ import annotations

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from .errors import BadRequest
from .models import Tag
from .validation import SortItem, TagListBody

TAG_SORT_FIELDS = {"name": Tag.name_folded, "id": Tag.id}
DEFAULT_TAG_SORT = [SortItem(field="name", direction="ASC")]


def order_by(sort: list[SortItem], fields: dict, default: list[SortItem], tie_breaker):
    clauses, errors = [], []
    for position, item in enumerate(sort or default):
        column = fields.get(item.field)
        direction = item.direction.upper()
        if column is None:
            errors.append(
                f"'sort.{position}.field': '{item.field}' is not a sort field; "
                f"use one of {', '.join(fields)}."
            )
        if direction not in ("ASC", "DESC"):
            errors.append(f"'sort.{position}.direction': use ASC or DESC.")
        if column is not None and direction in ("ASC", "DESC"):
            clauses.append(column.desc() if direction == "DESC" else column.asc())
    if errors:
        raise BadRequest(errors)
    # Sorted by the tie-breaker itself: no second term (SQLite then ignored the covering
    # (project_id, id) index for a page sorted by id and scanned the global id index instead).
    if any(fields.get(item.field) is tie_breaker for item in sort or default):
        return clauses
    return [*clauses, tie_breaker.asc()]


def list_tags(session: Session, project_id: str, body: TagListBody):
    ordering = order_by(body.sort, TAG_SORT_FIELDS, DEFAULT_TAG_SORT, Tag.id)
    conditions = [Tag.project_id == project_id]
    if body.name:
        conditions.append(Tag.name_folded.contains(fold_tag_name(body.name), autoescape=True))
    where = and_(*conditions)
    total = session.scalar(select(func.count()).select_from(Tag).where(where))
    rows = session.execute(
        select(Tag).where(where).order_by(*ordering)
        .limit(body.limit).offset((body.page - 1) * body.limit)
    ).scalars().all()
    return total, rows
