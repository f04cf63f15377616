"""The engine's row of a query: what the bitmaps of every kind are made from
(service/engine/kinds.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import starmap


@dataclass(frozen=True, slots=True)
class QueryRow:
    key: int  # queries.pk, the key the bitmaps hold
    text: str  # queries.query, as stored
    language: str
    country: str


# The columns of `queries` a QueryRow is read from, in the order of its fields.
COLUMNS = ("pk", "query", "language", "country")


def query_rows(rows: Iterable[Sequence]) -> Iterator[QueryRow]:
    """The rows of a statement that selects COLUMNS, as QueryRows (made as they are read)."""
    return starmap(QueryRow, rows)
