"""An index from a project to its internal row keys (the range its queries occupy).
"""

from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_index("ix_queries_project_pk", "queries", ["project_id", "pk"])


def downgrade() -> None:
    op.drop_index("ix_queries_project_pk", "queries")
