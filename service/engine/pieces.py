"""The bitmaps as stored: pieces of 2^18 row keys (service/engine/tables.py) of a kind
(service/engine/kinds.py) and value, read and written with the same statements on SQLite and
PostgreSQL."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pyroaring import BitMap
from sqlalchemy import ARRAY, Text, any_, bindparam, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from .kinds import LANGUAGE
from .tables import pieces

CHUNK_SHIFT = 18
# Values named, or pieces written (seven parameters each), in one statement (SQLite allows
# 32,766 parameters).
NAMED_AT_ONCE = 3000

Piece = tuple[int, str, int]  # kind, value, chunk
Bitmap = tuple[int, str]  # kind, value


def chunked(keys: BitMap) -> dict[int, BitMap]:
    """The keys by chunk."""
    found: dict[int, BitMap] = {}
    if not keys:
        return found
    low, high = keys.min() >> CHUNK_SHIFT, keys.max() >> CHUNK_SHIFT
    if low == high:
        return {low: keys}
    for chunk in range(low, high + 1):
        # The keys from the chunk's first to its last, by their ranks.
        first = keys.rank((chunk << CHUNK_SHIFT) - 1) if chunk else 0
        part = keys[first:keys.rank(((chunk + 1) << CHUNK_SHIFT) - 1)]
        if part:
            found[chunk] = part
    return found


class Changes:
    """Keys to add to and remove from bitmaps, gathered over a write, then written at once."""

    def __init__(self) -> None:
        self.added: dict[Bitmap, BitMap] = defaultdict(BitMap)
        self.removed: dict[Bitmap, BitMap] = defaultdict(BitMap)

    def add(self, kind: int, value: str, keys: Iterable[int]) -> None:
        if isinstance(keys, BitMap):
            self.added[kind, value] |= keys
        else:
            self.added[kind, value].update(keys)

    def remove(self, kind: int, value: str, keys: Iterable[int]) -> None:
        self.removed[kind, value].update(keys)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed)

    def by_piece(self) -> tuple[dict[Piece, BitMap], dict[Piece, BitMap]]:
        def split(bitmaps: dict[Bitmap, BitMap]) -> dict[Piece, BitMap]:
            return {(kind, value, chunk): part for (kind, value), keys in bitmaps.items()
                    for chunk, part in chunked(keys).items()}
        return split(self.added), split(self.removed)


def languages(connection: Connection, project_id: str) -> list[str]:
    """The languages the project's queries have, by their bitmaps (the defaults an import
    detects each query's language among)."""
    return sorted(connection.execute(
        select(pieces.c.value).where(pieces.c.project_id == project_id,
                                     pieces.c.kind == LANGUAGE, pieces.c.size > 0)
        .distinct()).scalars())


def _named(project_id: str, kind: int, chunk: int, postgres: bool):
    """The pieces of these values (bound as `values`) of one kind and chunk. A list of
    values, not of (kind, value, chunk) rows: PostgreSQL plans a list of rows in time
    quadratic in its length (3,000 rows: 2-7 s of planning for 50 ms of work), a list of
    values in linear time. On PostgreSQL the list is one array parameter: the statement's
    text stays short whatever the number of values (a parameter a value cost the client
    ~50 µs each to render and parse)."""
    if postgres:
        named = pieces.c.value == any_(bindparam("values", type_=ARRAY(Text)))
    else:
        named = pieces.c.value.in_(bindparam("values", expanding=True))
    statement = select(pieces.c.value, pieces.c["keys"]).where(
        pieces.c.project_id == project_id, pieces.c.kind == kind, pieces.c.chunk == chunk,
        named)
    return statement.with_for_update() if postgres else statement


def _values_by_kind_and_chunk(touched: list[Piece]) -> dict[tuple[int, int], list[str]]:
    """The pieces' values by kind and chunk, in the pieces' order."""
    found: dict[tuple[int, int], list[str]] = defaultdict(list)
    for kind, value, chunk in touched:
        found[kind, chunk].append(value)
    return found


def write(connection: Connection, project_id: str, changes: Changes, stamp: int) -> None:
    """Apply the changes piece by piece: each piece touched is read, changed and written back
    with the write's stamp (an emptied piece is kept, empty, so that a process holding it
    learns it is empty)."""
    added, removed = changes.by_piece()
    touched = sorted(set(added) | set(removed))
    if not touched:
        return
    postgres = connection.dialect.name == "postgresql"
    current: dict[Piece, BitMap] = {}
    for (kind, chunk), values in _values_by_kind_and_chunk(touched).items():
        statement = _named(project_id, kind, chunk, postgres)
        at_once = len(values) if postgres else NAMED_AT_ONCE
        for start in range(0, len(values), at_once):
            for value, keys in connection.execute(
                    statement, {"values": values[start:start + at_once]}):
                current[kind, value, chunk] = BitMap.deserialize(keys)
    rows = []
    for piece in touched:
        keys = current.get(piece, BitMap())
        if piece in added:
            keys |= added[piece]
        if piece in removed:
            keys -= removed[piece]
        keys.run_optimize()
        kind, value, chunk = piece
        rows.append({"project_id": project_id, "kind": kind, "value": value, "chunk": chunk,
                     "stamp": stamp, "size": len(keys), "keys": keys.serialize()})
    if postgres and len(rows) >= COPIED_FROM:
        _upsert_copied(connection, project_id, stamp, rows)
        return
    upsert = (postgresql if postgres else sqlite).insert(pieces)
    upsert = upsert.on_conflict_do_update(
        index_elements=["project_id", "kind", "value", "chunk"],
        set_={"stamp": upsert.excluded.stamp, "size": upsert.excluded.size,
              "keys": upsert.excluded["keys"]})
    for start in range(0, len(rows), NAMED_AT_ONCE):
        connection.execute(upsert, rows[start:start + NAMED_AT_ONCE])


# The pieces written at once (an import's) from which PostgreSQL is sent them by COPY into a
# table of the session's own, then upserted from it in one statement: 200,000 new pieces took
# 18 s as rows of VALUES, 5 s so (and their reads 6 s as lists of parameters, 0.5 s as one
# array: 30 s → 9 s for the whole write, on a busy machine).
COPIED_FROM = 2000


def _upsert_copied(connection: Connection, project_id: str, stamp: int,
                   rows: list[dict]) -> None:
    # ON COMMIT DELETE ROWS: the table outlives the transaction (made once per session), its
    # rows do not; TRUNCATE for a second write in the same transaction. Its pieces are not
    # compressed, as engine_pieces' are not (migration 0045): a value compressed here would
    # be carried into engine_pieces compressed.
    connection.execute(text(
        "DO $$ BEGIN IF to_regclass('pg_temp.tagdesk_written_pieces') IS NULL THEN"
        " CREATE TEMPORARY TABLE tagdesk_written_pieces (kind smallint, value text,"
        " chunk integer, size integer, keys bytea) ON COMMIT DELETE ROWS;"
        " ALTER TABLE tagdesk_written_pieces ALTER COLUMN keys SET STORAGE EXTERNAL;"
        " END IF; END $$"))
    connection.execute(text("TRUNCATE tagdesk_written_pieces"))
    driver = connection.connection.driver_connection
    with driver.cursor() as cursor, cursor.copy(
            "COPY tagdesk_written_pieces (kind, value, chunk, size, keys)"
            " FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(["int2", "text", "int4", "int4", "bytea"])
        for row in rows:
            copy.write_row((row["kind"], row["value"], row["chunk"], row["size"], row["keys"]))
    connection.execute(text(
        "INSERT INTO engine_pieces (project_id, kind, value, chunk, stamp, size, keys)"
        " SELECT :project_id, kind, value, chunk, :stamp, size, keys"
        " FROM tagdesk_written_pieces"
        " ON CONFLICT (project_id, kind, value, chunk) DO UPDATE"
        " SET stamp = excluded.stamp, size = excluded.size, keys = excluded.keys"),
        {"project_id": project_id, "stamp": stamp})


def read_union(connection: Connection, project_id: str, kind: int,
               values: Iterable[str]) -> BitMap:
    """The union of the bitmaps of these values of one kind."""
    values = sorted(set(values))
    found = BitMap()
    for start in range(0, len(values), NAMED_AT_ONCE):
        rows = connection.execute(
            select(pieces.c["keys"]).where(
                pieces.c.project_id == project_id, pieces.c.kind == kind,
                pieces.c.value.in_(values[start:start + NAMED_AT_ONCE]), pieces.c.size > 0))
        found = BitMap.union(found, *(BitMap.deserialize(keys) for (keys,) in rows))
    return found
