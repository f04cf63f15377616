"""The API's JSON shapes for rows and pages."""

from __future__ import annotations

import math
from datetime import datetime

from ..engine.numbers import NUMBERS


def timestamp(value: datetime) -> str:
    if value.year >= 1000 and value.tzinfo is None:
        # The same text as below, at a third of the cost.
        return value.isoformat(timespec="milliseconds") + "Z"
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _query(id_: int, project: str, tag_ids: list[int], query: str, language: str,
           country: str, updated_at: datetime) -> dict:
    return {
        "id": id_,
        "project": project,
        "tags": tag_ids,
        "query": query,
        "language": language,
        "country": country,
        "updatedAt": timestamp(updated_at),
    }


def query_record(row, tag_ids: list[int], updated_at: datetime | None = None) -> dict:
    return _query(row.id, row.project_id, tag_ids, row.query, row.language, row.country,
                  updated_at or row.updated_at)


def tagged_records(tagged) -> list[dict]:
    """The records of the queries a tag write answers with (engine.tagging.Tagged)."""
    return [query_record(each.row, each.tag_ids, each.updated_at) for each in tagged]


def add_numbers(rows, records: list[dict]) -> None:
    """Each record's known numbers (an extension: queries/list's "include": ["metrics"]), from
    rows whose columns after search.COLUMNS' first seven are each number's, in NUMBERS'
    order."""
    for row, record in zip(rows, records, strict=True):
        record["metrics"] = {number.name: number.shown(value)
                             for number, value in zip(NUMBERS, row[7:], strict=True)
                             if value is not None}


def query_records(rows, tags: dict[int, list[int]]) -> list[dict]:
    """The records of a queries page, from rows whose first columns are those of
    search.COLUMNS (pk, id, project_id, query, language, country, updated_at): unpacked by
    position, a third of the time of reading each by name."""
    return [_query(id_, project, tags.get(pk, []), query, language, country, updated_at)
            for pk, id_, project, query, language, country, updated_at, *_ in rows]


def tag_record(row) -> dict:
    """A tag as the reference's endpoints give it: its `description` (an extension) only
    when it has one, so a reference client sees the reference's record."""
    record = {"id": row.id, "project": row.project_id, "name": row.name, "color": row.color}
    if getattr(row, "description", None):
        record["description"] = row.description
    return record


def full_tag_record(row) -> dict:
    """A tag as the extensions that change tags give it: `description` always, null when
    none."""
    return {"id": row.id, "project": row.project_id, "name": row.name, "color": row.color,
            "description": row.description or None}


def project_record(row) -> dict:
    return {"id": row.id, "name": row.name}


def page_object(total: int, page: int, limit: int) -> dict:
    total_pages = math.ceil(total / limit)
    return {
        "totalRecords": total,
        "limit": limit,
        "currentPage": page,
        "totalPages": total_pages,
        "nextPage": page + 1 if page < total_pages else None,
        "prevPage": min(page - 1, total_pages) if page > 1 and total_pages else None,
    }
