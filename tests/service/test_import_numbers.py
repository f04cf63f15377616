"""A file's cells read as a query's numbers (service/imports/number_values.py): every way the
tools write them, each column's locale decided once from its first values, and what cannot be
read (or is out of bounds) left unknown, counted with its lines; a row's CTR, Keyword
Planner's bids, and the number columns guessed from the tools' headers."""

from __future__ import annotations

import io

import pytest

from service.engine.numbers import BY_NAME
from service.imports import imports
from service.imports.import_sources import Choice, Shaping, guess
from service.imports.number_values import decided, decimal_mark


def read(name: str, cells: list[str], hint: str = ".") -> tuple[list, object]:
    column = decided(BY_NAME[name], cells, hint, "Col")
    return [column.value(cell, line) for line, cell in enumerate(cells, start=2)], column


@pytest.mark.parametrize(("cells", "decimal"), [
    (["1,234", "12", "1,234,567"], "."),       # every "," followed by three digits: thousands
    (["1.234", "12", "1.234.567"], ","),       # every "." followed by three digits: thousands
    (["4,5", "12"], ","),                      # a decimal comma
    (["4.5", "1,234"], "."),                   # the first value that tells wins
    (["1.234,5"], ","), (["1,234.5"], "."),    # both: the last one is the decimal mark
    (["12", "40"], "."),                       # nothing tells: the hint
])
def test_the_decimal_mark_is_decided_from_the_column(cells, decimal):
    assert decimal_mark(cells, ".") == decimal


def test_nothing_in_the_values_the_hint_decides():
    assert decimal_mark(["12", ""], ",") == ","
    values, _ = read("cpc", ["12", "0,45"], ",")
    assert values == [12, 0.45]


def test_counts_with_thousands_separators_of_each_locale():
    assert read("volume", ["1,234", "12", "1,234,567"])[0] == [1234, 12, 1234567]
    assert read("volume", ["1.234", "12", "1.234.567"])[0] == [1234, 12, 1234567]
    assert read("volume", ["1 234", "12\u00a0345", "1\u202f000", "1'000"])[0] == \
        [1234, 12345, 1000, 1000]


def test_decimal_commas_and_points():
    assert read("position", ["4,5", "12,25", "3"])[0] == [4.5, 12.25, 3]
    assert read("position", ["4.5", "12.25", "3"])[0] == [4.5, 12.25, 3]
    assert read("cpc", ["0,78", "1.234,50"])[0] == [0.78, 1234.5]


def test_ctr_as_search_console_writes_it():
    values, column = read("ctr", ["4.5%", "0%", "12.25 %", "100%"])
    assert values == [0.045, 0, 0.1225, 1]
    assert read("ctr", ["4,5 %", "0,8 %"])[0] == [0.045, 0.008]
    # A workbook's percentage cell is a fraction; a column of plain percentages is told by
    # values above 1.
    assert read("ctr", ["0.0351", "0.5"])[0] == [0.0351, 0.5]
    values, column = read("ctr", ["3.5", "0.5"])
    assert column.percent and values == [0.035, 0.005]
    assert column.stored("4.5%") == 45_000


def test_multipliers_and_currencies():
    assert read("volume", ["1.2K", "3M", "10k", "2.5 bn"])[0] == \
        [1200, 3_000_000, 10_000, 2_500_000_000]
    assert read("volume", ["1,5 Mio", "2 Tsd.", "1,2K"], ",")[0] == [1_500_000, 2000, 1200]
    assert read("cpc", ["$0.45", "USD 1.20", "€2", "£1.5"])[0] == [0.45, 1.2, 2, 1.5]
    assert read("cpc", ["0,45 €", "1,20 EUR"])[0] == [0.45, 1.2]


def test_ranges_are_their_lower_bound_and_counted():
    values, column = read("volume", ["1K – 10K", "10K-100K", "10 – 100", "<10", ">1M",
                                     "1,000 to 5,000", "500"])
    assert values == [1000, 10_000, 10, 0, 1_000_000, 1000, 500]
    assert column.ranges == 6 and column.unreadable == 0
    assert column.sentences() == [
        "6 values of the Volume column “Col” are ranges (such as “1K – 10K” or “<10”), kept "
        "as the range's lower bound (0 for “<10”)."]


def test_empty_and_dashes_are_unknown_not_unreadable():
    values, column = read("clicks", ["", "-", "–", "—", "n/a", "N/A", " "])
    assert values == [None] * 7
    assert column.unreadable == 0 and column.sentences() == []


def test_unreadable_and_out_of_bounds_cells_are_unknown_and_counted_by_line():
    values, column = read("position", ["4.2", "0", "abc", "-3", "1.2.3", "12", "x", "y", "z"])
    assert values == [4.2, None, None, None, None, 12, None, None, None]
    assert column.unreadable == 7 and column.lines == [3, 4, 5, 6, 8]
    assert column.sentences() == [
        "7 cells of the Position column “Col” could not be read as a number (lines 3, 4, 5, "
        "6, 8, …): left unknown, the rows imported."]
    assert read("difficulty", ["140", "45", "100", "-1"])[0] == [None, 45, 100, None]
    assert read("ctr", ["120%", "50%"])[0] == [None, 0.5]
    assert read("volume", ["inf", "nan", "1e400"])[0] == [None, None, None]
    # Decided from its first values, a column reads a later cell by its locale: thousands
    # must be in threes.
    column = decided(BY_NAME["clicks"], ["1,234", "12"], ".", "Clicks")
    assert [column.value("4,56", 250), column.value("12,345", 251)] == [None, 12345]
    assert column.sentences() == [
        "1 cell of the Clicks column “Clicks” could not be read as a number (line 250): left "
        "unknown, the rows imported."]


def test_stored_values_are_the_engines():
    _, column = read("position", ["4.5"])
    assert column.stored("4.5") == BY_NAME["position"].stored(4.5) == 4_500_000
    _, column = read("volume", ["1,234"])
    assert column.stored("1,234") == 1234
    assert column.stored("") is None


def test_a_rows_ctr_is_its_clicks_over_its_impressions_else_the_files():
    header = imports.parse_header(["query", "language", "country", "clicks", "impressions",
                                   "ctr"], ",")
    numbers = imports.RowNumbers(header)

    def read(*cells: str) -> dict | None:
        return numbers.read(["q", "en", "US", *cells], 2)

    assert read("12", "100", "4.5%") == {"clicks": 12, "impressions": 100, "ctr": 120_000}
    assert read("12", "0", "4.5%") == {"clicks": 12, "impressions": 0, "ctr": 45_000}
    assert read("", "100", "4.5%") == {"impressions": 100, "ctr": 45_000}
    assert read("120", "100", "") == {"clicks": 120, "impressions": 100}  # no CTR above 1
    assert read("", "", "") is None
    alone = imports.RowNumbers(imports.parse_header(["query", "language", "country", "ctr"],
                                                    ","))
    assert alone.read(["q", "en", "US", "0.5"], 2) == {"ctr": 500_000}


def test_keyword_planners_bids_midpoint_or_the_one_given():
    rows = [["Keyword", "Top of page bid (low range)", "Top of page bid (high range)"],
            ["a", "0.50", "1.50"], ["b", "", "2.00"], ["c", "0.40", "-"], ["d", "", ""],
            ["e", "cheap", "3"]]
    content = "\n".join(",".join(row) for row in rows).encode()
    shaping = Shaping(io.BytesIO(content), Choice(language="en", country="US"))
    assert shaping.choice.number_column("cpc") == "Top of page bid (low range)"
    assert [row[4:] for row in shaping.first(5, numbers=True)] == [
        ["1"], ["2"], ["0.4"], [""], ["3"]]
    (low, high) = shaping.numbers.columns
    assert (low.unreadable, low.lines, high.unreadable) == (1, [6], 0)
    # Chosen as the high bid, the pair is read all the same.
    chosen = Shaping(io.BytesIO(content), Choice(
        language="en", country="US", numbers=(("cpc", "Top of page bid (high range)"),)))
    assert [row[4:] for row in chosen.first(1, numbers=True)] == [["1"]]


@pytest.mark.parametrize(("header", "guessed"), [
    (["Häufigste Suchanfragen", "Klicks", "Impressionen", "CTR", "Durchschnittliche Position"],
     {"clicks": "Klicks", "impressions": "Impressionen", "ctr": "CTR",
      "position": "Durchschnittliche Position"}),
    (["Requêtes les plus fréquentes", "Clics", "Impressions", "CTR", "Position"],
     {"clicks": "Clics", "impressions": "Impressions", "ctr": "CTR", "position": "Position"}),
    (["Consultas principales", "Clics", "Impresiones", "CTR", "Posición"],
     {"clicks": "Clics", "impressions": "Impresiones", "ctr": "CTR", "position": "Posición"}),
    (["Keyword", "Competition", "Avg. monthly searches", "Top of page bid (low range)",
      "Top of page bid (high range)"],
     {"volume": "Avg. monthly searches", "cpc": "Top of page bid (low range)"}),
    (["Keyword", "Volume", "KD %", "CPC (USD)", "Global volume"],
     {"volume": "Volume", "difficulty": "KD %", "cpc": "CPC (USD)"}),
])
def test_number_columns_are_guessed_from_the_tools_headers(header, guessed):
    choice = guess(header)
    assert {name: column for name, column in choice.numbers if column} == guessed
