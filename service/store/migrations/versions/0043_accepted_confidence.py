"""The confidence a suggestion had when someone accepted it (`query_tags.suggested_confidence`):
when that link is taken away again (an Undo, a tag removed by hand), its suggestion comes back
at that confidence (service/engine/suggestion_links.py), as it stood before the accept.

A nullable column without a default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0043"
down_revision = "0042"


def upgrade() -> None:
    op.add_column("query_tags", sa.Column("suggested_confidence", sa.Float))


def downgrade() -> None:
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("query_tags", "suggested_confidence")
