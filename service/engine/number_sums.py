"""The facets' sums over dense arrays. Each number summed is one array of its stored values by
key (0 where unknown), made from its bit slices once and kept while the numbers stay as they
are (a weighted number's products are multiplied as gathered, not held); each key has one group
code naming its language, country and set of tags together, kept while those stay as they are.
A filtered set's sums are then one pass over its keys: gather their groups and values, add the
values up by group (`np.bincount`), and read each language's, country's and tag's sums off the
groups'. A set larger than half the project is summed as the project (kept) less the rest.

Exact: float64 adds whole numbers exactly while every sum stays below 2^53, so values are
added in pieces of at most 53 - log2(queries) bits (one piece for any count or value in
millionths a tool writes; products take two) and the pieces' sums joined as Python integers.

A project whose keys are spread far wider than their count (arrays by key would be mostly
empty) has its arrays by place among its keys instead. A product past 64 bits (values past
2^32 each, which tools do not write) is summed a bit slice at a time (number_index.sums).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pyroaring import BitMap

from . import number_index
from .held import Project_, all_keys
from .kinds import ALL, COUNTRY, LANGUAGE, NUMBER, TAG

# Arrays are indexed by key while the keys' span is at most SPREAD times their count and
# SLACK more (a small project's keys among others'); else by each key's place among them.
SPREAD = 4
SLACK = 1 << 16
EXACT_BITS = 53
GROUP_KINDS = (ALL, LANGUAGE, COUNTRY, TAG)
SUMMED_KINDS = (*GROUP_KINDS, NUMBER)


@dataclass(frozen=True)
class Layout:
    offset: int  # the least key: arrays are indexed by key - offset
    span: int
    count: int
    # Or, where the keys are spread too wide, indexed by each key's place among them (sorted:
    # `keys`); span is then their count.
    by_place: bool = False
    keys: np.ndarray | None = field(default=None, compare=False, repr=False)


def layout(held: Project_) -> Layout | None:
    every = all_keys(held)
    if not every:
        return None
    offset = every.min()
    span = every.max() - offset + 1
    if span <= SPREAD * len(every) + SLACK:
        return Layout(offset, span, len(every))
    keys = np.frombuffer(every.to_array(), dtype=np.uint32)
    return Layout(offset, len(every), len(every), True, keys)


def positions(keys: BitMap, at: Layout) -> np.ndarray:
    """The keys as indexes into the arrays; keys the layout lacks (queries added since it was
    made, while a read sums) are left out."""
    if not keys:
        return np.empty(0, dtype=np.intp)
    found = np.frombuffer(keys.to_array(), dtype=np.uint32)
    if at.keys is not None:
        places = np.searchsorted(at.keys, found)
        inside = places < at.span
        inside[inside] = at.keys[places[inside]] == found[inside]
        return places[inside] if not inside.all() else places
    if keys.max() >= at.offset + at.span:
        found = found[:np.searchsorted(found, at.offset + at.span)]
    found = found.astype(np.intp)
    if at.offset:
        found -= at.offset
    return found


@dataclass(frozen=True)
class Values:
    at: Layout
    array: np.ndarray  # each key's stored value, 0 where unknown
    bits: int  # of the largest value


def values(held: Project_, at: Layout, name: str, as_of: dict[int, int]) -> Values | None:
    """`as_of`: Project_.kept's, the stamps as `at` was made."""
    return held.kept(f"values:{name}", (ALL, NUMBER), lambda: _values(held, at, name), as_of)


def _values(held: Project_, at: Layout, name: str) -> Values | None:
    slices = number_index.slices(held, name)
    if len(slices) > 64:
        return None
    dtype = next(np.dtype(kind) for kind in ("u1", "u2", "u4", "u8")
                 if np.dtype(kind).itemsize * 8 >= len(slices))
    array = np.zeros(at.span, dtype=dtype)
    for bit, keys in enumerate(slices):
        if keys:
            array[positions(keys, at)] |= dtype.type(1 << bit)
    return Values(at, array, len(slices))


@dataclass(frozen=True)
class Summand:
    """What is added up for a summand: a number's values, or a product of two (a weighted
    number's, "position*impressions": multiplied as gathered, so no array of products is
    held; 0 where either is unknown, as the product is), in pieces of `width` bits."""

    factors: tuple[Values, ...]
    width: int
    pieces: int

    def gathered(self, at: np.ndarray) -> np.ndarray:
        first = np.take(self.factors[0].array, at)
        if len(self.factors) == 1:
            return first
        return first.astype(np.uint64) * np.take(self.factors[1].array, at)


def summand(held: Project_, at: Layout, name: str, as_of: dict[int, int]) -> Summand | None:
    """`name`: a number, or a product ("position*impressions"); None past 64 bits."""
    factors = tuple(values(held, at, factor, as_of) for factor in name.split("*"))
    if any(factor is None for factor in factors):
        return None
    bits = sum(factor.bits for factor in factors)
    if bits > 64:
        return None
    width = EXACT_BITS - at.count.bit_length()
    return Summand(factors, width, max(1, -(-bits // width)))


@dataclass(frozen=True)
class Groups:
    """Each key's group: the keys of one language, one country and one set of tags."""

    at: Layout
    codes: np.ndarray  # each key's group
    count: int
    languages: list[str]
    language: np.ndarray  # each group's language, as an index of `languages` (none: past it)
    countries: list[str]
    country: np.ndarray
    tags: list[str]
    pair_group: np.ndarray  # each (group, tag) of a tag the group's queries carry
    pair_tag: np.ndarray
    untagged: np.ndarray  # whether the group's queries carry no tag


def groups(held: Project_, at: Layout, as_of: dict[int, int]) -> Groups:
    return held.kept("groups", GROUP_KINDS, lambda: _groups(held, at), as_of)


def _groups(held: Project_, at: Layout) -> Groups:
    languages, countries, tags = (held.values(kind) for kind in (LANGUAGE, COUNTRY, TAG))
    base = np.zeros(at.span, dtype=np.int64)  # language and country, 0: none
    for index, value in enumerate(languages, 1):
        base[positions(held.bitmap(LANGUAGE, value), at)] = index
    radix = len(countries) + 1
    base *= radix
    for index, value in enumerate(countries, 1):
        base[positions(held.bitmap(COUNTRY, value), at)] += index
    tagged = [positions(held.bitmap(TAG, tag), at) for tag in tags]
    codes, start = base, 0
    while True:  # each round adds as many tags as the codes have bits left, then compacts
        room = 62 - int(codes.max()).bit_length()
        taken = tagged[start:start + room]
        if taken:
            codes = codes << len(taken)
            for bit, keys in enumerate(taken):
                codes[keys] |= 1 << bit
        _unique, codes = np.unique(codes, return_inverse=True)
        start += len(taken)
        if start >= len(tagged):
            break
    count = int(codes.max()) + 1
    member = np.zeros(count, dtype=np.intp)  # a key of each group
    member[codes] = np.arange(at.span, dtype=np.intp)
    of_group = base[member]
    pairs = [(np.unique(codes[keys]), index) for index, keys in enumerate(tagged)]
    pair_group = np.concatenate([found for found, _index in pairs] or [np.empty(0, np.intp)])
    pair_tag = np.concatenate([np.full(len(found), index, dtype=np.intp)
                               for found, index in pairs] or [np.empty(0, np.intp)])
    untagged = np.ones(count, dtype=bool)
    untagged[pair_group] = False
    return Groups(at, codes.astype(np.uint32 if count < 2 ** 32 else np.int64), count,
                  languages, np.where(of_group // radix > 0, of_group // radix - 1,
                                      len(languages)),
                  countries, np.where(of_group % radix > 0, of_group % radix - 1, len(countries)),
                  tags, pair_group, pair_tag, untagged)


Pieces = list[np.ndarray]  # a summand's sums by group, a piece of its bits each
Reduce = Callable[[np.ndarray], np.ndarray | float]


class DenseSums:
    """The numbers asked (number_index.summed) over the sets one facets answer counts, each set
    summed by group once."""

    def __init__(self, held: Project_, names: tuple[str, ...], grouped: Groups,
                 arrays: dict[str, Summand], as_of: dict[int, int]) -> None:
        # `as_of`: the stamps read before the groups and arrays were taken (what is kept from
        # them is kept as of those).
        self.held, self.groups, self.arrays, self.as_of = held, grouped, arrays, as_of
        self.how = {name: number_index.summed(name) for name in names}
        self.conditions = {how.known_by: number_index.known_by_all(held, how.known_by)
                           for how in self.how.values()}
        self._by_set: dict[int, tuple[BitMap, dict]] = {}

    def of(self, keys: BitMap) -> dict:
        return self._answer(self._read(keys, lambda piece: piece.sum()), None)

    def untagged(self, base: BitMap) -> dict:
        untagged = self.groups.untagged
        return self._answer(self._read(base, lambda piece: piece[untagged].sum()), None)

    def by(self, kind: int, base: BitMap) -> dict[str, dict]:
        """Each value's sums (its queries within `base`) of a language, country or tag."""
        grouped = self.groups
        if kind == TAG:
            listed, pair_group, pair_tag = grouped.tags, grouped.pair_group, grouped.pair_tag

            def reduce(piece):
                return np.bincount(pair_tag, weights=piece[pair_group], minlength=len(listed))
        else:
            listed, of_group = ((grouped.languages, grouped.language) if kind == LANGUAGE
                                else (grouped.countries, grouped.country))

            def reduce(piece):
                return np.bincount(of_group, weights=piece, minlength=len(listed) + 1)
        read = self._read(base, reduce)
        return {value: self._answer(read, index) for index, value in enumerate(listed)}

    def _answer(self, read: dict, index: int | None) -> dict:
        found = {}
        for name, how in self.how.items():
            totals = [read[summand, how.known_by] for summand in how.summands]
            found[name] = how.of([total if index is None else total[index]
                                  for total in totals])
        return found

    def _read(self, base: BitMap, reduce: Reduce) -> dict:
        """Each summand's totals over `base`, reduced from its sums by group: Python integers
        (exact)."""
        found = {}
        for key, pieces in self._by_groups(base).items():
            width = self.arrays[key[0]].width
            reduced = [reduce(piece) for piece in pieces]
            if np.ndim(reduced[0]) == 0:
                found[key] = sum(int(part) << (width * at) for at, part in enumerate(reduced))
            elif len(reduced) == 1:
                found[key] = reduced[0].astype(np.int64).tolist()
            else:
                found[key] = [sum(int(part[index]) << (width * at)
                                  for at, part in enumerate(reduced))
                              for index in range(len(reduced[0]))]
        return found

    def _by_groups(self, base: BitMap) -> dict[tuple[str, tuple[str, ...]], Pieces]:
        """(summand, known_by) → its sums by group over `base`, once per set."""
        kept = self._by_set.get(id(base))
        if kept is not None and kept[0] is base:
            return kept[1]
        found = {}
        for known_by, condition in self.conditions.items():
            summands = sorted({summand for how in self.how.values() if how.known_by == known_by
                               for summand in how.summands})
            among = base if condition is None else base & condition
            universe = all_keys(self.held) if condition is None else condition
            rest = universe - among
            if 2 * len(among) > len(universe) and len(rest) + len(among) == len(universe):
                # Most of the project: the project's sums (kept) less the rest's.
                less = self._summed(rest, summands)
                sums = {}
                for summand in summands:
                    whole = self.held.kept(
                        f"sums:{summand}:{known_by}", SUMMED_KINDS,
                        lambda keys=universe, summand=summand:
                        self._summed(keys, [summand])[summand], self.as_of)
                    sums[summand] = [a - b for a, b in zip(whole, less[summand], strict=True)]
            else:
                sums = self._summed(among, summands)
            found.update({(summand, known_by): sums[summand] for summand in summands})
        self._by_set[id(base)] = (base, found)
        return found

    def _summed(self, keys: BitMap, summands: list[str]) -> dict[str, Pieces]:
        grouped = self.groups
        at = positions(keys, grouped.at)
        # As bincount takes them (else it converts them again for each summand).
        codes = np.take(grouped.codes, at).astype(np.intp, copy=False)
        found = {}
        for summand in summands:
            array = self.arrays[summand]
            gathered = array.gathered(at)
            if array.pieces == 1:
                found[summand] = [np.bincount(codes, weights=gathered,
                                              minlength=grouped.count)]
                continue
            mask = (1 << array.width) - 1
            found[summand] = [np.bincount(codes, weights=(gathered >> (array.width * piece))
                                          & mask, minlength=grouped.count)
                              for piece in range(array.pieces)]
        return found


class SlicedSums:
    """The same answers a bit slice at a time (number_index.sums)."""

    def __init__(self, held: Project_, names: tuple[str, ...]) -> None:
        self.held, self.names = held, names

    def of(self, keys: BitMap) -> dict:
        return number_index.sums(self.held, self.names, keys)

    def untagged(self, base: BitMap) -> dict:
        return self.of(base & self.held.no_tag())

    def by(self, kind: int, base: BitMap) -> dict[str, dict]:
        return {value: self.of(base & self.held.bitmap(kind, value))
                for value in self.held.values(kind)}


def summing(held: Project_, names: tuple[str, ...]) -> DenseSums | SlicedSums:
    """What sums the numbers asked for one facets answer: dense arrays where they can be
    made, else the bit slices."""
    as_of = dict(held.changed)  # before anything is read from the bitmaps
    at = layout(held)
    if at is None:
        return SlicedSums(held, names)
    summands = {part for name in names for part in number_index.summed(name).summands}
    arrays = {name: summand(held, at, name, as_of) for name in summands}
    grouped = groups(held, at, as_of)
    if grouped.at != at or any(array is None or any(
            factor.at != at for factor in array.factors) for array in arrays.values()):
        return SlicedSums(held, names)
    return DenseSums(held, names, grouped, arrays, as_of)

