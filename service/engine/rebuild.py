"""A project's bitmaps built again from its rows (and its links' copies of their queries'
times): when a write went around the engine
(hand-written SQL moved `changes_outside`, migration 0026) and by the migration that made
the engine. Every count after it is a count of the rows as they are."""

from __future__ import annotations

from itertools import islice

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from ..store.models import Project, Tag
from . import kinds, pieces
from .rows import COLUMNS, query_rows
from .tables import Query, query_suggestions, query_tags, suggestion_models
from .writer import links_changes, mark, rows_changes_in_parts

READ_AT_ONCE = 50_000


def projects_behind(connection: Connection) -> list[str]:
    return [str(project_id) for project_id in connection.scalars(
        select(Project.id).where(Project.changes_outside != Project.changes_indexed)
        .order_by(Project.id))]


def rebuild(connection: Connection, project_id: str) -> None:
    """In the caller's write transaction (SQLite: begun IMMEDIATE)."""
    statement = select(Project.engine_stamp, Project.changes_outside).where(
        Project.id == project_id)
    if connection.dialect.name == "postgresql":
        statement = statement.with_for_update(key_share=True)
    found = connection.execute(statement).one_or_none()
    if found is None:
        return
    stamp, changes_outside = found[0] + 1, found[1]
    mark(connection, True)
    connection.execute(pieces.pieces.delete().where(pieces.pieces.c.project_id == project_id))
    rows = connection.execute(
        select(*Query.__table__.c[COLUMNS])
        .where(Query.project_id == project_id),
        execution_options={"stream_results": True, "max_row_buffer": READ_AT_ONCE})
    changes = rows_changes_in_parts(query_rows(rows))
    links = connection.execute(
        select(query_tags.c.query_pk, query_tags.c.tag_id)
        .join(Tag, Tag.id == query_tags.c.tag_id).where(Tag.project_id == project_id),
        execution_options={"stream_results": True, "max_row_buffer": READ_AT_ONCE})
    while batch := list(islice(links, READ_AT_ONCE)):
        for tag, keys in links_changes(batch).items():
            changes.add(kinds.TAG, tag, keys)
    # The suggestions at the model's default confidence (engine/suggested.py).
    suggested = connection.execute(
        select(query_suggestions.c.query_pk, query_suggestions.c.tag_id)
        .join(suggestion_models, suggestion_models.c.project_id == query_suggestions.c.project_id)
        .where(query_suggestions.c.project_id == project_id,
               query_suggestions.c.confidence >= suggestion_models.c.default_confidence),
        execution_options={"stream_results": True, "max_row_buffer": READ_AT_ONCE})
    while batch := list(islice(suggested, READ_AT_ONCE)):
        for tag, keys in links_changes(batch).items():
            changes.add(kinds.SUGGESTED, tag, keys)
    pieces.write(connection, project_id, changes, stamp)
    # Each link carries its query's time (a tag's page in time order walks them): a time
    # changed by hand is copied again.
    connection.execute(
        update(query_tags).where(
            query_tags.c.query_pk == Query.pk, Query.project_id == project_id,
            query_tags.c.updated_at != Query.updated_at)
        .values(updated_at=Query.updated_at))
    connection.execute(update(Project).where(Project.id == project_id).values(
        engine_stamp=stamp, texts_stamp=stamp, engine_epoch=Project.engine_epoch + 1,
        changes_indexed=changes_outside))
    mark(connection, False)
