"""A change made through the API names, in the activity log, the key that made it (its name
and ends, as kept for key events) and the person its caller said made it (X-Tagdesk-Actor):
until now such a change showed as the command line's. Nullable columns: no table is
rewritten on either database.
"""

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"

COLUMNS = (("key_prefix", 40), ("key_last_four", 4), ("key_name", 200), ("actor_name", 100))


def upgrade() -> None:
    for name, length in COLUMNS:
        op.add_column("org_events", sa.Column(name, sa.String(length)))


def downgrade() -> None:
    # Dropped in place (SQLite 3.35+ too): a batch copy would write the table again without
    # its AUTOINCREMENT, and a later upgrade would not find the table it left.
    for name, _length in reversed(COLUMNS):
        op.drop_column("org_events", name)
