"""Whether a link a merge took was a suggestion someone accepted (`query_tags.suggested`,
migration 0039): kept with the links it takes (`tag_merge_links.linked_suggested`), so that
its undo gives it back as the merge's own link kept it.

A nullable column without a default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0042"
down_revision = "0041"


def upgrade() -> None:
    op.add_column("tag_merge_links", sa.Column("linked_suggested", sa.Boolean))


def downgrade() -> None:
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("tag_merge_links", "linked_suggested")
