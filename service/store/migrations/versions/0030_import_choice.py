"""The columns an import of a project last read (`projects.import_choice`: JSON of
service/import_sources.Choice, without the sheet): the settings area offers them again for the
next file. A nullable column: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"


def upgrade() -> None:
    op.add_column("projects", sa.Column("import_choice", sa.Text))


def downgrade() -> None:
    op.drop_column("projects", "import_choice")
