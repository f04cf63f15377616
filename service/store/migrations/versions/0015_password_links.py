"""One-time links with which a new administrator chooses their own password (settings →
People): only the SHA-256 of each link's token is kept.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import serial_id

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.create_table(
        "password_links",
        serial_id(),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
        sa.Column("used_at", sa.DateTime),
    )
    op.create_index("ix_password_links_user_id", "password_links", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_password_links_user_id", table_name="password_links")
    op.drop_table("password_links")
