"""The numbers a query may carry (service/engine/numbers.py): one nullable column each on
`queries` — counts as they are, the others in millionths — and the currency of a project's
CPC (`projects.currency`, an ISO 4217 code, or NULL: not said).

Nullable columns without a default: no table is rewritten on either database. No project has a
number yet, so its bitmaps (the kind `number`, service/engine/kinds.py) need no rebuild.
"""

import sqlalchemy as sa
from alembic import op

revision = "0037"
down_revision = "0036"

NUMBERS = ("clicks", "impressions", "ctr", "position", "volume", "cpc", "difficulty")


def upgrade() -> None:
    for name in NUMBERS:
        op.add_column("queries", sa.Column(name, sa.BigInteger))
    op.add_column("projects", sa.Column("currency", sa.String(3)))


def downgrade() -> None:
    op.drop_column("projects", "currency")
    for name in reversed(NUMBERS):
        op.drop_column("queries", name)
