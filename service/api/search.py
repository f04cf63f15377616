"""Sorting checks shared by the list endpoints, and the tags listing (queries are listed by
the count engine: service/engine/listing.py)."""

from __future__ import annotations

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.validation import SortItem, TagListBody
from ..engine.ordering import order_by
from ..store.models import Tag

TAG_SORT_FIELDS = {"name": Tag.name_folded, "id": Tag.id}
DEFAULT_TAG_SORT = [SortItem(field="name", direction="ASC")]


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
