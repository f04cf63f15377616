"""Tags held to the end of a write transaction: a tag found here stays until the transaction
ends, so a link written to it later in the transaction never meets it gone (rules/apply and
restore, service/engine/rule_links.py, against a tag's deletion or merge).

PostgreSQL: the tag's row FOR KEY SHARE, which a deletion or a merge (the row FOR UPDATE)
waits for; a hold that waits for one of them finds the tag gone once it commits. SQLite: the
write lock the transaction already holds (service.store.db.begin_write) keeps every other
writer out.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..store.models import Tag


def hold_tags(session: Session, project_id: str, tag_ids: Iterable[int]) -> set[int]:
    """Which of `tag_ids` are tags of the project now, each held until the transaction ends."""
    wanted = sorted(set(tag_ids))
    if not wanted:
        return set()
    statement = select(Tag.id).where(Tag.project_id == project_id,
                                     Tag.id.in_(wanted)).order_by(Tag.id)
    if session.get_bind().dialect.name == "postgresql":
        statement = statement.with_for_update(read=True, key_share=True)  # FOR KEY SHARE
    return set(session.scalars(statement))
