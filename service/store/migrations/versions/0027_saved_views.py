"""Saved views (an extension of the API, service/api/saved_views.py): named filters of a project's
queries, shared by everyone of its organization. A name is unique in its project as the folded
name says (weblib.tag_names, as tags compare). The filter and the sort are JSON text, as the
service validated them; each view is counted live, so nothing derived is stored.

Ids are never given twice (as 0024 made them for the other tables): AUTOINCREMENT on SQLite, a
sequence on PostgreSQL. The project's id is `uuid` on PostgreSQL, as every column that refers to
a project since 0022.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import create_named_items

revision = "0027"
down_revision = "0026"


def upgrade() -> None:
    create_named_items(
        "saved_views",
        sa.Column("filters", sa.Text, nullable=False),
        sa.Column("sort", sa.Text),
    )


def downgrade() -> None:
    op.drop_table("saved_views")
