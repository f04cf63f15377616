"""Many pieces written at once (an import's, a merge's): on PostgreSQL they go by COPY and one
upsert, read back by one array of values; each piece must end as the bitmap it would be
written one by one — new pieces, pieces added to and taken from, emptied pieces kept empty,
and a second write in the same transaction."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import select

from service.engine import pieces
from service.engine.kinds import WORD
from service.engine.tables import pieces as pieces_table

CHUNK = 1 << pieces.CHUNK_SHIFT
WORDS = pieces.COPIED_FROM + 500  # past the count from which PostgreSQL copies


def stored(engine, project_id: str) -> dict[tuple, BitMap]:
    with engine.connect() as connection:
        rows = connection.execute(select(
            pieces_table.c.kind, pieces_table.c.value, pieces_table.c.chunk,
            pieces_table.c.size, pieces_table.c["keys"]).where(
                pieces_table.c.project_id == project_id, pieces_table.c.kind == WORD))
        found = {}
        for kind, value, chunk, size, keys in rows:
            bitmap = BitMap.deserialize(keys)
            assert size == len(bitmap)
            found[kind, value, chunk] = bitmap
        return found


def test_many_pieces_end_as_written_one_by_one(world):
    engine = world.app.extensions["tagdesk_engine"]
    expected: dict[tuple, BitMap] = {}

    def apply(changes: pieces.Changes, stamp: int, connection) -> None:
        pieces.write(connection, world.project_id, changes, stamp)
        for (kind, value), keys in changes.added.items():
            for chunk, part in pieces.chunked(keys).items():
                expected.setdefault((kind, value, chunk), BitMap()).update(part)
        for (kind, value), keys in changes.removed.items():
            for chunk, part in pieces.chunked(keys).items():
                expected.setdefault((kind, value, chunk), BitMap()).difference_update(part)

    first = pieces.Changes()
    for n in range(WORDS):
        first.add(WORD, f"word{n}", [n, n + 1, CHUNK + n])  # two chunks a word
    with engine.begin() as connection:
        apply(first, 1, connection)
    assert stored(engine, world.project_id) == expected
    assert len(expected) == 2 * WORDS

    # Added to, taken from, emptied, and new — twice in one transaction.
    second, third = pieces.Changes(), pieces.Changes()
    for n in range(WORDS):
        second.add(WORD, f"word{n}", [5 * n + 7])
        second.remove(WORD, f"word{n}", [n])
        if n % 3 == 0:
            second.remove(WORD, f"word{n}", [CHUNK + n])  # emptied: kept, empty
        third.add(WORD, f"other{n}", [n])
        third.remove(WORD, f"word{n}", [n + 1])
    with engine.begin() as connection:
        apply(second, 2, connection)
        apply(third, 3, connection)
    found = stored(engine, world.project_id)
    assert found == expected
    assert any(not bitmap for bitmap in found.values())
