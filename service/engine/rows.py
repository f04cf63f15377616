"""The engine's row of a query: what the bitmaps of every kind are made from
(service/engine/kinds.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter

from .numbers import NAMES


@dataclass(frozen=True, slots=True)
class QueryRow:
    key: int  # queries.pk, the key the bitmaps hold
    text: str  # queries.query, as stored
    language: str
    country: str
    # Its stored numbers in the order of numbers.NUMBERS (None: unknown), or None: none known.
    numbers: tuple[int | None, ...] | None = None


# The columns of `queries` a QueryRow is read from: its fields', then each number's.
COLUMNS = ("pk", "query", "language", "country", *NAMES)
FIELDS = tuple(field.name for field in fields(QueryRow))
_values = attrgetter(*FIELDS)
_NO_NUMBERS = (None,) * len(NAMES)


def query_rows(rows: Iterable[Sequence]) -> Iterator[QueryRow]:
    """The rows of a statement that selects COLUMNS (or the first four only: no numbers), as
    QueryRows (made as they are read)."""
    for row in rows:
        numbers = tuple(row[4:])
        yield QueryRow(row[0], row[1], row[2], row[3],
                       None if not numbers or numbers == _NO_NUMBERS else numbers)


def numbers_tuple(numbers: dict[str, int] | None) -> tuple[int | None, ...] | None:
    """A row's numbers by name (stored values) in the order of NUMBERS, or None for none."""
    if not numbers:
        return None
    return tuple(numbers.get(name) for name in NAMES)


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
