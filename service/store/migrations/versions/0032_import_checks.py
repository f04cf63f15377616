"""Checks of a file as jobs (service/imports/import_jobs.py): an upload on its Columns page
(`imports.state` 'choosing') is checked by a background job (state 'checking') whose columns
are `imports.choice` (JSON of service/import_sources.Choice and whether tags are created, for
the check and then the import), `imports.check_id` (the running check: a check started later,
or the import, replaces it) and `imports.checked` (JSON of the last check's result, which the
Columns page shows). Nullable columns: no table is rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0031"


def upgrade() -> None:
    op.add_column("imports", sa.Column("choice", sa.Text))
    op.add_column("imports", sa.Column("check_id", sa.String(36)))
    op.add_column("imports", sa.Column("checked", sa.Text))


def downgrade() -> None:
    op.drop_column("imports", "checked")
    op.drop_column("imports", "check_id")
    op.drop_column("imports", "choice")
