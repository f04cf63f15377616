"""When each of some queries was last changed (POST /api/queries/versions, an extension): a
read of those rows by their ids, so that a page can tell whether the rows it shows changed
since it drew them without listing its filter again."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..store.models import is_uuid
from .tables import Query


def updated_at(session: Session, project_id: str, ids: list[str]) -> dict[str, datetime]:
    """The last change of each query of `ids` the project has, by id. An id that is not a
    query id as the service writes them names no query: left out, as one of another project."""
    wanted = sorted({query_id for query_id in ids if is_uuid(query_id)})
    if not wanted:
        return {}
    # By the ids alone (their unique index), the project checked on the rows found: with the
    # project in the WHERE, SQLite walked the project's whole update-time index instead.
    rows = session.execute(select(Query.id, Query.project_id, Query.updated_at).where(
        Query.id.in_(wanted)))
    return {str(query_id): when for query_id, project, when in rows
            if str(project) == project_id}
