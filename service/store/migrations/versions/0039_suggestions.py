"""Suggested tags: per project the last model learned and its status (`suggestion_models`),
each query's suggested tags with their confidence (`query_suggestions`), the suggestions
people rejected (`suggestion_rejections`), and whether a link is an accepted suggestion
(`query_tags.suggested`, nullable without a default), and how many links the engine's writes
made or took away (`projects.links_written`, a constant default: no table is rewritten).
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import project_ref

revision = "0039"
down_revision = "0038"


def upgrade() -> None:
    op.add_column("query_tags", sa.Column("suggested", sa.Boolean))
    op.add_column("projects", sa.Column("links_written", sa.Integer, nullable=False,
                                        server_default="0"))
    op.create_table(
        "suggestion_models",
        sa.Column("project_id", project_ref().type,
                  sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("model", sa.LargeBinary),
        sa.Column("learned_at", sa.DateTime),
        sa.Column("learned_from", sa.Integer, nullable=False, server_default="0"),
        sa.Column("held_back_right", sa.Float),
        sa.Column("default_confidence", sa.Float),
        sa.Column("links_at_learning", sa.Integer, nullable=False, server_default="0"),
        sa.Column("written_then", sa.Integer, nullable=False, server_default="0"),
        sa.Column("scored_through", sa.Integer, nullable=False, server_default="0"),
        sa.Column("learning_owner", sa.String(200)),
        sa.Column("learning_since", sa.DateTime),
        sa.Column("asked_at", sa.DateTime),
    )
    for name, when, by in (("query_suggestions", None, None),
                           ("suggestion_rejections", "rejected_at", "rejected_by")):
        columns = [
            sa.Column("query_pk", sa.Integer, sa.ForeignKey("queries.pk", ondelete="CASCADE"),
                      primary_key=True),
            sa.Column("tag_id", sa.Integer, sa.ForeignKey("tags.id", ondelete="CASCADE"),
                      primary_key=True),
            project_ref(),
        ]
        if when is None:
            columns.append(sa.Column("confidence", sa.Float, nullable=False))
        else:
            columns += [sa.Column(when, sa.DateTime, nullable=False),
                        sa.Column(by, sa.String(100))]
        op.create_table(name, *columns)
    op.create_index("ix_query_suggestions_tag", "query_suggestions",
                    ["project_id", "tag_id", "confidence"])
    op.create_index("ix_suggestion_rejections_project", "suggestion_rejections",
                    ["project_id", "tag_id"])


def downgrade() -> None:
    op.drop_table("suggestion_rejections")
    op.drop_table("query_suggestions")
    op.drop_table("suggestion_models")
    op.drop_column("projects", "links_written")
    op.drop_column("query_tags", "suggested")
