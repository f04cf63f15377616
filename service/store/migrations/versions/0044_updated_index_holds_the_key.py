"""PostgreSQL: the update-time index in the default order, holding each query's key:
`(project_id, updated_at DESC, id) INCLUDE (pk)`.

A filtered page in the default order (updatedAt newest first, then id) walks this index and
keeps the keys its filter's bitmap holds (service/engine/listing.py). Without the key in the
index, every row walked was read from the table as well: at ten million queries a walk of
16,384 rows read 7,301 table pages (56 ms); from the index alone, 5 ms. Rows whose page is not
yet marked all-visible are still read from the table (VACUUM marks them: after a large import
the service runs it, schema.analyze, and autovacuum does otherwise). Walked backwards, the
ascending index gave `id DESC` among equal times, and each group of equal `updated_at` (an
import's rows share one) was sorted again: 20 of a 28,672-row walk's 29 ms, and 44 ms for a
first page whose newest group had 5,000 rows. In the default order it is read as it stands, as
SQLite's is since migration 0007; oldest-first orders walk it backwards and sort ties.

SQLite's indexes hold the row's key already: nothing changes there. The index is built again
in place (about 13 s at ten million queries).
"""

from alembic import op

revision = "0044"
down_revision = "0043"

COLUMNS = "project_id, updated_at{}, id"


def _rebuild(direction: str, include: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS ix_queries_updated")
    op.execute(f"CREATE INDEX ix_queries_updated ON queries ({COLUMNS.format(direction)})"
               f"{include}")


def upgrade() -> None:
    _rebuild(" DESC", " INCLUDE (pk)")


def downgrade() -> None:
    _rebuild("", "")
