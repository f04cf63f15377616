"""Changes to an organization's projects and tags from the settings area: create and rename
a project; create, edit and delete a tag. Each change is one write transaction that also
records it in the activity log (audit.record_change; a tag's change through
audit.record_tag_change), so there is no change without its record.

- Project names are unique within an organization, compared without regard to case and
  surrounding spaces (“Shop search” and “shop search ” are the same name): two projects
  that people cannot tell apart in a list would be picked by mistake. The command line
  (admin.create_project) does not check this, so an organization may already have two
  projects of one name; the settings area then refuses only new names that clash. Concurrent
  creators are ordered by a lock on the organization's row (PostgreSQL) or by SQLite's write
  lock.
- Tag names are unique within a project, compared as the API compares them
  (weblib.tag_names: case and look-alikes; the tags table's unique constraint on (project,
  folded name)).
- Editing a tag keeps its id, so the queries that carry it keep it: their `updatedAt` stays.
- Deleting a tag takes it off every query that carries it, and those queries' `updatedAt`
  becomes the time of the deletion — the API's rule that a change of a query's tags is a
  change of the query (service/engine/deleting.py).
- Merging a tag into another gives its queries the other tag and removes it, as the API's
  tags/merge does, and its undo gives it back with its id and its links
  (service/engine/merging.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.validation import MAX_ID
from ..engine import deleting, merging, sizes
from ..org import audit, palette
from ..store.db import begin_write, retried, retryable
from ..store.models import Organization, OrgEvent, Project, Tag, is_uuid


class Refused(ValueError):
    """A sentence for the person: why the change was not made (nothing was changed)."""


class Busy(Refused):
    """Other changes to the same queries kept getting in the way; nothing was changed."""


@dataclass(frozen=True)
class TagRow:
    """A tag as the project's page lists it."""

    id: int
    name: str
    color: str
    query_count: int


# --- reading ----------------------------------------------------------------------------------


def org_project(session: Session, org_id: str, project_id: str) -> Project | None:
    """A project of the organization; None for any other id (another organization's too)."""
    if not is_uuid(project_id):
        return None
    return session.scalar(select(Project).where(Project.id == project_id,
                                                Project.org_id == org_id))


def project_tag(session: Session, project: Project, tag_id: int) -> Tag | None:
    """A tag of the project; None for any other id."""
    if not 1 <= tag_id <= MAX_ID:
        return None
    return session.scalar(select(Tag).where(Tag.id == tag_id, Tag.project_id == project.id))


def projects_with_counts(session: Session, org_id: str) -> list[tuple[Project, int, int]]:
    """The organization's projects by name, each with its number of tags and of queries (the
    count engine's: no query row is read, however many there are)."""
    tag_counts = (select(Tag.project_id, func.count().label("tags"))
                  .group_by(Tag.project_id).subquery())
    rows = session.execute(
        select(Project, func.coalesce(tag_counts.c.tags, 0))
        .outerjoin(tag_counts, tag_counts.c.project_id == Project.id)
        .where(Project.org_id == org_id)
        .order_by(func.lower(Project.name), Project.name, Project.id)).all()
    queries = sizes.query_counts(session, [project.id for project, _tags in rows])
    return [(project, tags, queries[project.id]) for project, tags in rows]


def query_count(session: Session, project: Project) -> int:
    return sizes.query_counts(session, [project.id])[project.id]


def carriers(session: Session, project: Project, tag: Tag) -> int:
    """How many of the project's queries carry the tag."""
    return sizes.tag_counts(session, project.id).get(tag.id, 0)


def project_tags(session: Session, project: Project) -> list[TagRow]:
    """The project's tags by name, each with how many queries carry it."""
    counts = sizes.tag_counts(session, project.id)
    return [TagRow(tag_id, name, color, counts.get(tag_id, 0)) for tag_id, name, color in
            session.execute(select(Tag.id, Tag.name, Tag.color)
                            .where(Tag.project_id == project.id)
                            .order_by(Tag.name_folded, Tag.id))]


def suggested_colour(session: Session, project: Project) -> str:
    """The palette colour the project's tags use least, as the API picks one."""
    return palette.pick(dict(session.execute(
        select(func.lower(Tag.color), func.count()).where(Tag.project_id == project.id)
        .group_by(func.lower(Tag.color))).all()))


def readable(colour: str) -> bool:
    """Whether black or white text reaches 4.5:1 on the colour (WCAG AA, normal text). By
    the WCAG formula the better of the two never falls below about 4.58:1 on any #rrggbb
    colour, so this holds for every colour today; the page keeps the check (and its
    warning) in case the chips' text colours ever change."""
    return palette.readable(colour)


def own_event(session: Session, org_id: str, user_id: int, event_id: int | None) -> OrgEvent | None:
    """A change the signed-in person made, to show as a notice after the redirect."""
    if event_id is None or not 1 <= event_id <= MAX_ID:
        return None
    return session.scalar(select(OrgEvent).where(
        OrgEvent.id == event_id, OrgEvent.org_id == org_id, OrgEvent.user_id == user_id))


# --- writing ----------------------------------------------------------------------------------


@contextmanager
def _writing(session: Session, tag_name: str | None = None) -> Iterator[None]:
    """One write transaction: committed at the end of the block, undone on any error. With
    `tag_name`: the tags table's unique constraint refusing it (PostgreSQL: another request
    created the name in the meantime) is the same Refused as the check before it."""
    begin_write(session)
    try:
        yield
        session.commit()
    except IntegrityError:
        session.rollback()
        if tag_name is None:
            raise
        raise _taken(tag_name) from None
    except BaseException:
        session.rollback()
        raise


# --- projects ---------------------------------------------------------------------------------


def _lock_organization(session: Session, org_id: str) -> None:
    """Order concurrent project creators and renamers of one organization (PostgreSQL; on
    SQLite the write transaction's lock already does)."""
    session.execute(select(Organization.id).where(Organization.id == org_id)
                    .with_for_update(key_share=True, of=Organization))  # FOR NO KEY UPDATE


def _name_taken(session: Session, org_id: str, name: str, except_id: str | None) -> str | None:
    folded = name.strip().casefold()
    for project_id, other in session.execute(
            select(Project.id, Project.name).where(Project.org_id == org_id)):
        if project_id != except_id and other.strip().casefold() == folded:
            return other
    return None


def _refuse_taken_name(session: Session, org_id: str, name: str, except_id: str | None):
    taken = _name_taken(session, org_id, name, except_id)
    if taken is not None:
        raise Refused(f"Your organization already has a project named “{taken}”. Please "
                      "choose a different name.")


def create_project(session: Session, org_id: str, user_id: int,
                   name: str) -> tuple[str, OrgEvent]:
    """The new project's id and the record of its creation."""
    with _writing(session):
        _lock_organization(session, org_id)
        _refuse_taken_name(session, org_id, name, None)
        project = Project(org_id=org_id, name=name)
        session.add(project)
        session.flush()
        event = audit.record_change(session, org_id, "project.created", name, user_id=user_id)
    return project.id, event


def rename_project(session: Session, org_id: str, project_id: str, user_id: int,
                   name: str) -> OrgEvent | None:
    """The record of the rename; None when the name is unchanged. LookupError: the project
    is gone."""
    with _writing(session):
        _lock_organization(session, org_id)
        project = org_project(session, org_id, project_id)
        if project is None:
            raise LookupError(project_id)
        old = project.name
        if name == old:
            return None
        _refuse_taken_name(session, org_id, name, project.id)
        project.name = name
        event = audit.record_change(session, org_id, "project.renamed", name,
                                    f"Renamed from “{old}”.", user_id=user_id)
    return event


# --- tags -------------------------------------------------------------------------------------


def _tag_taken(session: Session, project_id: str, name: str, except_id: int | None):
    existing = session.scalar(select(Tag).where(Tag.project_id == project_id,
                                                Tag.name_folded == fold_tag_name(name)))
    if existing is not None and existing.id != except_id:
        raise _taken(existing.name)


def _taken(name: str) -> Refused:
    return Refused(f"This project already has a tag named “{name}” (names are compared as "
                   "they read: capital letters and invisible characters make no difference). "
                   "Please choose a different name.")


def create_tag(session: Session, org_id: str, project_id: str, user_id: int, name: str,
               colour: str) -> OrgEvent:
    """LookupError: the project is gone."""
    with _writing(session, tag_name=name):
        project = org_project(session, org_id, project_id)
        if project is None:
            raise LookupError(project_id)
        _tag_taken(session, project.id, name, None)
        session.add(Tag(project_id=project.id, name=name, name_folded=fold_tag_name(name),
                        color=colour))
        session.flush()
        event = audit.record_tag_change(session, org_id, "tag.created", name,
                                        f"In “{project.name}”, colour {colour}.", user_id=user_id)
    return event


def edit_tag(session: Session, org_id: str, project_id: str, tag_id: int, user_id: int,
             name: str, colour: str, description: str | None = None) -> OrgEvent | None:
    """The record of the edit (name, colour, description: None or "" for none); None when
    nothing changed. LookupError: the tag is gone."""
    with _writing(session, tag_name=name):
        project = org_project(session, org_id, project_id)
        tag = project_tag(session, project, tag_id) if project is not None else None
        if tag is None:
            raise LookupError(tag_id)
        changes = []
        if name != tag.name:
            _tag_taken(session, project.id, name, tag.id)
            changes.append(f"renamed from “{tag.name}”")
        if colour != tag.color.lower():
            changes.append(f"colour {tag.color.lower()} changed to {colour}")
        description = description or None
        if description != tag.description:
            changes.append("description changed" if description else "description removed")
        if not changes:
            return None
        tag.name, tag.name_folded, tag.color = name, fold_tag_name(name), colour
        tag.description = description
        session.flush()
        event = audit.record_tag_change(session, org_id, "tag.edited", name,
                                        f"In “{project.name}”: {'; '.join(changes)}.",
                                        user_id=user_id)
    return event


def _delete_tag_once(session: Session, org_id: str, project_id: str, tag_id: int,
                     user_id: int) -> OrgEvent | None:
    begin_write(session)
    project = org_project(session, org_id, project_id)
    tag = project_tag(session, project, tag_id) if project is not None else None
    if tag is None:
        session.rollback()
        return None
    removed = deleting.delete_tag(session, project.id, tag.id)
    session.expunge(tag)
    if removed == 0:
        detail = f"It was on no queries of “{project.name}”."
    else:
        queries = "1 query" if removed == 1 else f"{removed:,} queries"
        detail = f"It was removed from {queries} of “{project.name}”."
    event = audit.record_tag_change(session, org_id, "tag.deleted", tag.name, detail,
                                    user_id=user_id)
    session.commit()
    return event


def delete_tag(session: Session, org_id: str, project_id: str, tag_id: int,
               user_id: int) -> OrgEvent | None:
    """Delete the tag, take it off its queries and touch their `updatedAt`, all in one
    transaction. None when the tag is gone already. Busy: concurrent changes to the same
    queries kept deadlocking with this one (PostgreSQL), and nothing was changed."""
    try:
        return retried(session, lambda: _delete_tag_once(session, org_id, project_id, tag_id,
                                                         user_id))
    except OperationalError as error:  # rolled back by retried
        if not retryable(error):
            raise
        raise Busy("Other changes to this tag's queries were being saved at the same "
                   "moment, so nothing was deleted. Please try again.") from None
    except BaseException:
        session.rollback()
        raise


def _queries(number: int) -> str:
    return "1 query" if number == 1 else f"{number:,} queries"


def _merge_once(session: Session, org_id: str, project_id: str, tag_id: int, into_id: int,
                user_id: int) -> tuple[OrgEvent, str]:
    begin_write(session)
    project = org_project(session, org_id, project_id)
    tag = project_tag(session, project, tag_id) if project is not None else None
    into = project_tag(session, project, into_id) if project is not None else None
    if tag is None or into is None or tag.id == into.id:
        session.rollback()
        raise LookupError(tag_id if tag is None else into_id)
    operation = uuid.uuid4().hex
    name, into_name = tag.name, into.name
    changed = merging.merge(session, project.id, tag, into, operation)
    session.expunge(tag)
    event = audit.record_tag_change(session, org_id, "tag.merged", name,
                                    f"In “{project.name}”, into “{into_name}”: "
                                    f"{_queries(changed)} changed.", user_id=user_id)
    session.commit()
    return event, operation


def merge_tag(session: Session, org_id: str, project_id: str, tag_id: int, into_id: int,
              user_id: int) -> tuple[OrgEvent, str]:
    """Merge the tag into another of the project, in one transaction: the record of it and
    the operation that undoes it. LookupError: either tag is gone (or they are one). Busy:
    concurrent changes to the same queries kept deadlocking with it (PostgreSQL)."""
    try:
        return retried(session, lambda: _merge_once(session, org_id, project_id, tag_id,
                                                    into_id, user_id))
    except OperationalError as error:  # rolled back by retried
        if not retryable(error):
            raise
        raise Busy("Other changes to these tags' queries were being saved at the same "
                   "moment, so nothing was merged. Please try again.") from None
    except IntegrityError:  # PostgreSQL: the other tag was deleted meanwhile
        session.rollback()
        raise LookupError(into_id) from None
    except BaseException:
        session.rollback()
        raise


def pending_merge(session: Session, project: Project, operation: str):
    """The project's merge of that operation, while it can be undone; None else."""
    if len(operation) != 32 or not all(c in "0123456789abcdef" for c in operation):
        return None
    return merging.merged(session, project.id, operation)


def unmerge_tag(session: Session, org_id: str, project_id: str, operation: str,
                user_id: int) -> OrgEvent:
    """Undo a merge: the record of it. LookupError: no such merge (undone already, a week
    old, or another project's). Refused: a merge made since depends on it, or a tag of its
    name was made since."""
    with _writing(session):
        project = org_project(session, org_id, project_id)
        record = pending_merge(session, project, operation) if project is not None else None
        if record is None:
            raise LookupError(operation)
        try:
            tag, changed = merging.unmerge(session, project.id, record)
        except merging.LaterMerge as later:
            raise Refused(f"The merge cannot be undone yet: {later}") from None
        except merging.NameTaken as taken:
            raise Refused(f"The merge cannot be undone: the project has a tag named "
                          f"“{taken.name}” again. Rename or merge that tag first.") from None
        event = audit.record_tag_change(session, org_id, "tag.unmerged", tag.name,
                                        f"In “{project.name}”: {_queries(changed)} changed.",
                                        user_id=user_id)
    return event
