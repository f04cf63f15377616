"""A column reads each distinct cell that is not a plain number once (a Keyword Planner
volume column repeats a few ranges such as "1K – 10K" a million times), yet counts every
cell: each range, each unreadable cell and the first lines of those, as when every cell is
read by a column of its own that saw no other."""

from __future__ import annotations

import random

import pytest

from service.engine.numbers import BY_NAME
from service.imports import number_values

# Cells the slow way reads: ranges, multipliers, currencies, unknowns, unreadable ones and
# values out of their number's bounds (all but the plain ones below).
CELLS = ["1K – 10K", "10 – 100", "100K – 1M", "<10", ">1,000", "1.2K", "3M", "$0.45",
         "0,45 €", "USD 1.20", "n/a", "-", "", "abc", "12 apples", "140", "-3", "4.5%",
         "1,234", "7", "0.5"]


def one_by_one_apart(name: str, cells: list[str], lines: list[int]):
    """Each cell read by a new column: what it stores, and the sums of what they counted."""
    stored, unreadable, ranges, kept = [], 0, 0, []
    for cell, line in zip(cells, lines, strict=True):
        column = number_values.Column(BY_NAME[name])
        value = column.stored(cell, line) if cell else None
        stored.append(-1 if value is None else value)
        unreadable += column.unreadable
        ranges += column.ranges
        kept.extend(column.lines)
    return stored, unreadable, ranges, kept[:number_values.LINES_KEPT]


@pytest.mark.parametrize("name", ["volume", "cpc", "difficulty", "ctr"])
@pytest.mark.parametrize("seed", range(3))
def test_every_repeated_cell_is_counted_as_if_read_alone(name, seed):
    rng = random.Random(seed)
    cells = [rng.choice(CELLS) for _ in range(3_000)]
    lines = list(range(2, len(cells) + 2))
    stored, unreadable, ranges, kept = one_by_one_apart(name, cells, lines)
    together = number_values.Column(BY_NAME[name])
    assert together.stored_all(cells, lines).tolist() == stored
    assert (together.unreadable, together.ranges, together.lines) == (unreadable, ranges, kept)
    assert ranges > 0 and unreadable > number_values.LINES_KEPT  # the counts were exercised
    alone = number_values.Column(BY_NAME[name])
    assert [-1 if (v := alone.stored(c, n) if c else None) is None else v
            for c, n in zip(cells, lines, strict=True)] == stored
    assert (alone.unreadable, alone.ranges, alone.lines) == (unreadable, ranges, kept)
