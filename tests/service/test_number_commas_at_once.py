"""A column's cells with commas read at once (Column.stored_all, whose commas are looked at
together) as each is read alone (Column.stored): the same values, the same cells counted
unreadable and the same lines kept, whatever stands around each comma."""

from __future__ import annotations

import random

import pytest

from service.engine.numbers import BY_NAME
from service.imports import number_values

# Commas that group thousands and commas that do not, next to points, digits and cell ends.
CELLS = [
    "1,234", "12,345", "123,456", "1,234,567", "1,234.5", "1,234.", "12,345.67", "0,000",
    "1234,567", "1,23", "1,2345", ",234", "1,234,", "1.2,345", "1.,234", ".5,000", "12.3,456",
    "1,234.5,6", "1,234.5.6", "1,,234", "1,234,5678", "9,999,999.999", "1.234,567", "7", "",
    "4.5", "1.", ".5", "1.2.3", "1000,000", "1,000,00", "100,000",
]


@pytest.mark.parametrize("name", ["clicks", "volume", "cpc", "position"])
@pytest.mark.parametrize("seed", range(6))
def test_cells_with_commas_read_at_once_as_one_by_one(name, seed):
    rng = random.Random(seed)
    # Some seeds without "1.2.3" (which has every cell read one by one): the fast way.
    pool = CELLS if seed % 2 else [cell for cell in CELLS if cell.count(".") < 2]
    for size in (1, 2, 3, 8, 40, 400):
        cells = [rng.choice(pool) for _ in range(size)]
        lines = list(range(2, size + 2))
        alone = number_values.Column(BY_NAME[name])
        expected = [-1 if (value := alone.stored(cell, line) if cell else None) is None
                    else value for cell, line in zip(cells, lines, strict=True)]
        together = number_values.Column(BY_NAME[name])
        found = together.stored_all(cells, lines).tolist()
        assert found == expected, cells
        assert (together.unreadable, together.lines) == (alone.unreadable, alone.lines), cells
