"""The kinds of bitmap the engine keeps, each declared once: its number as stored
(`engine_pieces.kind`), its name, whether each process holds it whole (service/engine/held.py),
and how a batch of rows gives each of its values' keys. The writer, the rebuild and the bulk
load index rows by looping over these declarations: a new kind is one more of them.

A kind's number is in every stored piece: it is never changed nor given to another kind.
"""

from __future__ import annotations

import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from pyroaring import BitMap

from . import folding
from .numbers import NAMES
from .rows import QueryRow, by_field


@dataclass(frozen=True, slots=True)
class Batch:
    """Rows indexed together, by field: `fields["language"]` is every row's language, in
    the rows' order; with each text folded, worked out once for every kind."""

    fields: dict[str, list]  # by the names of QueryRow's fields
    folded: list[str]  # each row's text folded (engine/folding.py)

    @staticmethod
    def of(rows: Iterable[QueryRow]) -> Batch:
        fields = by_field(rows)
        return Batch(fields, list(map(folding.fold, fields["text"])))

    @property
    def keys(self) -> list[int]:
        return self.fields["key"]

    def __len__(self) -> int:
        return len(self.keys)


# Each value's keys among a batch's rows (a list of keys, or a bitmap).
Values = Mapping[str, Iterable[int]]


@dataclass(frozen=True, slots=True)
class Kind:
    number: int
    name: str
    held: bool  # held whole by each process; else its bitmaps are read per term
    # Each value's keys among a batch of rows; None: not made from the rows (a tag's bitmap
    # follows its links: Writer.added_links).
    of_rows: Callable[[Batch], Values] | None


KINDS: dict[int, Kind] = {}


def declare(number: int, name: str, *, held: bool,
            of_rows: Callable[[Batch], Values] | None) -> int:
    if number in KINDS or name in {kind.name for kind in KINDS.values()}:
        raise ValueError(f"kind {number} ({name}) is declared twice")
    KINDS[number] = Kind(number, name, held, of_rows)
    return number


def one_each(field: str) -> Callable[[Batch], Values]:
    """The keys by the one value each row has in a field of QueryRow (its language)."""
    def of_rows(batch: Batch) -> Values:
        found: dict[str, list[int]] = defaultdict(list)
        for key, value in zip(batch.keys, batch.fields[field], strict=True):
            found[value].append(key)
        return found
    return of_rows


def words(batch: Batch) -> Values:
    """The keys by each word of their folded texts."""
    found: dict[str, list[int]] = defaultdict(list)
    for key, folded in zip(batch.keys, batch.folded, strict=True):
        for word in folding.words(folded):
            found[word].append(key)
    return found


def slice_name(number: str, bit: int) -> str:
    return f"{number}:{bit}"


def number_slices(batch: Batch) -> Values:
    """The keys by number known (value: the number's name) and by each bit set in its stored
    value ("clicks:3"): a bit-sliced index, whose bitmaps answer ranges, ranks and sums
    (service/engine/number_index.py). A weighted number's products with its weight are not
    kept: the facets multiply them as they add them up (service/engine/number_sums.py)."""
    numbers = batch.fields["numbers"]
    if not any(numbers):
        return {}
    # Every value in one array, a row per query and a column per number (-1: unknown): read
    # by numpy at once as floats (None: NaN), exact below 2^53 (numbers.LARGEST); a larger
    # value is read again as an integer.
    table = np.array([_UNKNOWN if row is None else row for row in numbers], dtype=np.float64)
    if (table >= _EXACT).any():
        table = np.array([-1 if value is None else value for row in numbers
                          for value in (_UNKNOWN if row is None else row)],
                         dtype=np.int64).reshape(len(numbers), len(NAMES))
    else:
        table = np.where(table >= 0, table, -1).astype(np.int64)
    return table_slices(np.array(batch.keys, dtype=np.uint32), table)


def table_slices(keys: np.ndarray, table: np.ndarray) -> Values:
    """number_slices of keys and their numbers given as an array: a row per key, a column
    per number of NAMES (int64, -1: unknown)."""
    found: dict[str, Iterable[int]] = {}
    columns = dict(zip(NAMES, np.ascontiguousarray(table.T), strict=True))
    for name in NAMES:
        _slices(found, name, keys, columns[name])
    return found


_UNKNOWN = (None,) * len(NAMES)
_EXACT = float(2 ** 53)  # integers below it are exact as floats


def _slices(found: dict, name: str, keys: np.ndarray, values: np.ndarray) -> None:
    known = values >= 0
    if not known.any():
        return
    if not known.all():
        keys, values = np.compress(known, keys), np.compress(known, values)
    found[name] = bitmap_of(keys)
    some = int(np.bitwise_or.reduce(values))  # the bits some value has: no other is looked at
    for bit in range(some.bit_length()):
        if some >> bit & 1:
            # np.compress: five times faster than indexing by the mask (numpy 2.4).
            found[slice_name(name, bit)] = bitmap_of(np.compress((values >> bit) & 1 == 1,
                                                                 keys))


def bitmap_of(keys: np.ndarray) -> BitMap:
    """A bitmap of an array of keys (through array.array: eight times faster than from
    numpy's own items)."""
    buffer = array.array("I")
    buffer.frombytes(keys.astype(np.uint32, copy=False).tobytes())
    return BitMap(buffer)


ALL = declare(0, "all", held=True, of_rows=lambda batch: {"": batch.keys})
WORD = declare(1, "word", held=False, of_rows=words)
SHORT = declare(2, "short", held=False,  # each string of 1 to folding.SHORT characters
                of_rows=lambda batch: folding.short_strings(batch.keys, batch.folded))
LANGUAGE = declare(3, "language", held=True, of_rows=one_each("language"))
COUNTRY = declare(4, "country", held=True, of_rows=one_each("country"))
TAG = declare(5, "tag", held=True, of_rows=None)  # its value: the tag's id
NUMBER = declare(6, "number", held=True, of_rows=number_slices)
# The queries suggested a tag (its id) at the model's default confidence, without carrying
# it (service/engine/suggested.py): written by the suggestions' job, emptied of a query's
# key by whatever links it to the tag (service/engine/suggestion_links.py).
SUGGESTED = declare(7, "suggested", held=True, of_rows=None)

# The kinds every read of a project may need whole, held in each process; the others (words,
# short strings) are read per term.
HELD_KINDS = tuple(number for number, kind in KINDS.items() if kind.held)
# The kinds made from the rows, in the order declared.
FROM_ROWS = tuple(kind for kind in KINDS.values() if kind.of_rows is not None)
