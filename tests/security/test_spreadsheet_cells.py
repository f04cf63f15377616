"""The rule of Tagdesk's CSV files against formula injection (weblib/spreadsheet_cells.py),
proved on strings: exhaustively on every string of up to six characters of a small alphabet
that holds every character the rule treats apart, and with hypothesis on any strings.

- `unguard_cell(guard_cell(text)) == text` for every text: the import takes off exactly what
  the export added.
- No segment of a guarded cell — its start, or the text after any comma, semicolon, tab,
  carriage return or line feed in it — starts, after spaces or double quotes, with a formula
  character (=, +, -, @), a tab or a line break. The check below is written out on its own,
  not with the module's regular expressions.
- `csv_line` reads back as the cells it was given, and quotes every cell that holds a comma,
  a semicolon, a tab, a line break or a double quote.
"""

from __future__ import annotations

import csv
import io
import itertools
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st

from weblib.spreadsheet_cells import SEPARATORS, SPACES, csv_line, guard_cell, unguard_cell

FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")
# One of each kind: apostrophe, formula characters, separators (some formula characters too),
# a space, another white space, a double quote, a letter.
ALPHABET = "'=-;,\t\n \u3000\"a"
SMALL = "'=;\t \"a"

texts = st.text(st.one_of(st.sampled_from(ALPHABET), st.characters()), max_size=40)


def segments(cell: str) -> list[str]:
    """What follows every place where a spreadsheet could start a cell: the cell's start and
    the position after each separator."""
    starts = [0] + [index + 1 for index, character in enumerate(cell) if character in SEPARATORS]
    return [cell[start:] for start in starts]


def runs_as_formula(text: str) -> bool:
    return text.lstrip(SPACES + '"').startswith(FORMULA)


def assert_guarded_and_undone(text: str) -> None:
    guarded = guard_cell(text)
    assert unguard_cell(guarded) == text, (text, guarded)
    assert not any(runs_as_formula(segment) for segment in segments(guarded)), (text, guarded)
    # The guard adds apostrophes only, and no more than one a segment.
    assert guarded.replace("'", "") == text.replace("'", "")
    assert len(guarded) - len(text) <= len(segments(text))


def test_the_spaces_skipped_are_every_white_space_that_separates_nothing():
    spaces = (chr(code) for code in range(sys.maxunicode + 1))
    assert "".join(c for c in spaces if c.isspace() and c not in SEPARATORS) == SPACES


def test_every_short_string_of_the_characters_that_matter_is_guarded_and_undone():
    count = 0
    for length in range(7):
        for characters in itertools.product(SMALL, repeat=length):
            assert_guarded_and_undone("".join(characters))
            count += 1
    assert count == sum(len(SMALL) ** n for n in range(7))


@settings(max_examples=3000, deadline=None)
@given(texts)
@example("semi;=1+1;")
@example("'=already; ''+twice")
@example("\t=1")
@example(" \t=1")
@example("a,\"=1")
@example("x;\u3000@SUM(1)")
def test_any_string_is_guarded_and_undone(text):
    assert_guarded_and_undone(text)


def test_what_the_guard_writes():
    assert guard_cell("semi;=1+1;") == "semi;'=1+1;"
    assert guard_cell("=a; =b") == "'=a;' =b"
    assert guard_cell("'=x") == "''=x"
    assert guard_cell("'; DROP TABLE queries; --") == "'; DROP TABLE queries;' --"
    assert guard_cell("brand; sale") == "brand; sale"
    assert guard_cell("t-shirt, e-mail") == "t-shirt, e-mail"
    assert guard_cell("\tx") == "'\tx"
    assert unguard_cell("'plain") == "'plain"  # not an apostrophe of the guard's
    assert unguard_cell("semi;'=1+1;") == "semi;=1+1;"


@settings(max_examples=500, deadline=None)
@given(st.lists(texts, min_size=1, max_size=5))
def test_a_csv_line_reads_back_as_its_cells_and_quotes_every_separator(cells):
    line = csv_line(cells)
    assert line.endswith("\r\n")
    assert next(csv.reader(io.StringIO(line))) == cells or cells == [""]
    for cell in cells:
        if any(separator in cell for separator in ",;\t\r\n\""):
            assert f'"{cell.replace(chr(34), chr(34) * 2)}"' in line


def test_a_csv_line_of_plain_cells_is_what_the_csv_module_writes():
    cells = ["laufschuhe damen", "de", "DE", "brand", 7, "shoes, red", 'say "hi"', ""]
    written = io.StringIO()
    csv.writer(written, lineterminator="\r\n").writerow(cells)
    assert csv_line(cells) == written.getvalue()
