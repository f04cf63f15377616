"""The blank lines an import passed over (`imports.blank_lines`): its report says them once
("2 blank lines passed over") instead of counting them as rejected rows. A column with a
default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0035"
down_revision = "0034"


def upgrade() -> None:
    op.add_column("imports", sa.Column("blank_lines", sa.Integer, nullable=False,
                                       server_default="0"))


def downgrade() -> None:
    op.drop_column("imports", "blank_lines")
