"""The engine's row of a query: what the bitmaps of every kind are made from
(service/engine/kinds.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import starmap
from operator import attrgetter


@dataclass(frozen=True, slots=True)
class QueryRow:
    key: int  # queries.pk, the key the bitmaps hold
    text: str  # queries.query, as stored
    language: str
    country: str


# The columns of `queries` a QueryRow is read from, in the order of its fields.
COLUMNS = ("pk", "query", "language", "country")
FIELDS = tuple(field.name for field in fields(QueryRow))
_values = attrgetter(*FIELDS)


def query_rows(rows: Iterable[Sequence]) -> Iterator[QueryRow]:
    """The rows of a statement that selects COLUMNS, as QueryRows (made as they are read)."""
    return starmap(QueryRow, rows)


def by_field(rows: Iterable[QueryRow]) -> dict[str, list]:
    """Each field of the rows, in their order, read in one pass: each row is let go once read
    (a batch of rows held at once had Python's collector go over them again and again: a
    third of the time the indexing took)."""
    found: dict[str, list] = {name: [] for name in FIELDS}
    appends = [found[name].append for name in FIELDS]
    for row in rows:
        for append, value in zip(appends, _values(row), strict=True):
            append(value)
    return found
