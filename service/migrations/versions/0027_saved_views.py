"""Saved views (an extension of the API, service/saved_views.py): named filters of a project's
queries, shared by everyone of its organization. A name is unique in its project as the folded
name says (weblib.tag_names, as tags compare). The filter and the sort are JSON text, as the
service validated them; each view is counted live, so nothing derived is stored.

Ids are never given twice (as 0024 made them for the other tables): AUTOINCREMENT on SQLite, a
sequence on PostgreSQL. The project's id is `uuid` on PostgreSQL, as every column that refers to
a project since 0022.

Revision ID: 0027
Revises: 0026
"""

import sqlalchemy as sa
from alembic import op

from service.migrations.helpers import serial_id

revision = "0027"
down_revision = "0026"


def upgrade() -> None:
    op.create_table(
        "saved_views",
        serial_id(),
        sa.Column("project_id", sa.String(36).with_variant(sa.Uuid(as_uuid=False), "postgresql"),
                  sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("name_folded", sa.String(100), nullable=False),
        sa.Column("filters", sa.Text, nullable=False),
        sa.Column("sort", sa.Text),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        # Also the index of a project's views.
        sa.UniqueConstraint("project_id", "name_folded"),
        sqlite_autoincrement=True,
    )


def downgrade() -> None:
    op.drop_table("saved_views")
