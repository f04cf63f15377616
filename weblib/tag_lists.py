"""A list of tag names in one cell of a CSV file: how the dashboard's export writes it and how
every import reads it back, one rule for both, so that every name a tag may have survives.

Names are joined by "; ". The import splits a cell at ";" and, in files of other tools, at a
separator chosen or guessed ("," or "|", or any text given), so a name that holds ";", ",",
"|" or starts with a double quote is written in double quotes, as a CSV field is, its double
quotes doubled: `"price; cheap"; brand; "a, ""b"" | c"`. Reading, a piece of the cell that is
such a quoted name (spaces around it allowed) is that name, whatever separators it holds;
any other piece is read as it is, trimmed — so cells written before, without quotes, read as
they did unless a name in them starts and ends with a double quote. (The import's own shape,
written from another tool's file, joins names by ";" and quotes only what ";" would cut.)

The cell is guarded against formulas as a whole afterwards (weblib/spreadsheet_cells.py), and
unguarded as a whole before it is split.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

SEPARATOR = ";"  # always separates names
# What a reader may also split a cell at (service/imports/import_sources.py guesses among these).
OTHER_SEPARATORS = (",", "|")
# Every separator an import may split a file's tags cell at: what an export must quote.
ANY_READER = (SEPARATOR, *OTHER_SEPARATORS)
QUOTE = '"'
# A quoted name anywhere (doubled quotes inside): what separates nothing. Possessive, so a
# quote that is never closed costs one look to the end, never a search back.
_QUOTED = re.compile(r'"(?:[^"]|"")*+"')


def join_tag_names(names: Iterable[str], read_at: tuple[str, ...] = ANY_READER,
                   between: str = "; ") -> str:
    """The cell that holds these names (tag names: trimmed, not empty), joined by `between`,
    for a reader that splits at `read_at`: a name holding one of those, or starting with a
    double quote, is quoted."""
    needs_quotes = _needs_quotes(read_at).search
    return between.join(QUOTE + name.replace(QUOTE, QUOTE * 2) + QUOTE if needs_quotes(name)
                        else name for name in names)


@lru_cache(maxsize=64)
def _needs_quotes(read_at: tuple[str, ...]) -> re.Pattern:
    return re.compile(f"{_alternatives(read_at)}|^{QUOTE}")


def split_tag_names(cell: str, separators: tuple[str, ...] = (SEPARATOR,)) -> list[str]:
    """The names of a cell, in order, trimmed, empty ones dropped; `separators`: each text
    that separates names (";" among them for the import's own shape)."""
    if QUOTE in cell:
        found = _pieces(cell, _tokens(separators))
    elif len(separators) == 1:  # the usual cell of the import's own shape: no regex needed
        found = cell.split(separators[0])
    else:
        found = _plain(separators).split(cell)
    return [name for name in map(str.strip, found) if name]


def separators_in(cell: str, candidates: Iterable[str]) -> list[str]:
    """Which of `candidates` the cell holds outside its quoted names (a guess of what
    separates them: a "," inside "price, cheap" separates nothing)."""
    outside = _QUOTED.sub("", cell) if QUOTE in cell else cell
    return [separator for separator in candidates if separator in outside]


def _pieces(cell: str, tokens: re.Pattern) -> list[str]:
    found, at = [], 0
    while at < len(cell):
        token = tokens.match(cell, at)
        quoted, plain = token.groups()
        found.append(quoted.replace(QUOTE * 2, QUOTE) if quoted is not None else plain)
        at = token.end()
    return found


def _alternatives(separators: tuple[str, ...]) -> str:
    # Longest first: a separator that begins another (" /" and " / ") cuts at the longer.
    return "|".join(map(re.escape, sorted(separators, key=len, reverse=True)))


@lru_cache(maxsize=64)
def _plain(separators: tuple[str, ...]) -> re.Pattern:
    return re.compile(_alternatives(separators))


@lru_cache(maxsize=64)
def _tokens(separators: tuple[str, ...]) -> re.Pattern:
    """One name and the separator after it (or the cell's end): a quoted name, with spaces
    around it, when one is there; else the text up to the next separator."""
    cut = f"(?:{_alternatives(separators)}|\\Z)"
    return re.compile(rf'\s*+"((?:[^"]|"")*+)"\s*+{cut}|(.*?){cut}', re.S)
