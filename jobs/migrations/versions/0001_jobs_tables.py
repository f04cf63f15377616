"""The jobs tables as `metadata.create_all` made them before the jobs database had
migrations: edits, edit_changes, project_locks, lock_waiters and their indexes.
"""

import sqlalchemy as sa
from alembic import op

revision = "jobs_0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "edits",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("project_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("scope_filter", sa.JSON, nullable=True),
        sa.Column("scope_words", sa.Text, nullable=False),
        sa.Column("delta", sa.JSON, nullable=True),
        sa.Column("tag_names", sa.JSON, nullable=True),
        sa.Column("sort", sa.JSON, nullable=True),
        sa.Column("undo_of", sa.String(32), nullable=True),
        sa.Column("undone_by", sa.String(32), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("message", sa.Text, nullable=True),
        sa.Column("expected", sa.Integer, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("changed", sa.Integer, nullable=False),
        sa.Column("untouched", sa.Integer, nullable=False),
        sa.Column("cursor_k", sa.Integer, nullable=False),
        sa.Column("cursor_last", sa.String(255), nullable=True),
        sa.Column("batches", sa.Integer, nullable=False),
        sa.Column("pending_batch", sa.Integer, nullable=True),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("session_ref", sa.String(255), nullable=True),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("masked_key", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float, nullable=True),
        sa.Column("run_started_at", sa.Float, nullable=True),
        sa.Column("run_processed_start", sa.Integer, nullable=False),
        sa.Column("heartbeat_at", sa.Float, nullable=True),
        sa.Column("finished_at", sa.Float, nullable=True),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("rate_limited", sa.Integer, nullable=False),
        sa.Column("file", sa.String(500), nullable=True),
    )
    op.create_index("edits_project_created", "edits", ["project_id", "created_at"])
    op.create_index("edits_state", "edits", ["state"])
    op.create_table(
        "edit_changes",
        sa.Column("edit_id", sa.String(32), primary_key=True),
        sa.Column("query_id", sa.String(255), primary_key=True),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("language", sa.String(64), nullable=False),
        sa.Column("country", sa.String(64), nullable=False),
        sa.Column("added", sa.String(2000), nullable=False),
        sa.Column("removed", sa.String(2000), nullable=False),
        sa.Column("batch", sa.Integer, nullable=False),
    )
    op.create_index("edit_changes_batch", "edit_changes", ["edit_id", "batch"])
    op.create_table(
        "project_locks",
        sa.Column("project_id", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
    )
    op.create_table(
        "lock_waiters",
        sa.Column("project_id", sa.String(64), primary_key=True),
        sa.Column("waiter", sa.String(64), primary_key=True),
        sa.Column("since", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lock_waiters")
    op.drop_table("project_locks")
    op.drop_index("edit_changes_batch", table_name="edit_changes")
    op.drop_table("edit_changes")
    op.drop_index("edits_state", table_name="edits")
    op.drop_index("edits_project_created", table_name="edits")
    op.drop_table("edits")
