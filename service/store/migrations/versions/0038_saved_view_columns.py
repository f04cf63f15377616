"""Which numbers a saved view shows as columns (`saved_views.columns`: a JSON list of
numbers' names, `[]` for none; NULL: the dashboard's default).

A nullable column without a default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0038"
down_revision = "0037"


def upgrade() -> None:
    op.add_column("saved_views", sa.Column("columns", sa.Text))


def downgrade() -> None:
    op.drop_column("saved_views", "columns")
