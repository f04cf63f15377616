"""The numbers of queries a project already has, replaced by those of new rows of the same
key (an import's "Update the numbers of queries already present"): a number a row does not
name stays as it was. Each query whose numbers changed is written once, and its keys move
between the numbers' bitmaps in the same transaction (Writer.numbers_changed)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pyroaring import BitMap
from sqlalchemy import bindparam, update
from sqlalchemy.engine import Connection

from . import entry_rules
from .numbers import NAMES
from .rows import QueryRow
from .tables import Query
from .writer import Writer

WIDTH = len(NAMES)
# The numbers' columns as SQL names them, for the bulk load's statements.
COLUMN_LIST = ", ".join(NAMES)
# A staged row carries a number (alias r).
CARRIES_ONE = "(" + " OR ".join(f"r.{name} IS NOT NULL" for name in NAMES) + ")"

_UPDATE = (update(Query.__table__).where(Query.__table__.c.pk == bindparam("key"))
           .values({name: bindparam(f"new_{name}") for name in NAMES}))


def merged(old: Sequence, new: Sequence) -> tuple:
    """`old` numbers with each that `new` names in its place."""
    return tuple(old[place] if new[place] is None else new[place] for place in range(WIDTH))


def apply(connection: Connection, writer: Writer, present: Iterable[Sequence]) -> int:
    """`present`: rows of (pk, its numbers as stored (WIDTH), the new row's numbers (WIDTH)).
    Writes those whose numbers change; returns how many."""
    before, after, writes = [], [], []
    for row in present:
        key, old, new = row[0], tuple(row[1:1 + WIDTH]), tuple(row[1 + WIDTH:1 + 2 * WIDTH])
        numbers = merged(old, new)
        if numbers == old:
            continue
        before.append(QueryRow(key, "", "", "", old))
        after.append(QueryRow(key, "", "", "", numbers))
        writes.append({"key": key, **{f"new_{name}": value
                                      for name, value in zip(NAMES, numbers, strict=True)}})
    if writes:
        writes.sort(key=lambda write: write["key"])  # rows taken in key order, as set-tags does
        connection.execute(_UPDATE, writes)
        writer.numbers_changed(before, after)
        entry_rules.recheck(connection, writer.project_id, writer,
                            BitMap(write["key"] for write in writes))
    return len(writes)


def changes(present: Iterable[Sequence]) -> int:
    """How many of `present` (as apply takes them) would change."""
    return sum(1 for row in present
               if merged(row[1:1 + WIDTH], row[1 + WIDTH:1 + 2 * WIDTH]) != tuple(
                   row[1:1 + WIDTH]))
