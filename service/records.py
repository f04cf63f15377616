"""The API's JSON shapes for rows and pages."""

from __future__ import annotations

import math
from datetime import datetime


def timestamp(value: datetime) -> str:
    if value.year >= 1000 and value.tzinfo is None:
        # The same text as below, at a third of the cost.
        return value.isoformat(timespec="milliseconds") + "Z"
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def query_record(row, tag_ids: list[int], updated_at: datetime | None = None) -> dict:
    return {
        "id": row.id,
        "project": row.project_id,
        "tags": tag_ids,
        "query": row.query,
        "language": row.language,
        "country": row.country,
        "updatedAt": timestamp(updated_at or row.updated_at),
    }


def tag_record(row) -> dict:
    return {"id": row.id, "project": row.project_id, "name": row.name, "color": row.color}


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
