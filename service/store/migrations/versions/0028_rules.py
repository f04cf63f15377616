"""Rules (an extension of the API, service/api/rules.py): tags that apply themselves to the queries
that enter a project and match a condition. A name is unique in its project as the folded name
says (weblib.tag_names, as tags compare); the condition and the tag ids are JSON text, as the
service validated them.

`query_tags.rule_id`: the rule that added a link on entry (NULL: a person, a file or the API
did). No foreign key: rule ids are never given twice, so a deleted rule's id names no other.
`imports.tagged_by_rules`: how many of an import's queries rules tagged, for its report.

Ids are never given twice (as 0024 made them): AUTOINCREMENT on SQLite, a sequence on
PostgreSQL. The project's id is `uuid` on PostgreSQL, as every column that refers to a project
since 0022. Both added columns are cheap: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import create_named_items

revision = "0028"
down_revision = "0027"


def upgrade() -> None:
    create_named_items(
        "rules",
        sa.Column("condition", sa.Text, nullable=False),
        sa.Column("tag_ids", sa.Text, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("paused_reason", sa.Text),
    )
    op.add_column("query_tags", sa.Column("rule_id", sa.Integer))
    op.add_column("imports", sa.Column("tagged_by_rules", sa.Integer, nullable=False,
                                       server_default="0"))


def downgrade() -> None:
    # SQLite (3.35+) drops a column in place when nothing names it, as here.
    op.drop_column("imports", "tagged_by_rules")
    op.drop_column("query_tags", "rule_id")
    op.drop_table("rules")
