"""Organization settings: people who sign in to them, and the record of key actions.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import create_org_table

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    create_org_table(
        "users",
        sa.Column("email", sa.String(320), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_users_org_id", "users", ["org_id"])
    create_org_table(
        "key_events",
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id")),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("key_id", sa.Integer, sa.ForeignKey("api_keys.id", ondelete="SET NULL")),
        sa.Column("key_prefix", sa.String(40), nullable=False),
        sa.Column("key_last_four", sa.String(4), nullable=False),
        sa.Column("key_name", sa.String(200), nullable=False),
        sa.Column("form_token", sa.String(64), unique=True),
        sa.Column("at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_key_events_org_at", "key_events", ["org_id", "at", "id"])


def downgrade() -> None:
    op.drop_table("key_events")
    op.drop_table("users")
