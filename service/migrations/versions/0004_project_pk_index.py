"""An index from a project to its internal row keys (the range its queries occupy).

Revision ID: 0004
Revises: 0003
"""

from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_index("ix_queries_project_pk", "queries", ["project_id", "pk"])


def downgrade() -> None:
    op.drop_index("ix_queries_project_pk", "queries")
