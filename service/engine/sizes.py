"""How many queries a project has, and how many carry each of its tags: the sizes of their
bitmaps' pieces, or counted row by row for a project a write went around the engine in
(until its next read builds its bitmaps again)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..store.models import Project, Tag
from . import kinds, pieces
from .tables import Query, query_tags


def _current(session: Session, project_ids: list[str]) -> set[str]:
    return set(session.scalars(select(Project.id).where(
        Project.id.in_(project_ids), Project.changes_outside == Project.changes_indexed)))


def query_counts(session: Session, project_ids: list[str]) -> dict[str, int]:
    if not project_ids:
        return {}
    current = _current(session, project_ids)
    table = pieces.pieces.c
    counts = dict(session.execute(
        select(table.project_id, func.sum(table.size)).where(
            table.project_id.in_(sorted(current)), table.kind == kinds.ALL)
        .group_by(table.project_id)).all()) if current else {}
    behind = sorted(set(project_ids) - current)
    if behind:
        counts.update(session.execute(
            select(Query.project_id, func.count()).where(Query.project_id.in_(behind))
            .group_by(Query.project_id)).all())
    return {project_id: int(counts.get(project_id) or 0) for project_id in project_ids}


def tag_counts(session: Session, project_id: str) -> dict[int, int]:
    """How many queries carry each tag of the project (tags that none carries: absent)."""
    if _current(session, [project_id]):
        table = pieces.pieces.c
        rows = session.execute(
            select(table.value, func.sum(table.size)).where(
                table.project_id == project_id, table.kind == kinds.TAG)
            .group_by(table.value)).all()
        return {int(value): int(size) for value, size in rows if size}
    return dict(session.execute(
        select(query_tags.c.tag_id, func.count()).join(Tag, Tag.id == query_tags.c.tag_id)
        .where(Tag.project_id == project_id).group_by(query_tags.c.tag_id)).all())
