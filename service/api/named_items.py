"""What a project's items that people name share (saved views, rules): names unique in the
project as tag names compare (their `name_folded`), one item by id or not found alike for
another project's, and one project's writers ordered so that names and limits hold."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.errors import Conflict, NotFound
from ..bodies.validation import MAX_ID
from ..store.db import begin_write
from ..store.models import Project


def lock_project(session: Session, project_id: str) -> str:
    """Take the write lock (SQLite) or the project's row (PostgreSQL) first: concurrent
    writers of one project's items are ordered. Returns the project's organization."""
    begin_write(session)
    return session.scalar(select(Project.org_id).where(Project.id == project_id)
                          .with_for_update())


class NamedItems:
    """The items of one model: `noun` names them in sentences ("saved view", "rule")."""

    def __init__(self, model, noun: str) -> None:
        self.model, self.noun = model, noun

    def taken(self, name: str) -> Conflict:
        return Conflict(f'A {self.noun} named "{name}" already exists in this project.')

    def named(self, session: Session, project_id: str, folded: str):
        model = self.model
        return session.scalar(select(model).where(model.project_id == project_id,
                                                  model.name_folded == folded))

    def make_room(self, session: Session, project_id: str, folded: str, most: int,
                  full: str) -> None:
        """Before a new item (the project locked): its name free, and fewer than `most`
        items in the project, else a 409 (`full` says so)."""
        existing = self.named(session, project_id, folded)
        if existing is not None:
            session.rollback()
            raise self.taken(existing.name)
        model = self.model
        count = session.scalar(select(func.count()).select_from(model).where(
            model.project_id == project_id))
        if count >= most:
            session.rollback()
            raise Conflict(full)

    def rename(self, session: Session, item, name: str) -> None:
        """Give an item (the project locked) a new name: one another item of the project has
        already (as tag names compare) is a 409."""
        folded = fold_tag_name(name)
        existing = self.named(session, item.project_id, folded)
        if existing is not None and existing.id != item.id:
            session.rollback()
            raise self.taken(existing.name)
        item.name, item.name_folded = name, folded

    def one(self, session: Session, project_id: str, item_id: int):
        """The project's item of that id; another project's, or none, is not found alike."""
        model, item = self.model, None
        if 1 <= item_id <= MAX_ID:
            item = session.scalar(select(model).where(model.id == item_id,
                                                      model.project_id == project_id))
        if item is None:
            session.rollback()  # the write lock, taken first, is let go at once
            raise NotFound(f"{self.noun[0].upper()}{self.noun[1:]} not found.")
        return item

    def committed(self, session: Session, item) -> None:
        """Commit; a name another writer took meanwhile (PostgreSQL's unique key) is a 409."""
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            existing = self.named(session, item.project_id, item.name_folded)
            raise self.taken(existing.name if existing is not None else item.name) from None
