"""A tag's description, and tags merged into others kept for their undo (an extension of the
API: tags/update, tags/merge, tags/unmerge; service/engine/merging.py).

`tags.description`: what the tag is for, up to 300 characters (NULL: none).

`tag_merges`: a merged tag's row as it was, the tag it went into and the rules and saved
views the merge changed, under the operation's id; `tag_merge_links`: the merged tag's links
as they were and the links to the other tag the merge made. Undo puts the tag back under its
own id (ids are never given to another tag) with exactly those links, and takes away the
ones it made.

A nullable column and two new tables: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import project_ref

revision = "0031"
down_revision = "0030"


def upgrade() -> None:
    op.add_column("tags", sa.Column("description", sa.String(300)))
    op.create_table(
        "tag_merges",
        sa.Column("operation", sa.String(36), primary_key=True),
        project_ref(),
        sa.Column("tag_id", sa.Integer, nullable=False),
        sa.Column("into_id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("name_folded", sa.String(200), nullable=False),
        sa.Column("color", sa.String(7), nullable=False),
        sa.Column("description", sa.String(300)),
        sa.Column("named_in", sa.Text, nullable=False),
        sa.Column("merged_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "tag_merge_links",
        sa.Column("operation", sa.String(36),
                  sa.ForeignKey("tag_merges.operation", ondelete="CASCADE"), primary_key=True),
        sa.Column("made", sa.Boolean, primary_key=True),
        sa.Column("query_pk", sa.Integer, primary_key=True),
        sa.Column("from_rule", sa.Integer),
        sa.Column("linked_at", sa.DateTime),
        sa.Column("linked_by", sa.String(100)),
    )


def downgrade() -> None:
    op.drop_table("tag_merge_links")
    op.drop_table("tag_merges")
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("tags", "description")
