"""Filtering, sorting and paging of queries and tags, as SQLAlchemy Core statements."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import and_, column, false, func, select, table, text
from sqlalchemy.orm import Session

from .errors import BadRequest
from .models import Query, Tag, query_tags
from .validation import MAX_ID, QueryListBody, SortItem, TagListBody

QUERY_SORT_FIELDS = {
    "query": Query.query,
    "language": Query.language,
    "country": Query.country,
    "updatedAt": Query.updated_at,
    "id": Query.id,
}
TAG_SORT_FIELDS = {"name": Tag.name_folded, "id": Tag.id}
DEFAULT_QUERY_SORT = [SortItem(field="updatedAt", direction="DESC")]
DEFAULT_TAG_SORT = [SortItem(field="name", direction="ASC")]

FTS = table("queries_fts", column("rowid"))
# The trigram index needs at least three characters; shorter terms fall back to LIKE.
TRIGRAM = 3


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
    return [*clauses, tie_breaker.asc()]


def _text_condition(session: Session, term: str):
    if session.get_bind().dialect.name == "sqlite":
        if len(term) >= TRIGRAM:
            phrase = '"' + term.replace('"', '""') + '"'
            matching = select(FTS.c.rowid).where(
                text("queries_fts MATCH :phrase").bindparams(phrase=phrase))
            return Query.pk.in_(matching)
        return Query.query.contains(term, autoescape=True)
    return Query.query.icontains(term, autoescape=True)


def _tag_ids(values: list) -> list[int]:
    """The values that can name a tag; anything else names no tag and so matches nothing."""
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


def _has_any_tag(tag_id_source):
    return (
        select(query_tags.c.query_pk)
        .where(query_tags.c.query_pk == Query.pk, query_tags.c.tag_id.in_(tag_id_source))
        .exists()
    )


def query_conditions(session: Session, project_id: str, body: QueryListBody) -> list:
    conditions = [Query.project_id == project_id]
    if body.query:
        conditions.append(_text_condition(session, body.query))
    if body.languages:
        conditions.append(Query.language.in_({code.lower() for code in body.languages}))
    if body.countries:
        conditions.append(Query.country.in_({code.upper() for code in body.countries}))
    if body.tagIds:
        ids = _tag_ids(body.tagIds)
        conditions.append(_has_any_tag(ids) if ids else false())
    if body.tagNames:
        named = select(Tag.id).where(
            Tag.project_id == project_id,
            Tag.name_folded.in_({name.casefold() for name in body.tagNames}),
        )
        conditions.append(_has_any_tag(named))
    return conditions


def tags_by_query(session: Session, query_pks: list[int]) -> dict[int, list[int]]:
    tags: dict[int, list[int]] = defaultdict(list)
    if query_pks:
        rows = session.execute(
            select(query_tags.c.query_pk, query_tags.c.tag_id)
            .where(query_tags.c.query_pk.in_(query_pks))
            .order_by(query_tags.c.query_pk, query_tags.c.tag_id)
        )
        for query_pk, tag_id in rows:
            tags[query_pk].append(tag_id)
    return tags


def list_queries(session: Session, project_id: str, body: QueryListBody):
    """(total, rows, tags by query pk) for one page."""
    ordering = order_by(body.sort, QUERY_SORT_FIELDS, DEFAULT_QUERY_SORT, Query.id)
    where = and_(*query_conditions(session, project_id, body))
    total = session.scalar(select(func.count()).select_from(Query).where(where))
    offset = (body.page - 1) * body.limit
    if offset >= total:
        return total, [], {}
    rows = session.execute(
        select(Query.pk, Query.id, Query.project_id, Query.query, Query.language,
               Query.country, Query.updated_at)
        .where(where).order_by(*ordering).limit(body.limit).offset(offset)
    ).all()
    return total, rows, tags_by_query(session, [row.pk for row in rows])


def list_tags(session: Session, project_id: str, body: TagListBody):
    ordering = order_by(body.sort, TAG_SORT_FIELDS, DEFAULT_TAG_SORT, Tag.id)
    conditions = [Tag.project_id == project_id]
    if body.name:
        conditions.append(Tag.name_folded.contains(body.name.casefold(), autoescape=True))
    where = and_(*conditions)
    total = session.scalar(select(func.count()).select_from(Tag).where(where))
    rows = session.execute(
        select(Tag).where(where).order_by(*ordering)
        .limit(body.limit).offset((body.page - 1) * body.limit)
    ).scalars().all()
    return total, rows
