"""tags.name_folded compares names as people see them: after NFKC, without characters that
show nothing (zero-width spaces and joiners, bidi marks and controls, the byte order mark),
without regard to case. Until now it was the name case-folded only, so "brand" + U+200B beside
"Brand", or the composed and decomposed "café", were two tags.

Every tag's folded name is computed again. Where two tags of a project that were apart fold to
the same name now, the one that already holds that fold keeps it (else the older, lower id,
takes it) and the other keeps its old fold: both stay as they were, no tag or link changes
otherwise, and a new tag of that name is refused from now on. Such tags are named in the
migration's log.

The fold is written out here as this revision made it (weblib/tag_names.py is today's rule):
a released migration must do the same thing whenever it runs.
"""

import logging
import re
import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
TAGS = sa.table("tags", sa.column("id", sa.Integer), sa.column("project_id", sa.String),
                sa.column("name", sa.String), sa.column("name_folded", sa.String))
log = logging.getLogger("alembic.runtime.migration")


def _fold(name: str) -> str:
    visible = _INVISIBLE.sub("", unicodedata.normalize("NFKC", name))
    return unicodedata.normalize("NFKC", visible.casefold()).strip()


def _refold(fold) -> None:
    connection = op.get_bind()
    rows = connection.execute(sa.select(TAGS.c.id, TAGS.c.project_id, TAGS.c.name,
                                        TAGS.c.name_folded).order_by(TAGS.c.id)).all()
    taken = {(project_id, folded) for _id, project_id, _name, folded in rows}
    changes = []
    for tag_id, project_id, name, folded in rows:
        wanted = fold(name)[:200]
        if wanted == folded:
            continue
        if (project_id, wanted) in taken:
            log.warning("Tag %s (%r) keeps its own name: another tag of project %s reads "
                        "the same.", tag_id, name, project_id)
            continue
        taken.discard((project_id, folded))
        taken.add((project_id, wanted))
        changes.append({"tag_id": tag_id, "folded": wanted})
    # Old folds are freed before new ones are taken, so an exchange never meets the unique
    # constraint half-way: each changed row first takes a fold no name can have (names hold no
    # control character).
    statement = sa.update(TAGS).where(TAGS.c.id == sa.bindparam("tag_id"))
    if changes:
        connection.execute(statement.values(name_folded="\x01" + sa.cast(
            sa.bindparam("tag_id"), sa.String)), changes)
        connection.execute(statement.values(name_folded=sa.bindparam("folded")), changes)


def upgrade() -> None:
    _refold(_fold)


def downgrade() -> None:
    _refold(str.casefold)
