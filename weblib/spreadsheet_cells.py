"""CSV cells a spreadsheet cannot run: the one rule of Tagdesk's CSV files against formula
injection (the dashboard's export, the settings area's file of rejected rows), its exact
inverse for the import, and the CSV line both files are written with.

A spreadsheet program runs a cell as a formula when it starts with =, +, - or @, and some
programs when a tab, a line break, spaces or a double quote come first. Which character
separates cells depends on the program and the locale: a comma, a semicolon or a tab; a line
break starts a row. So the cell `semi;=1+1;`, written for commas, is three cells where the
list separator is a semicolon, and one of them is `=1+1` (OWASP's CSV injection advice: the
field separators and the characters after them count, not only a cell's first character).

Every place where a spreadsheet could start a cell is therefore a *segment start*: the cell's
start and the position after each comma, semicolon, tab, carriage return or line feed in it.
What follows a segment start is *dangerous* when, after any apostrophes and then any spaces
(any Unicode white space that separates nothing) or double quotes, it starts with =, +, -, @, a
tab, a carriage return or a line feed.

- `guard_cell` puts an apostrophe at every segment start that a dangerous text follows; a
  spreadsheet shows a cell that starts with an apostrophe as text.
- `unguard_cell` takes one apostrophe away at every segment start where an apostrophe and then
  a dangerous text follow — exactly what `guard_cell` added. Apostrophes already there count
  in the rule (`'=x` is dangerous, and is guarded as `''=x`), so every text survives:
  `unguard_cell(guard_cell(text)) == text` for every string, and no segment of a guarded cell
  starts (after spaces or double quotes) with a formula character, a tab or a line break.
- `csv_line` writes a row with commas, quoting every cell that holds a comma, a semicolon, a
  tab, a line break or a double quote (the csv module's QUOTE_MINIMAL quotes only its own
  delimiter): a program that reads with another separator keeps such a cell whole when it
  starts its line. Elsewhere in the line the quotes start no field for such a program, and the
  cell is split: that is why every segment is guarded, not only the cell's start.

Guarding adds characters only after a segment start, and the rule looks at the characters
after a segment start only up to the first one that is not an apostrophe, a space or a double
quote — none of which separates segments — so guarding one segment never changes the verdict
on another, and the inverse finds the same segment starts and the same verdicts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Where a spreadsheet in some locale could end a cell (and start another) or a row.
SEPARATORS = ",;\t\r\n"
# What makes a segment a formula (or lets a program read one into it).
FORMULA_CHARACTERS = "=+-@\t\r\n"
# White space skipped before a formula character: every character str.isspace() knows that
# is not a separator (tests/security/test_spreadsheet_cells.py checks the list).
SPACES = ("\x0b\x0c\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
          "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
QUOTE = '"'

_START = f"(?:^|(?<=[{re.escape(SEPARATORS)}]))"
_DANGEROUS = f"'*[{re.escape(SPACES + QUOTE)}]*[{re.escape(FORMULA_CHARACTERS)}]"
_GUARD = re.compile(f"{_START}(?={_DANGEROUS})")
_UNGUARD = re.compile(f"{_START}'(?={_DANGEROUS})")
# Without any of these a text has nothing to guard (the usual cell: one quick look).
_FORMULA_CHARACTER = re.compile(f"[{re.escape(FORMULA_CHARACTERS)}]")
_NEEDS_QUOTES = re.compile(f"[{re.escape(SEPARATORS + QUOTE)}]")


def guard_cell(text: str) -> str:
    """The text with an apostrophe at every segment start a dangerous text follows."""
    return _GUARD.sub("'", text) if _FORMULA_CHARACTER.search(text) else text


def unguard_cell(text: str) -> str:
    """The text as it was before `guard_cell`: one apostrophe less at every segment start where
    an apostrophe and a dangerous text follow."""
    return _UNGUARD.sub("", text) if "'" in text else text


def csv_line(cells: Iterable[object]) -> str:
    """One CSV row ending in CRLF, comma-separated; a cell that holds a separator of any
    locale, a line break or a double quote in double quotes (double quotes doubled). The cells
    are written as they are: guard them first."""
    needs_quotes = _NEEDS_QUOTES.search
    return ",".join([f'"{cell.replace(QUOTE, QUOTE * 2)}"' if needs_quotes(cell) else cell
                     for cell in map(str, cells)]) + "\r\n"
