"""The number cells of an import's rejected rows (`import_rejections.numbers`: a JSON object
of the file's number columns, by number, each cell as the import read it; NULL: the file had
none), so that the file of rejected rows keeps them.

A nullable column without a default: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0040"
down_revision = "0039"


def upgrade() -> None:
    op.add_column("import_rejections", sa.Column("numbers", sa.Text))


def downgrade() -> None:
    op.drop_column("import_rejections", "numbers")
