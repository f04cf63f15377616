"""Where each tag of a query came from, and rules applied to the queries already there (an
extension of the API: service/api/rules.py).

`query_tags.added_at`: when the link was made, where known (NULL: before this migration, or a
file's tags column); `query_tags.added_by`: who the caller said made it (the dashboard sends
the name a person gave at sign-in; NULL: nobody said). With `rule_id` (0028) they answer a
chip's "who or which rule added it, and when".

`rule_removals`: the links a rule had added that `rules/unapply` took away, kept under the
operation's id until `rules/restore` puts them back (an undo) or the operation is a week old.

Both added columns are cheap (no table is rewritten on either database); the index of the
links rules added holds those alone (partial), so it is small and quick to build.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import project_ref

revision = "0029"
down_revision = "0028"


def upgrade() -> None:
    op.add_column("query_tags", sa.Column("added_at", sa.DateTime))
    op.add_column("query_tags", sa.Column("added_by", sa.String(100)))
    op.create_index("ix_query_tags_rule", "query_tags", ["rule_id", "query_pk"],
                    sqlite_where=sa.text("rule_id IS NOT NULL"),
                    postgresql_where=sa.text("rule_id IS NOT NULL"))
    op.create_table(
        "rule_removals",
        sa.Column("operation", sa.String(36), primary_key=True),
        sa.Column("query_pk", sa.Integer, primary_key=True),
        sa.Column("tag_id", sa.Integer, primary_key=True),
        project_ref(),
        sa.Column("rule_id", sa.Integer, nullable=False),
        sa.Column("added_at", sa.DateTime),
        sa.Column("removed_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rule_removals")
    op.drop_index("ix_query_tags_rule", "query_tags")
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("query_tags", "added_by")
    op.drop_column("query_tags", "added_at")
