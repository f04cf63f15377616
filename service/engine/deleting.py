"""A tag deleted: taken off every query that carries it, whose `updatedAt` becomes now (the
API's rule that a change of a query's tags is a change of the query), then gone, and out of
every rule that added it (a rule left with no tag is paused)."""

from __future__ import annotations

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from ..store.models import Tag, utcnow
from . import entry_rules
from .tables import Query, query_tags
from .writer import Writer


def lock_tag_and_its_queries(session: Session, tag_id: int) -> None:
    """PostgreSQL: take the rows in the order a set-tags call takes them — its queries' rows
    first (in key order), then the tag's — so that the two rarely wait for each other in a
    circle. Once the tag's row is held no link to it can be added (adding one reads the tag's
    row FOR KEY SHARE), so every query that carries the tag is known."""
    carriers = select(query_tags.c.query_pk).where(query_tags.c.tag_id == tag_id)
    locked = (select(Query.pk).where(Query.pk.in_(carriers)).order_by(Query.pk)
              .with_for_update(of=Query).subquery())
    session.execute(select(func.count()).select_from(locked))
    session.execute(select(Tag.id).where(Tag.id == tag_id).with_for_update(of=Tag))


def delete_tag(session: Session, project_id: str, tag_id: int) -> int:
    """In the caller's write transaction; how many queries carried the tag."""
    if session.get_bind().dialect.name == "postgresql":
        lock_tag_and_its_queries(session, tag_id)
    name = session.scalar(select(Tag.name).where(Tag.id == tag_id))
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
    entry_rules.tag_deleted(session, project_id, tag_id, name or str(tag_id))
    return removed
