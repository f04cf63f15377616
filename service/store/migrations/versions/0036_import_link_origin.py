"""Which import a tag of a query came from: `query_tags.imported_from`, the name of the file
whose tags column named it (with `added_at`, the import's time; NULL: another source, or a
link made before this migration). A merge keeps it with the links it takes
(`tag_merge_links.linked_from`), so that its undo gives it back.

Nullable columns without a default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0036"
down_revision = "0035"


def upgrade() -> None:
    op.add_column("query_tags", sa.Column("imported_from", sa.String(255)))
    op.add_column("tag_merge_links", sa.Column("linked_from", sa.String(255)))


def downgrade() -> None:
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("tag_merge_links", "linked_from")
    op.drop_column("query_tags", "imported_from")
