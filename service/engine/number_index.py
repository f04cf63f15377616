"""The numbers' bitmaps read: each number is a bit-sliced index (kinds.NUMBER: the queries that
know it, and one bitmap per bit of its stored value), so that a range is about one bitmap
operation per bit, the value at any place of a sorted order a walk down its bits, and a sum
one intersection count per bit (the facets' sums where no dense arrays can be made:
service/engine/number_sums.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyroaring import BitMap

from .held import Project_
from .kinds import NUMBER, slice_name
from .numbers import BY_NAME, LARGEST

BITS = LARGEST.bit_length()


def known(held: Project_, name: str) -> BitMap:
    """The queries whose number is known."""
    return held.bitmap(NUMBER, name)


def slices(held: Project_, name: str) -> list[BitMap]:
    """The queries with each bit set, by bit, up to the highest bit any value has."""
    found = [held.bitmap(NUMBER, slice_name(name, bit)) for bit in range(BITS)]
    while found and not found[-1]:
        found.pop()
    return found


def at_least(held: Project_, name: str, lowest: int) -> BitMap:
    """The queries whose stored value is at least `lowest`."""
    every = known(held, name)
    if lowest <= 0:
        return every
    bits = slices(held, name)
    if lowest.bit_length() > len(bits):
        return BitMap()
    greater, equal = BitMap(), every
    for bit in reversed(range(len(bits))):
        if lowest >> bit & 1:
            equal = equal & bits[bit]
        else:
            greater |= equal & bits[bit]
            equal = equal - bits[bit]
    return greater | equal


def in_range(held: Project_, name: str, lowest: int | None, highest: int | None) -> BitMap:
    """The queries whose stored value is within the bounds (inclusive; None: open)."""
    found = at_least(held, name, lowest) if lowest is not None else BitMap(known(held, name))
    if highest is not None:
        found -= at_least(held, name, highest + 1)
    return found


@dataclass(frozen=True)
class Place:
    """The value at a place of the candidates in order, the candidates before every one of
    that value (`ahead`), and those of that value (ties)."""

    value: int
    ahead: BitMap
    ties: BitMap

    @property
    def before(self) -> int:
        return len(self.ahead)


def value_at(held: Project_, name: str, candidates: BitMap, place: int,
             descending: bool) -> Place:
    """The value at `place` (from 0) of the candidates (which all know the number) sorted by
    it: each bit, from the highest, splits the candidates that could hold that place into
    those with the bit set and the others; the half that comes first is counted (not made),
    and either kept or passed (what is passed comes before the place). Inside a large tie
    most bits split nothing: those cost the count alone."""
    group, value, ahead, before = candidates, 0, BitMap(), 0
    for bit, bitmap in reversed(list(enumerate(slices(held, name)))):
        size = len(group)
        ones = group.intersection_cardinality(bitmap)
        first = ones if descending else size - ones
        if before + first > place:  # the place is in the first half: keep it
            if first < size:  # (a half that is all of the group leaves it as it is)
                group = group & bitmap if descending else group - bitmap
            value |= (1 << bit) if descending else 0
        else:  # the first half comes before the place; keep the second
            if first:
                passed = group & bitmap if descending else group - bitmap
                ahead |= passed
                group = group - passed
                before += first
            value |= 0 if descending else (1 << bit)
    return Place(value, ahead, group)


def total(held: Project_, name: str, within: BitMap) -> int:
    """The sum of the stored values of the queries within: each bit's weight times how many
    of them have it set (one intersection count a bit, nothing made). A product of two
    numbers ("position*impressions"), which is not kept: each pair of their bits' weight
    times how many have both set."""
    if "*" in name:
        left, right = name.split("*")
        rights = [(bit, bitmap) for bit, bitmap in enumerate(slices(held, right)) if bitmap]
        found = 0
        for bit, bitmap in enumerate(slices(held, left)):
            if part := bitmap & within:
                found += sum(part.intersection_cardinality(other) << (bit + other_bit)
                             for other_bit, other in rights)
        return found
    return sum(bitmap.intersection_cardinality(within) << bit
               for bit, bitmap in enumerate(slices(held, name)) if bitmap)


@dataclass(frozen=True)
class Summed:
    """How a number asked is summed: the numbers whose values are added up (`summands`),
    over the queries that know every number of `known_by` (none: all), and the answer made of
    those totals (`of`)."""

    summands: tuple[str, ...]
    known_by: tuple[str, ...]
    of: Callable[[list[int]], int | float | None]


def summed(name: str) -> Summed:
    """A count's sum; the average of a number weighted by another (both known: the sum of
    their products, "position*impressions", over the weight's); CTR as clicks ÷ impressions
    of the sums (both known); None where nothing is there to average."""
    number = BY_NAME[name]
    if number.ratio:
        part, whole = number.ratio
        return Summed((part, whole), (part, whole),
                      lambda totals: totals[0] / totals[1] if totals[1] else None)
    if number.weight:
        product, scale = f"{name}*{number.weight}", number.scale
        return Summed((product, number.weight), (name, number.weight),
                      lambda totals: totals[0] / totals[1] / scale if totals[1] else None)
    return Summed((name,), (), lambda totals: totals[0])


def known_by_all(held: Project_, names: tuple[str, ...]) -> BitMap | None:
    """The queries that know every number named (None: no condition)."""
    if not names:
        return None
    return BitMap.intersection(*(known(held, name) for name in names)) if len(names) > 1 \
        else known(held, names[0])


def sums(held: Project_, names: tuple[str, ...], within: BitMap) -> dict:
    """Each number asked over the queries within, as the facets give it (summed), a bit
    slice at a time."""
    found: dict[str, int | float | None] = {}
    for name in names:
        how = summed(name)
        condition = known_by_all(held, how.known_by)
        among = within if condition is None else within & condition
        found[name] = how.of([total(held, summand, among) for summand in how.summands])
    return found
