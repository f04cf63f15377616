"""POST /api/queries/versions (an extension): the `updatedAt` of the queries a client names
by id, the cheapest answer to "did the rows I show change?" (docs/decisions.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy.orm import Session

from ..bodies.records import timestamp
from ..bodies.validation import MAX_ITEMS, Strict, Text
from ..engine.versions import updated_at


class QueryVersionsBody(Strict):
    ids: Annotated[list[Text], Field(max_length=MAX_ITEMS)]


def query_versions(session: Session, project_id: str, body: QueryVersionsBody) -> dict:
    """{"results": [{"id", "updatedAt"}]} in the order of `ids`, each id once; an id the
    project has no query of (deleted, another project's, not an id) is left out."""
    found = updated_at(session, project_id, body.ids)
    results, seen = [], set()
    for query_id in body.ids:
        if query_id in found and query_id not in seen:
            seen.add(query_id)
            results.append({"id": query_id, "updatedAt": timestamp(found[query_id])})
    return {"results": results}
