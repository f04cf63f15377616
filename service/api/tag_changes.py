"""A tag edited, merged into another, and a merge undone (POST /api/tags/update, merge and
unmerge: extensions of the reference API). Each is one write transaction that also records
the change in the settings' activity log; the merge's writes go through the count engine
(service/engine/merging.py).

- update: a new name (unique in the project as tag names compare, weblib.tag_names), colour
  or description; the tag keeps its id, so the queries that carry it are not changed.
- merge: the tag's queries carry the other tag, the tag goes, rules name the other; the
  answer's `operation` undoes it (unmerge) for a week, unless a merge made since depends on
  it (a 409 that names the merge to undo first).
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.errors import BadRequest, Conflict, NotFound
from ..bodies.records import full_tag_record
from ..bodies.validation import MAX_ID, MergeTagBody, UnmergeTagBody, UpdateTagBody
from ..engine import merging
from ..org import audit
from ..store.db import begin_write, retried
from ..store.models import Project, Tag


def _tag(session: Session, project_id: str, tag_id: int, field: str = "id") -> Tag:
    """The project's tag; another project's, or none, is not found alike."""
    tag = None
    if 1 <= tag_id <= MAX_ID:
        tag = session.scalar(select(Tag).where(Tag.id == tag_id, Tag.project_id == project_id))
    if tag is None:
        session.rollback()
        raise NotFound(f"Tag {tag_id} not found." if field == "id"
                       else f"Tag {tag_id} ('{field}') not found.")
    return tag


def _taken(name: str) -> Conflict:
    return Conflict(f'A tag named "{name}" already exists in this project.')


def _project_name(session: Session, project_id: str) -> tuple[str, str]:
    return session.execute(select(Project.org_id, Project.name)
                           .where(Project.id == project_id)).one()


def update_tag(session: Session, project_id: str, body: UpdateTagBody) -> dict:
    given = body.model_fields_set - {"id"}
    begin_write(session)
    tag = _tag(session, project_id, body.id)
    changes = []
    if body.name is not None and body.name != tag.name:
        folded = fold_tag_name(body.name)
        existing = session.scalar(select(Tag).where(Tag.project_id == project_id,
                                                    Tag.name_folded == folded))
        if existing is not None and existing.id != tag.id:
            session.rollback()
            raise _taken(existing.name)
        changes.append(f"renamed from “{tag.name}”")
        tag.name, tag.name_folded = body.name, folded
    if body.color is not None and body.color != tag.color.lower():
        changes.append(f"colour {tag.color.lower()} changed to {body.color}")
        tag.color = body.color
    if "description" in given and body.description != tag.description:
        changes.append("description changed" if body.description else "description removed")
        tag.description = body.description
    if changes:
        org_id, project = _project_name(session, project_id)
        audit.record_tag_change(session, org_id, "tag.edited", tag.name,
                                f"In “{project}”: {'; '.join(changes)}.")
    try:
        session.commit()
    except IntegrityError:  # PostgreSQL: another request took the name meanwhile
        session.rollback()
        raise _taken(body.name) from None
    return full_tag_record(tag)


def _queries(number: int) -> str:
    return "1 query" if number == 1 else f"{number:,} queries"


def merge_tag(session: Session, project_id: str, body: MergeTagBody) -> dict:
    if body.id == body.intoId:
        raise BadRequest(["'intoId': a tag cannot be merged into itself; choose another "
                          "tag."])

    def write() -> dict:
        begin_write(session)
        tag = _tag(session, project_id, body.id)
        into = _tag(session, project_id, body.intoId, "intoId")
        merged = full_tag_record(tag)
        operation = uuid.uuid4().hex
        try:
            changed = merging.merge(session, project_id, tag, into, operation)
        except IntegrityError:
            # PostgreSQL: the other tag was deleted (settings) after it was found, and a link
            # to it can no longer be made; nothing was changed.
            session.rollback()
            raise NotFound(f"Tag {body.intoId} ('intoId') not found.") from None
        org_id, project = _project_name(session, project_id)
        audit.record_tag_change(session, org_id, "tag.merged", merged["name"],
                                f"In “{project}”, into “{into.name}”: {_queries(changed)} "
                                "changed.")
        session.commit()
        return {"merged": merged, "into": full_tag_record(into), "operation": operation,
                "queries": changed}

    return retried(session, write)


def unmerge_tag(session: Session, project_id: str, body: UnmergeTagBody) -> dict:
    def write() -> dict:
        begin_write(session)
        record = merging.merged(session, project_id, body.operation)
        if record is None:
            session.rollback()
            raise NotFound("Merge not found: it was undone already, is more than a week old, "
                           "or is another project's.")
        try:
            tag, changed = merging.unmerge(session, project_id, record)
        except merging.LaterMerge as later:
            session.rollback()
            raise Conflict(str(later)) from None
        except merging.NameTaken as taken:
            session.rollback()
            raise Conflict(f'The merge cannot be undone: a tag named "{taken.name}" has been '
                           "made since. Rename or merge that tag first.") from None
        org_id, project = _project_name(session, project_id)
        audit.record_tag_change(session, org_id, "tag.unmerged", tag.name,
                                f"In “{project}”: the merge was undone, {_queries(changed)} "
                                "changed.")
        session.commit()
        return {"restored": full_tag_record(tag), "operation": body.operation,
                "queries": changed}

    return retried(session, write)
