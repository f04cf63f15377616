"""Import jobs of the settings area (service/imports/import_jobs.py): each CSV file imported into a
project, with its state, progress, counts and heartbeat, and the rows it rejected with their
line, reason and fields.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import org_id, project_id

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.create_table(
        "imports",
        sa.Column("id", sa.String(36), primary_key=True),
        org_id(),
        project_id(nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL")),
        sa.Column("actor_email", sa.String(320)),
        sa.Column("file_name", sa.String(255), nullable=False),
        sa.Column("file_size", sa.BigInteger, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("bytes_read", sa.BigInteger, nullable=False),
        sa.Column("last_line", sa.Integer, nullable=False),
        sa.Column("rows", sa.Integer, nullable=False),
        sa.Column("added", sa.Integer, nullable=False),
        sa.Column("present", sa.Integer, nullable=False),
        sa.Column("rejected", sa.Integer, nullable=False),
        sa.Column("owner", sa.String(200)),
        sa.Column("heartbeat_at", sa.DateTime),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
    )
    op.create_index("ix_imports_project_created", "imports", ["project_id", "created_at"])
    op.create_table(
        "import_rejections",
        sa.Column("import_id", sa.String(36),
                  sa.ForeignKey("imports.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("line", sa.Integer, primary_key=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("language", sa.Text, nullable=False),
        sa.Column("country", sa.Text, nullable=False),
        sa.Column("tags", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("import_rejections")
    op.drop_index("ix_imports_project_created", table_name="imports")
    op.drop_table("imports")
