"""A batch's numbers read a column at a time (RowNumbers.read_all, Column.stored_all) are
those of reading each row's cells one by one (RowNumbers.read), with the same cells counted
unreadable, the same lines kept and the same ranges counted, whatever the cells hold."""

from __future__ import annotations

import csv
import io
import random

import pytest

from service.engine.numbers import NAMES
from service.engine.rows import numbers_tuple
from service.imports import imports

# Cells as tools write them, and cells that are not quite numbers.
CELLS = [
    "", "", "0", "7", "12", "100", "4.5", "0.29", "32.2", "1.", ".5", "007", "1,234",
    "12,345.6", "1,234,567", "1,234.", "0,000", "1,23", "12,34", "1234,567", "1,2345",
    ",234", "1.234,5", "1,234,", "1.2.3", ".", "-", "n/a", "<10", "1K – 10K", "1.2K", "3M",
    " 7", "7 ", "1e3", "nan", "inf", "-5", "+5", "1_000", "٣", "$0.45", "0,45 €", "4.5%",
    "45%", "0.5%", "150%", "%", "5%%", "1,5%", "2.91%", "0.045", "1.5", "0", "101", "100.5",
    "9" * 30, "1e400", "12\n3", "9007199254740993", "123456789012",
]


def header_of(names: list[str]) -> imports.Header:
    return imports.parse_header(["query", "language", "country", *names], ",")


def rows_of(rng: random.Random, names: list[str], count: int, pool: list[str]) -> list[list]:
    return [["q", "en", "US", *(rng.choice(pool) for _ in names)] for _ in range(count)]


def one_by_one(header: imports.Header, rows: list[list], lines: list[int]):
    numbers = imports.RowNumbers(header)
    found = [numbers_tuple(numbers.read(row, line)) for row, line in zip(rows, lines,
                                                                          strict=True)]
    return found, [(c.unreadable, c.lines, c.ranges) for c in numbers.columns]


def at_once(header: imports.Header, rows: list[list], lines: list[int], batch: int):
    numbers = imports.RowNumbers(header)
    found = []
    for start in range(0, len(rows), batch):
        found.extend(numbers.read_all(rows[start:start + batch], lines[start:start + batch]))
    return found, [(c.unreadable, c.lines, c.ranges) for c in numbers.columns]


@pytest.mark.parametrize("names", [
    list(NAMES), ["clicks", "impressions"], ["ctr"], ["impressions", "ctr", "position"],
    ["volume", "cpc", "difficulty", "clicks"],
])
@pytest.mark.parametrize("seed", range(4))
def test_read_at_once_as_one_by_one(names, seed):
    rng = random.Random(seed)
    # Mostly plain cells (the fast way), some seeds with every kind of cell in every column.
    plain = [cell for cell in CELLS if cell.replace(",", "").replace(".", "").isdigit()]
    pool = CELLS if seed % 2 else plain + ["", ""]
    rows = rows_of(rng, names, 1500, pool)
    lines = [2 + place * 2 for place in range(len(rows))]
    expected = one_by_one(header_of(names), rows, lines)
    assert at_once(header_of(names), rows, lines, 1000) == expected
    assert at_once(header_of(names), rows, lines, 7) == expected
    if seed % 2:
        assert expected[1] != [(0, [], 0)] * len(names)  # some cells were counted


@pytest.mark.parametrize("longest", [15, 16, 24])
def test_plain_cells_of_many_digits_read_at_once_as_one_by_one(longest):
    # Digits with a point anywhere or none, leading zeros, up to 15 digits (exact as floats),
    # 16 or 24 (rounded), halves of a millionth: the values at once are float()'s, to the
    # last bit, in every column.
    rng = random.Random(longest)

    def cell() -> str:
        if rng.random() < 0.3:  # halfway between two millionths: rounded by the last bit
            return f"{rng.randint(0, 99)}.{rng.randint(0, 999_999):06d}5"
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, longest)))
        at = rng.randint(0, len(digits))
        return digits if rng.random() < 0.3 else digits[:at] + "." + digits[at:]

    rows = [["q", "en", "US", *(cell() for _ in NAMES)] for _ in range(3000)]
    lines = list(range(2, 3002))
    assert at_once(header_of(list(NAMES)), rows, lines, 1000) == one_by_one(
        header_of(list(NAMES)), rows, lines)



@pytest.mark.parametrize("longest", [15, 16, 19, 20, 30])
def test_columns_of_whole_numbers_read_at_once_as_one_by_one(longest):
    # No point in a column (counts): read as integers at once, exact below 2^53; those past
    # it (numpy's integers stop at 2^63) as floats, rounded as float() rounds them.
    rng = random.Random(longest)

    def cell() -> str:
        if rng.random() < 0.05:
            return ""
        value = rng.randint(0, 10 ** rng.randint(1, longest) - 1)
        return f"{value:,}" if rng.random() < 0.3 else str(value)

    rows = [["q", "en", "US", *(cell() for _ in NAMES)] for _ in range(2000)]
    lines = list(range(2, 2002))
    assert at_once(header_of(list(NAMES)), rows, lines, 500) == one_by_one(
        header_of(list(NAMES)), rows, lines)
    if longest == 15:  # some columns wholly below 2^53: read as integers
        assert at_once(header_of(["clicks"]), [row[:4] for row in rows], lines, 500)[0] == [
            None if row[3] == "" else (int(row[3].replace(",", "")), *(None,) * 6)
            for row in rows]


def test_columns_of_one_kind_of_cell_each():
    # Every cell of a column alike: percentages, plain ratios, counts, or values out of bounds.
    for names, cells in ((["ctr"], ["2.91%", "0.5%", ""]), (["ctr"], ["0.03", "1", "0"]),
                         (["ctr"], ["150%", "2"]), (["position"], ["0", "0.5", "1"]),
                         (["difficulty"], ["100", "100.000001", "101"]),
                         (["clicks", "impressions", "ctr"], ["9007199254740992", "3", ""]),
                         (["clicks"], ["", ""]),
                         # Keyword Planner's ranges: mostly (read one by one), or a few.
                         (["volume"], ["1K – 10K", "10K – 100K", "<10", "", "1,234", "7"]),
                         (["volume"], ["1,234", "7", "12", "90", "1K – 10K", ""])):
        rng = random.Random(1)
        rows = rows_of(rng, names, 500, cells)
        lines = list(range(2, 502))
        assert at_once(header_of(names), rows, lines, 200) == one_by_one(
            header_of(names), rows, lines)


def test_a_files_rows_carry_the_numbers_read_one_by_one():
    rng = random.Random(3)
    names = list(NAMES)
    rows = rows_of(rng, names, 1200, CELLS)
    content = io.StringIO()
    writer = csv.writer(content, lineterminator="\n")
    writer.writerow(["query", "language", "country", *names])
    for place, row in enumerate(rows):
        writer.writerow([f"query {place}", *row[1:]])
    binary = io.BytesIO(content.getvalue().encode())
    header = imports.check_file(binary)
    read = [(row, numbers) for batch in imports.read_batches(binary, header, {}, batch_rows=500)
            for row, numbers in zip(batch.rows, batch.numbers_each(), strict=True)]
    # Line numbers: a cell holding a line break takes two lines of the file.
    lines, line = [], 2
    for row in rows:
        lines.append(line)
        line += 1 + sum(cell.count("\n") for cell in row)
    expected, _ = one_by_one(header, [[f"query {p}", *row[1:]] for p, row in enumerate(rows)],
                             lines)
    assert [numbers for _row, numbers in read] == expected
    assert [row[0] for row, _numbers in read] == [f"query {p}" for p in range(len(rows))]
