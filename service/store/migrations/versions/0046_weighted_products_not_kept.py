"""The weighted numbers' products (position × impressions, CPC × volume, difficulty × volume)
are no longer kept as bit slices of their own (kind 6, values "<name>*<weight>" and
"<name>*<weight>:<bit>"). The facets multiply a query's two numbers as they add them up
(service/engine/number_sums.py), by place among the keys where a project's keys are spread
wide. The products were 47 % of the numbers' pieces (1M queries with every number: 13.7 of
29.3 MiB), and every range of an import wrote them again.

Downgrade makes them again from the queries' numbers, as the writer made them.
"""

from bisect import bisect_left

import sqlalchemy as sa
from alembic import op
from pyroaring import BitMap

revision = "0046"
down_revision = "0045"

NUMBER = 6  # the kind of the numbers' bitmaps (service/engine/kinds.py)
CHUNK_SHIFT = 18  # a piece's keys: one chunk of 2^18 (service/engine/pieces.py)
PRODUCTS = (("position", "impressions"), ("cpc", "volume"), ("difficulty", "volume"))


def upgrade() -> None:
    op.execute(f"DELETE FROM engine_pieces WHERE kind = {NUMBER} AND value LIKE '%*%'")


def downgrade() -> None:
    bind = op.get_bind()
    pieces = sa.table("engine_pieces", sa.column("project_id"), sa.column("kind"),
                      sa.column("value"), sa.column("chunk"), sa.column("stamp"),
                      sa.column("size"), sa.column("keys", sa.LargeBinary))
    for project_id, stamp in bind.execute(sa.text("SELECT id, engine_stamp FROM projects")):
        rows = []
        for name, weight in PRODUCTS:
            product = f"{name}*{weight}"
            found: dict[str, list[int]] = {}
            for key, value, by in bind.execute(sa.text(
                    f"SELECT pk, {name}, {weight} FROM queries WHERE project_id = :project "
                    f"AND {name} IS NOT NULL AND {weight} IS NOT NULL ORDER BY pk"),
                    {"project": project_id}):
                found.setdefault(product, []).append(key)
                multiplied = value * by
                for bit in range(multiplied.bit_length()):
                    if multiplied >> bit & 1:
                        found.setdefault(f"{product}:{bit}", []).append(key)
            for value, keys in found.items():
                for chunk, part in _chunked(keys).items():
                    part.run_optimize()
                    rows.append({"project_id": project_id, "kind": NUMBER, "value": value,
                                 "chunk": chunk, "stamp": stamp, "size": len(part),
                                 "keys": part.serialize()})
        if rows:
            bind.execute(pieces.insert(), rows)


def _chunked(keys: list[int]) -> dict[int, BitMap]:
    """Keys in order, by chunk."""
    found: dict[int, BitMap] = {}
    start = 0
    while start < len(keys):
        chunk = keys[start] >> CHUNK_SHIFT
        end = bisect_left(keys, (chunk + 1) << CHUNK_SHIFT, start)
        found[chunk] = BitMap(keys[start:end])
        start = end
    return found
