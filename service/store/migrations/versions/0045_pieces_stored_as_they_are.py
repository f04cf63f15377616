"""PostgreSQL: the bitmaps' pieces (`engine_pieces.keys`) stored as they are, not compressed
(STORAGE EXTERNAL: out of line when large, never compressed).

A piece is a serialized roaring bitmap, compressed already: PostgreSQL's own compression saved
under 1 % of the table (133 against 134 MB after an import of 300,000 queries with numbers),
and it was tried on every piece written, twice for an import's (in its table of written
pieces, then in engine_pieces). An import writes its pieces again at every range of rows (a
number's bit slices are 32 KB each). 1M rows with seven numbers, three alternating pairs:
90.0-94.2 s against 90.9-98.3 s before (1-4 % faster).
Pieces already stored stay as they are until they are written again; only the
catalogue changes (a moment's lock). SQLite stores its values as they come: nothing changes
there.
"""

from alembic import op

revision = "0045"
down_revision = "0044"


def _storage(storage: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE engine_pieces ALTER COLUMN keys SET STORAGE {storage}")


def upgrade() -> None:
    _storage("EXTERNAL")


def downgrade() -> None:
    _storage("EXTENDED")
