"""A tag deleted: taken off every query that carries it, whose `updatedAt` becomes now (the
API's rule that a change of a query's tags is a change of the query), then gone."""

from __future__ import annotations

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from ..models import Tag, utcnow
from .tables import Query, query_tags
from .writer import Writer


def delete_tag(session: Session, project_id: str, tag_id: int) -> int:
    """In the caller's write transaction; how many queries carried the tag."""
    with Writer(session.connection(), project_id) as writer:
        carriers = select(query_tags.c.query_pk).where(query_tags.c.tag_id == tag_id)
        now = utcnow()
        session.execute(update(Query).where(Query.pk.in_(carriers)).values(updated_at=now)
                        .execution_options(synchronize_session=False))
        session.execute(update(query_tags).where(query_tags.c.query_pk.in_(carriers))
                        .values(updated_at=now))
        removed = session.execute(delete(query_tags).where(query_tags.c.tag_id == tag_id)
                                  .execution_options(synchronize_session=False)).rowcount
        session.execute(delete(Tag).where(Tag.id == tag_id)
                        .execution_options(synchronize_session=False))
        writer.dropped_tag(tag_id)
    return removed
