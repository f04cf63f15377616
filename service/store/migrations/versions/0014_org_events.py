"""The settings activity log covers every change: projects, tags, imports and people join
the key events, and each event keeps the email of who made it (people can be removed).
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import create_org_table

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    create_org_table(
        "org_events",
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("actor_email", sa.String(320)),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("subject", sa.String(300), nullable=False, server_default=""),
        sa.Column("detail", sa.String(500), nullable=False, server_default=""),
        sa.Column("at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_org_events_org_at", "org_events", ["org_id", "at", "id"])
    with op.batch_alter_table("key_events") as batch:
        batch.add_column(sa.Column("actor_email", sa.String(320)))
    op.execute("UPDATE key_events SET actor_email = "
               "(SELECT email FROM users WHERE users.id = key_events.user_id) "
               "WHERE user_id IS NOT NULL")


def downgrade() -> None:
    with op.batch_alter_table("key_events") as batch:
        batch.drop_column("actor_email")
    op.drop_index("ix_org_events_org_at", table_name="org_events")
    op.drop_table("org_events")
