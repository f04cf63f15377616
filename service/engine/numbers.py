"""The numbers a query may carry (clicks, impressions, CTR, position, search volume, CPC,
difficulty), each declared once: its name (the API's and the column's), how it is stored, its
bounds, and how the facets' sums combine it. Every part that stores, filters, sorts, sums or
imports a number loops over NUMBERS: a new number is one more declaration and a migration that
adds its column.

Stored as whole numbers: counts as they are; the others in millionths (4.5 → 4,500,000), so
that a range, a sort and a sum are exact on what is stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MICRO = 1_000_000


@dataclass(frozen=True, slots=True)
class Number:
    name: str  # the API's name and the column's (queries.<name>)
    label: str  # as the dashboard and the Columns page say it
    scale: int  # stored = round(value × scale)
    lowest: float
    highest: float | None
    # How facets combine it over many queries: None, a sum; else the average weighted by the
    # named number (only queries with both count). CTR is clicks ÷ impressions of the sums.
    weight: str | None = None
    ratio: tuple[str, str] | None = None

    @property
    def whole(self) -> bool:
        return self.scale == 1

    def stored(self, value: float) -> int | None:
        """The stored form of a value, or None when it is out of bounds or not a number."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not math.isfinite(value) or value < self.lowest:
            return None
        if self.highest is not None and value > self.highest:
            return None
        stored = round(value * self.scale)
        return stored if stored <= LARGEST else None

    def shown(self, stored: int) -> int | float:
        """The API's value of a stored one."""
        return stored if self.whole else stored / self.scale

    def _near(self, value: float) -> float:
        """A bound past every value this number can store, brought near them: it takes
        in the same values, and the steps that find its stored form stay few (far out, a
        float's consecutive values lie many millionths apart, so each step moved nothing)."""
        return max(self.lowest - 1, min(2 * LARGEST / self.scale, value))

    def lower_bound(self, value: float) -> int:
        """The least stored value a range's minimum takes in (inclusive): the least whose
        shown value is at least `value`, as brute force over the shown values compares."""
        value = self._near(value)
        if self.whole:
            return math.ceil(value)
        stored = math.ceil(value * self.scale)  # off by one either way at most (rounding)
        while self.shown(stored - 1) >= value:
            stored -= 1
        while self.shown(stored) < value:
            stored += 1
        return stored

    def upper_bound(self, value: float) -> int:
        """The greatest stored value a range's maximum takes in (inclusive)."""
        value = self._near(value)
        if self.whole:
            return math.floor(value)
        stored = math.floor(value * self.scale)
        while self.shown(stored + 1) <= value:
            stored += 1
        while self.shown(stored) > value:
            stored -= 1
        return stored


NUMBERS: tuple[Number, ...] = (
    Number("clicks", "Clicks", 1, 0, None),
    Number("impressions", "Impressions", 1, 0, None),
    Number("ctr", "CTR", MICRO, 0, 1, ratio=("clicks", "impressions")),
    Number("position", "Position", MICRO, 1, None, weight="impressions"),
    Number("volume", "Volume", 1, 0, None),
    Number("cpc", "CPC", MICRO, 0, None, weight="volume"),
    Number("difficulty", "Difficulty", MICRO, 0, 100, weight="volume"),
)
BY_NAME = {number.name: number for number in NUMBERS}
NAMES = tuple(BY_NAME)
# The largest stored value any number may have: 2^53 (a count; a value in millionths up to
# about nine billion), so that every stored value and every sum is exact as a float too.
LARGEST = 2 ** 53
