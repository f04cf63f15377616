"""Create a tag (POST /api/tags/create, an extension of the reference API): a name no tag of
the project has, compared as weblib.tag_names folds names (case, look-alikes), and a colour
— the caller's, or one from the palette (org/palette.py). The tag is recorded on the
organization's record (org/audit.py) in the same transaction."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.errors import Conflict
from ..bodies.validation import CreateTagBody
from ..org import audit, palette
from ..store.db import begin_write
from ..store.models import Project, Tag


def _taken(name: str) -> Conflict:
    return Conflict(f'A tag named "{name}" already exists in this project.')


def _existing(session: Session, project_id: str, folded: str) -> Tag | None:
    return session.scalar(select(Tag).where(Tag.project_id == project_id,
                                            Tag.name_folded == folded))


def create_tag(session: Session, project_id: str, body: CreateTagBody) -> Tag:
    """The new tag; a Conflict when the project has a tag of that name already. On SQLite the
    write lock, taken first, orders concurrent creators; on PostgreSQL the unique constraint
    on (project, folded name) refuses the second, which is answered the same way."""
    name, folded = body.name, fold_tag_name(body.name)
    begin_write(session)
    existing = _existing(session, project_id, folded)
    if existing is not None:
        session.rollback()
        raise _taken(existing.name)
    color = body.color
    if color is None:
        color = palette.pick(dict(session.execute(
            select(func.lower(Tag.color), func.count()).where(Tag.project_id == project_id)
            .group_by(func.lower(Tag.color))).all()))
    org_id, project = session.execute(select(Project.org_id, Project.name)
                                      .where(Project.id == project_id)).one()
    tag = Tag(project_id=project_id, name=name, name_folded=folded, color=color)
    session.add(tag)
    try:
        # Recording flushes the tag: a name taken meanwhile is refused here on PostgreSQL.
        audit.record_tag_change(session, org_id, "tag.created", name,
                                f"In “{project}”, colour {color}.")
        session.commit()
    except IntegrityError:
        session.rollback()
        existing = _existing(session, project_id, folded)
        raise _taken(existing.name if existing is not None else name) from None
    return tag
