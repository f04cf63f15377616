"""Importing queries from a CSV file, for the settings area's import jobs and the command line.

The file: UTF-8 (with or without a byte order mark), its first line the header
`query,language,country,tags` (tag names joined by ";"), separated by commas or by semicolons
as spreadsheets export it, fields in double quotes where needed. The separator is decided from
the header line in one pass (`_delimiter`): csv.Sniffer took time quadratic in the line's
length, holding Python's lock (a 60 KB first line of `",` held every request of the process
for 47 s).

- Bounds: the first line is at most HEADER_BYTES (8 KiB), or the file is refused; a row (a
  line, or the lines of a quoted field that spans several) is at most MAX_LINE characters
  (64 Ki), or it is rejected by its line number, read a piece at a time and never held whole.

- A file that is not such a CSV file — binary data, UTF-16, bytes that are not UTF-8, a first
  line that is not the header — raises `NotCsv` with a sentence, before anything is written.
- Each data row is checked with the API's own rules (service/bodies/validation.py: texts of at most
  1000 characters, codes of at most 35, no control characters), and its tag names must be tags
  of the project (compared without regard to case, as the API's `tagNames`). A row that breaks
  a rule is rejected with its line number and the reason in words; the other rows are imported.
- Rows are normalized as `admin.normalize_query` does (trimmed; language lower-case, country
  upper-case) and matched on (query, language, country), as PATCH /api/queries/many/tags-only
  matches them: a row whose query the project has already, or that repeats an earlier row of
  the file, is "already present" and left as it is. Importing a file twice adds nothing.
- A tag deleted while the import runs is left out of the rows that named it (they go in
  without it), and the counts name it (`Counts.deleted_tags`, `deleted_tags_sentence`). A tag merged
  into another meanwhile is not lost: its rows go in with the tag it went into (following a
  chain of merges), and the counts say so (`Counts.retagged`, `tag_changes_sentence`).
- Memory stays flat: the file is read as a stream and its rows staged in temporary tables
  (service/bulk_load.py), then added in the order of their text a range at a time, one
  transaction each (`import_file`) — so an import that is stopped keeps the ranges it
  finished, and importing the same file again adds the rest.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from operator import itemgetter
from typing import BinaryIO

import numpy as np
from pydantic import TypeAdapter, ValidationError
from sqlalchemy import column, select, table
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session

from weblib.spreadsheet_cells import csv_line, guard_cell, unguard_cell
from weblib.sqlite import BEGIN_OPTION
from weblib.tag_lists import split_tag_names
from weblib.tag_names import fold_tag_name
from weblib.text_rules import forbidden_character

from ..bodies.validation import MAX_CODE, MAX_STRING, Code, Text
from ..engine import bulk_load
from ..engine.numbers import BY_NAME as NUMBERS_BY_NAME
from ..engine.numbers import NAMES as NUMBER_NAMES
from ..org import admin
from ..store.db import begin_write, retryable
from ..store.models import Id, Tag, utcnow
from . import number_values

COLUMNS = ("query", "language", "country", "tags")
REQUIRED = ("query", "language", "country")
# Columns of Tagdesk's own CSV files, read and ignored: a file of rejected rows (line, reason)
# can be fixed and imported again, and so can the dashboard's export (updated).
IGNORED = ("line", "reason", "updated")
# A query's numbers (service/engine/numbers.py), each a column of its own name, optional:
# "1234", "4.5", "3.5%" (a CTR), read as number_values reads a column with decimal points.
# A row's CTR is its clicks ÷ its impressions where both are known, else its CTR column's.
NUMBER_COLUMNS = NUMBER_NAMES
DELIMITERS = ",;"
TAG_SEPARATOR = ";"

# Rows a transaction, read or added: fewer commits, WAL checkpoints and FTS segments cost less
# per row; SQLite's write lock is held while a range is added, 1–2 s at this size (other
# writers wait for it).
BATCH_ROWS = 50_000
# A batch is also cut when the fields of its rejected rows hold this many characters (a row
# holds at most MAX_LINE).
BATCH_CHARACTERS = 4_000_000
# The longest first line (the header; its byte order mark not counted): a header of the six
# columns an import knows, in quotes and with spaces, is a few dozen bytes.
HEADER_BYTES = 8 * 1024
# The most characters of a row (a line, or the lines of a quoted field that spans several):
# a longer one is rejected by its line number, read a piece at a time and never held whole
# (a 500 MiB line held took 1 GiB). A query holds at most 1,000 characters.
MAX_LINE = 64 * 1024
# The pieces a rejected long line is read and dropped in.
DROP_PIECE = 256 * 1024
SCAN_BYTES = 1024 * 1024
ATTEMPTS = 3  # a batch that met another writer's same new query (PostgreSQL) is tried again

SAVE_AS = "Save it as “CSV UTF-8” in your spreadsheet program and import that file."

_CHARACTER_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return",
                    "\x00": "a NUL character"}
_TEXT = TypeAdapter(Text)
_CODE = TypeAdapter(Code)
# The three trimmed values of a row at once: one call for the usual good row; the values one
# by one (_problem) only to say what is wrong.
_ROW = TypeAdapter(tuple[Text, Code, Code])


class NotCsv(ValueError):  # noqa: N818 — a sentence for the person, not a program's error
    """The file cannot be imported at all; the message says why, in a sentence."""


@dataclass(frozen=True)
class Header:
    delimiter: str
    names: tuple[str, ...]  # the columns, lower-case, in the file's order

    @property
    def width(self) -> int:
        return len(self.names)

    @cached_property
    def positions(self) -> tuple[int | None, ...]:
        """Where query, language, country and tags are (None: no such column)."""
        return tuple(self.names.index(name) if name in self.names else None
                     for name in COLUMNS)

    @cached_property
    def numbers(self) -> tuple[tuple[str, int], ...]:
        """The numbers the file has a column of, and where."""
        return tuple((name, self.names.index(name)) for name in NUMBER_COLUMNS
                     if name in self.names)

    @cached_property
    def required_width(self) -> int:
        """How many fields a row needs to have query, language and country."""
        return max(self.names.index(name) for name in REQUIRED) + 1


@dataclass(frozen=True)
class Rejected:
    """A row that was not imported: where, why, and its fields as the file had them."""

    line: int
    reason: str
    query: str = ""
    language: str = ""
    country: str = ""
    tags: str = ""
    # Its cells of the file's number columns, (number, cell) in the file's order.
    numbers: tuple[tuple[str, str], ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return self.query, self.language, self.country, self.tags, *(
            cell for _name, cell in self.numbers)


@dataclass
class Batch:
    rows: list[admin.NewQuery] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    read: int = 0         # data rows read (blank lines are not rows)
    blank: int = 0        # blank lines passed over (blank_lines_phrase)
    last_line: int = 0    # the last line of the file read so far
    bytes_read: int = 0   # how far into the file
    characters: int = 0   # of the rejected rows' fields
    # The rows' numbers where the file has number columns (RowNumbers.read_cells: a row each,
    # in the rows' order), staged with them (bulk_load.Load.stage).
    numbers: np.ndarray | None = None

    def numbers_each(self) -> list[tuple | None]:
        """Each row's numbers (as RowNumbers.read_all gives them)."""
        if self.numbers is None:
            return [None] * len(self.rows)
        return number_tuples(self.numbers)


@dataclass(frozen=True)
class Counts:
    rows: int = 0      # data rows read
    added: int = 0
    present: int = 0   # already in the project, or earlier in the file
    rejected: int = 0
    last_line: int = 0
    bytes_read: int = 0
    blank: int = 0     # blank lines passed over: not rows, said once (blank_lines_phrase)

    # The tags deleted while the import ran, left out of the rows that named them.
    deleted_tags: tuple[str, ...] = ()
    # The tags merged into another while the import ran: (its name, the other's), the rows
    # that named it added with the other.
    retagged: tuple[tuple[str, str], ...] = ()
    tagged: int = 0    # new queries that rules tagged as they entered (engine/entry_rules.py)
    # Queries already present whose numbers the file changed (an import), or would (a check).
    renumbered: int = 0

    def read(self, batch: Batch) -> Counts:
        return replace(self, rows=self.rows + batch.read,
                       rejected=self.rejected + len(batch.rejected),
                       blank=self.blank + batch.blank,
                       last_line=batch.last_line, bytes_read=batch.bytes_read)

    def inserted(self, rows: int, added: int, tagged: int = 0, renumbered: int = 0) -> Counts:
        return replace(self, added=self.added + added, present=self.present + rows - added,
                       tagged=self.tagged + tagged, renumbered=self.renumbered + renumbered)


def summary(counts: Counts) -> str:
    """"1,204 added, 3 already present, 2 rejected" — the report's line, everywhere."""
    line = (f"{counts.added:,} added, {counts.present:,} already present"
            f"{renumbered_phrase(counts.renumbered, 'updated')}, "
            f"{counts.rejected:,} rejected") + blank_lines_phrase(counts.blank)
    if counts.tagged:  # said only when rules did something: reports without rules stay as they were
        queries = "1 query" if counts.tagged == 1 else f"{counts.tagged:,} queries"
        line += f", {queries} tagged by rules"
    return line


def renumbered_phrase(count: int, done: str) -> str:
    """" (2 with their numbers updated)" after the count of queries already present ("" if
    none): `done` is "updated" (an import) or "to update" (a check)."""
    if not count:
        return ""
    return f" ({count:,} with {'its' if count == 1 else 'their'} numbers {done})"


def renumbered_sentence(counts: Counts) -> str:
    """What an import's report says of the present queries whose numbers it changed ("" if
    none), beside its counts (which an import job keeps without them)."""
    if not counts.renumbered:
        return ""
    if counts.renumbered == 1:
        return "1 query already present had its numbers updated."
    return f"{counts.renumbered:,} queries already present had their numbers updated."


def blank_lines_phrase(count: int) -> str:
    """", 2 blank lines passed over" after a report's counts ("" if none was): a line with
    no cells, separators only or empty cells is no row, so neither added nor rejected."""
    if not count:
        return ""
    return ", 1 blank line passed over" if count == 1 else \
        f", {count:,} blank lines passed over"


def deleted_tags_sentence(counts: Counts) -> str:
    """What the report says of tags deleted while the import ran ("" if none was)."""
    if not counts.deleted_tags:
        return ""
    names = [f"“{name}”" for name in counts.deleted_tags]
    quoted = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    if len(counts.deleted_tags) == 1:
        return (f"The tag {quoted} was deleted during the import: its rows were added "
                "without it.")
    return (f"The tags {quoted} were deleted during the import: their rows were added "
            "without them.")


def retagged_sentences(counts: Counts) -> str:
    """What the report says of tags merged into another while the import ran ("" if none
    was), a sentence a tag."""
    return " ".join(f"The tag “{name}” was merged into “{into}” during the import: its rows "
                    f"were added with “{into}”." for name, into in counts.retagged)


def tag_changes_sentence(counts: Counts) -> str:
    """What the report says of the tags the file names that were merged or deleted while the
    import ran ("" if none was)."""
    return " ".join(filter(None, [retagged_sentences(counts), deleted_tags_sentence(counts)]))


def rejected_line(rejected: Rejected) -> str:
    return f"Line {rejected.line:,}: {rejected.reason}"


def tag_names_in(field_text: str) -> list[str]:
    """The tag names of a row's tags field (its guard off): each once, trimmed, empty ones
    dropped; a name in double quotes kept whole (weblib/tag_lists.py)."""
    return list(dict.fromkeys(split_tag_names(field_text, (TAG_SEPARATOR,))))


class MissingTags:
    """How many rejected rows name each tag the project lacks, by name as first written."""

    def __init__(self, tags: dict[str, int]) -> None:
        self.tags = tags
        self.rows: Counter[str] = Counter()
        self.names: dict[str, str] = {}

    def add(self, rejected: Iterable[Rejected]) -> None:
        for row in rejected:
            for name in tag_names_in(row.tags):
                folded = fold_tag_name(name)
                if folded and folded not in self.tags:
                    self.names.setdefault(folded, name)
                    self.rows[folded] += 1

    def sentence(self, most: int = 5) -> str:
        """"12 rows name tags this project does not have: product (8), price (4).", or ""."""
        if not self.rows:
            return ""
        counted = self.rows.most_common()
        listed = ", ".join(f"{self.names[folded]} ({count:,})"
                           for folded, count in counted[:most])
        more = f" and {len(counted) - most:,} more" if len(counted) > most else ""
        return (f"Rows name tags this project does not have: {listed}{more}. Create them "
                "first, or import with the tags created.")


# --- is it a CSV file at all? ------------------------------------------------------------------


def check_file(binary: BinaryIO) -> Header:
    """The file's header, or NotCsv. Reads the whole file once (every byte must be UTF-8, so
    that a file that is not can change nothing) and leaves it at its start."""
    binary.seek(0)
    start = binary.read(8192)
    if not start:
        raise NotCsv("The file is empty.")
    if start.startswith(b"PK\x03\x04"):
        raise NotCsv("This is a spreadsheet workbook (such as .xlsx), not a CSV file. "
                      + SAVE_AS)
    if start.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise NotCsv("The file is UTF-16 text, and an import reads UTF-8. " + SAVE_AS)
    if b"\x00" in start:
        raise NotCsv("This is not a CSV file: it holds binary data, not text.")
    _check_utf8(binary)
    binary.seek(0)
    # A byte order mark, the line and its line end fit in this.
    start = binary.read(HEADER_BYTES + 8)
    header = _header(start, ended=len(start) < HEADER_BYTES + 8)
    binary.seek(0)
    return header


def in_own_shape(binary: BinaryIO) -> bool:
    """Whether the file has the import's own shape (check_file takes it); left at its start.
    A file of any other shape is read through service/imports/import_sources.py first."""
    try:
        check_file(binary)
        return True
    except NotCsv:
        binary.seek(0)
        return False


def _check_utf8(binary: BinaryIO) -> None:
    binary.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    while True:
        chunk = binary.read(SCAN_BYTES)
        try:
            decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as error:
            line += chunk.count(b"\n", 0, max(error.start, 0))
            raise NotCsv(f"The file is not UTF-8 text: line {line:,} has bytes that are not "
                         "UTF-8 (the file may have been saved as Windows-1252 or another "
                         "encoding). " + SAVE_AS) from None
        if not chunk:
            return
        line += chunk.count(b"\n")


HEADER_SENTENCE = ("The first line must be the header query,language,country,tags "
                   "(separated by commas or semicolons; tags may be left out)")


def _header(start: bytes, ended: bool) -> Header:
    """The header from the file's first bytes (`ended`: they are the whole file). Every step is
    linear in the line's length, which is at most HEADER_BYTES."""
    text = codecs.getincrementaldecoder("utf-8-sig")().decode(start, final=False)
    end = min((i for i in (text.find("\n"), text.find("\r")) if i >= 0), default=-1)
    first = text if end < 0 else text[:end]
    if (end < 0 and not ended) or len(first.encode()) > HEADER_BYTES:
        raise NotCsv(HEADER_SENTENCE + f", but this file's first line is longer than "
                                       f"{HEADER_BYTES // 1024} KiB.")
    shown = first if len(first) <= 80 else first[:80] + "…"
    if not first.strip():
        raise NotCsv(HEADER_SENTENCE + ", but this file's first line is empty.")
    delimiter, fields = _delimiter(first)
    if len(fields) < 2:
        raise NotCsv(HEADER_SENTENCE + f". This file's first line is “{shown}”.")
    return parse_header(fields, delimiter, shown)


def _delimiter(first: str) -> tuple[str, list[str]]:
    """The separator of the header line among DELIMITERS, and its fields: the line read with
    each (one pass each); the one whose fields name the required columns, else the one that
    cuts it into more fields (a comma when they tie)."""
    def fields(delimiter: str) -> list[str]:
        try:
            return next(csv.reader([first], delimiter=delimiter, quotechar='"',
                                   doublequote=True, strict=False))
        except (csv.Error, StopIteration):
            return []

    read = [(delimiter, fields(delimiter)) for delimiter in DELIMITERS]

    def rank(choice: tuple[str, list[str]]) -> tuple[bool, int]:
        names = {name.strip().lower() for name in choice[1]}
        return all(name in names for name in REQUIRED), len(choice[1])

    return max(read, key=rank)  # the first of the best: a comma before a semicolon


def parse_header(fields: list[str], delimiter: str, shown: str = "") -> Header:
    names = tuple(name.strip().lower() for name in fields)
    shown = shown or delimiter.join(fields)
    # Linear in the number of columns: a header is at most HEADER_BYTES, but a file that
    # changed may bring a longer one.
    counted = Counter(names)
    unknown = [name for name in counted if name not in COLUMNS + IGNORED + NUMBER_COLUMNS]
    missing = [name for name in REQUIRED if name not in counted]
    repeated = sorted(name for name, count in counted.items() if count > 1)
    if unknown or missing or repeated:
        problems = []
        if missing:
            problems.append("it has no column " + _either(missing))
        if unknown:
            problems.append("an import does not know the column " + _either(unknown))
        if repeated:
            problems.append("it names the column " + _either(repeated) + " twice")
        raise NotCsv(f"{HEADER_SENTENCE}. This file's first line is “{shown}”: "
                     + "; ".join(problems) + ".")
    return Header(delimiter, names)


def _either(names: list[str], most: int = 5) -> str:
    quoted = [f"“{name[:40]}”" + ("…" if len(name) > 40 else "") for name in names[:most]]
    if len(names) > most:
        return ", ".join(quoted) + f" or {len(names) - most:,} more"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


# --- reading and checking the rows -------------------------------------------------------------


def project_tags(session: Session, project_id: str) -> dict[str, int]:
    """The project's tags by folded name (names are compared without regard to case)."""
    return {folded: tag_id for tag_id, folded in session.execute(
        select(Tag.id, Tag.name_folded).where(Tag.project_id == project_id))}


def tag_names(session: Session, project_id: str) -> dict[int, str]:
    """The project's tags' names by id, as they are when the import starts."""
    return {tag_id: name for tag_id, name in session.execute(
        select(Tag.id, Tag.name).where(Tag.project_id == project_id))}


class _TooLong(Exception):  # noqa: N818 — a row's fate, not a program's error
    """The row being read is longer than MAX_LINE characters (the rest of its line dropped)."""


TOO_LONG = f"This line is longer than {MAX_LINE:,} characters, the most a row may have."


class _Lines:
    """The file's lines for csv.reader, each row at most `limit` characters: a longer one is
    read to its end a piece at a time and dropped, and the reader's next() raises _TooLong
    (csv.reader starts its next row afresh). `number`: the lines read so far; `row` is set to
    0 before each row."""

    def __init__(self, text: io.TextIOBase, limit: int = MAX_LINE) -> None:
        self.readline = text.readline
        self.limit = limit
        self.number = 0
        self.row = 0              # characters of the row being read so far
        self.after_cr = False     # a dropped line ended with "\r": a "\n" next ends it too

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        room = self.limit - self.row
        # Up to two characters more: the line's end ("\r\n" at most).
        line = self.readline(room + 2)
        if self.after_cr:
            self.after_cr = False
            if line == "\n":
                line = self.readline(room + 2)
        if not line:
            raise StopIteration
        self.number += 1
        if len(line) > room:  # perhaps too long: its end not counted
            ended = 2 if line.endswith("\r\n") else 1 if line.endswith(("\n", "\r")) else 0
            if len(line) - ended > room:
                while line and not line.endswith(("\n", "\r")):
                    line = self.readline(DROP_PIECE)
                self.after_cr = line.endswith("\r")
                raise _TooLong()
        self.row += len(line)
        return line


class RowNumbers:
    """How a row's numbers are read: a reader for each number column of the file
    (number_values.Column, decimal points; `columns`, which count what they cannot read).
    A CTR is clicks ÷ impressions where the file has both and a row knows both: its CTR
    column is read only for the other rows."""

    def __init__(self, header: Header) -> None:
        self.columns = [number_values.Column(NUMBERS_BY_NAME[name], name=name)
                        for name, _index in header.numbers]
        self.names = [name for name, _index in header.numbers]
        # A row's number cells, in the order of `names`, as one tuple (read_cells).
        indexes = [index for _name, index in header.numbers]
        self.taken = itemgetter(*indexes) if len(indexes) > 1 else \
            (lambda fields, at=(indexes or [0])[0]: (fields[at],))
        readers = [(name, index, column.stored)
                   for (name, index), column in zip(header.numbers, self.columns, strict=True)]
        self.derives_ctr = "clicks" in header.names and "impressions" in header.names
        self.ctr = next(((index, stored) for name, index, stored in readers
                         if name == "ctr"), None) if self.derives_ctr else None
        self.cells = [reader for reader in readers
                      if not (self.derives_ctr and reader[0] == "ctr")]

    def read(self, fields: list[str], line: int) -> dict[str, int] | None:
        """The row's stored numbers by name (None when it has none)."""
        found = {}
        for name, index, stored in self.cells:
            if text := fields[index]:
                value = stored(text, line)
                if value is not None:
                    found[name] = value
        if self.derives_ctr:
            impressions = found.get("impressions")
            if impressions and found.get("clicks", impressions + 1) <= impressions:
                found["ctr"] = round(found["clicks"] * _CTR.scale / impressions)
            elif self.ctr is not None and (text := fields[self.ctr[0]]) and \
                    (value := self.ctr[1](text, line)) is not None:
                found["ctr"] = value
        return found or None

    def read_all(self, rows: list[list[str]], lines: list[int]) -> list[tuple | None]:
        """The numbers of many rows at once (`read` of each, in their order, the same cells
        counted): each row's stored values in the order of NUMBER_NAMES (None: unknown), or
        None when it has none."""
        cells: list[str] = []
        for fields in rows:
            cells.extend(self.taken(fields))
        return number_tuples(self.read_cells(cells, lines))

    def read_cells(self, cells: list[str], lines: list[int]) -> np.ndarray:
        """As read_all, of the rows' number cells (`taken`) one after the other in one list
        (a list of texts, which Python's collector does not go over), as an array: a row
        each, a column each of NUMBER_NAMES (-1: unknown). Each column is read whole
        (Column.stored_all), the CTRs divided at once; no object is made a row."""
        width = len(self.names)
        count = len(cells) // width
        table = np.full((count, len(NUMBER_NAMES)), -1, dtype=np.int64)
        if not count:
            return table
        at = {name: place for place, name in enumerate(NUMBER_NAMES)}
        for name, _index, _stored in self.cells:
            place = self.names.index(name)
            table[:, at[name]] = self.columns[place].stored_all(cells[place::width], lines)
        if self.derives_ctr:
            clicks, impressions = table[:, at["clicks"]], table[:, at["impressions"]]
            derived = (impressions > 0) & (clicks >= 0) & (clicks <= impressions)
            given, over = clicks[derived], impressions[derived]
            if len(given) and int(given.max()) * _CTR.scale < 2 ** 53:
                # Exact as floats, so divided as Python divides the integers.
                ratio = given.astype(np.float64) * _CTR.scale / over.astype(np.float64)
                table[derived, at["ctr"]] = np.rint(ratio).astype(np.int64)
            elif len(given):
                table[derived, at["ctr"]] = [round(c * _CTR.scale / i) for c, i in zip(
                    given.tolist(), over.tolist(), strict=True)]
            if self.ctr is not None:
                rest = np.flatnonzero(~derived).tolist()
                place = self.names.index("ctr")
                table[rest, at["ctr"]] = self.columns[place].stored_all(
                    [cells[row * width + place] for row in rest], [lines[row] for row in rest])
        return table


def number_tuples(table: np.ndarray) -> list[tuple | None]:
    """Each row of RowNumbers.read_cells' array as a tuple of stored values (None: unknown),
    or None when it has none."""
    known = table >= 0
    values = table.astype(object)
    values[~known] = None
    found: list[tuple | None] = list(zip(*(values[:, place].tolist()
                                           for place in range(len(NUMBER_NAMES))), strict=True))
    for place in np.flatnonzero(~known.any(axis=1)).tolist():
        found[place] = None
    return found


_CTR = NUMBERS_BY_NAME["ctr"]


def read_batches(binary: BinaryIO, header: Header, tags: dict[str, int],
                 batch_rows: int = BATCH_ROWS, title_lines: int = 0,
                 numbers: list[number_values.Column] | None = None) -> Iterator[Batch]:
    """The file's data rows, checked, in batches; the last batch (perhaps empty) ends at the
    end of the file. Only one batch is held at a time. Blank lines are counted, but for the
    first `title_lines` after the header: the places of the title lines of the file this one
    was written from (service/imports/import_sources.py), which are no part of its data.
    The readers of the file's number columns, which count the cells they cannot read, are
    added to `numbers` if given."""
    readers = RowNumbers(header) if header.numbers else None
    if numbers is not None and readers is not None:
        numbers.extend(readers.columns)
    size = _size(binary)
    binary.seek(0)
    text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
    try:
        lines = _Lines(text)
        reader = csv.reader(lines, delimiter=header.delimiter, quotechar='"', doublequote=True,
                            strict=False)
        try:
            first = next(reader)
        except (_TooLong, csv.Error, StopIteration):
            first = []
        if parse_header(first, header.delimiter) != header:
            raise NotCsv("The file changed while it was being imported.")
        batch = Batch()
        # The number cells of a rejected line that could not be read (the file's columns kept).
        no_numbers = tuple((name, "") for name, _index in header.numbers)
        # The number cells and lines of the batch's rows, read at once (read_cells). The same
        # two lists for every batch, emptied: a list made anew each batch was young at the
        # collector's young passes, which went over every cell it held (1M rows with seven
        # numbers: 0.58 s of collecting, now 0.49).
        numbered: list[str] = []
        numbered_lines: list[int] = []
        width = header.width
        while True:
            line = lines.number + 1
            lines.row = 0
            try:
                fields = next(reader)
            except StopIteration:
                break
            except _TooLong:
                batch.read += 1
                batch.rejected.append(Rejected(line, TOO_LONG, numbers=no_numbers))
            except csv.Error as error:
                batch.read += 1
                batch.rejected.append(Rejected(line, _unreadable(error), numbers=no_numbers))
            else:
                if not any(value.strip() for value in fields):
                    # A blank line, or one of separators only: passed over, counted.
                    batch.blank += line > 1 + title_lines
                    continue
                batch.read += 1
                checked = check_row(fields, header, tags, line)
                if isinstance(checked, Rejected):
                    batch.rejected.append(checked)
                    batch.characters += sum(len(value) for value in checked.fields)
                else:
                    batch.rows.append(checked)
                    if readers is not None:
                        if len(fields) < width:  # a short row: empty cells
                            fields = fields + [""] * (width - len(fields))
                        numbered.extend(readers.taken(fields))
                        numbered_lines.append(line)
            if (len(batch.rows) + len(batch.rejected) >= batch_rows
                    or batch.characters >= BATCH_CHARACTERS):
                batch.last_line, batch.bytes_read = lines.number, min(binary.tell(), size)
                if readers is not None:
                    batch.numbers = readers.read_cells(numbered, numbered_lines)
                    numbered.clear()
                    numbered_lines.clear()
                yield batch
                batch = Batch()
        batch.last_line, batch.bytes_read = lines.number, size
        if readers is not None:
            batch.numbers = readers.read_cells(numbered, numbered_lines)
        yield batch
    finally:
        text.detach()


def _by_name(numbers: tuple) -> dict[str, int]:
    """A row's known numbers (as read_all gives them) by name."""
    return {name: value for name, value in zip(NUMBER_NAMES, numbers, strict=True)
            if value is not None}


def _size(binary: BinaryIO) -> int:
    binary.seek(0, io.SEEK_END)
    return binary.tell()


def _unreadable(error: csv.Error) -> str:
    limit = re.search(r"field larger than field limit \((\d+)\)", str(error))
    if limit:
        return f"A field on this line is longer than {int(limit.group(1)):,} characters."
    return f"This line could not be read as CSV ({error})."


def check_row(fields: list[str], header: Header, tags: dict[str, int],
              line: int, numbers: RowNumbers | None = None) -> admin.NewQuery | Rejected:
    """The row as a new query (normalized, its tags as ids; its numbers, stored, where the
    file has number columns: `numbers`), or why it cannot be one. A number
    that cannot be read rejects nothing: it is unknown, and its reader counts it."""
    width = len(fields)
    if width < header.width:  # a short row: the columns it lacks are empty
        fields = fields + [""] * (header.width - width)
    # A cell's text without the apostrophes Tagdesk's own CSV files put before formulas
    # (weblib/spreadsheet_cells.py): the dashboard's export and the file of rejected rows
    # import as the texts they were written from.
    query, language, country, tag_field = (
        "" if index is None else unguard_cell(fields[index]) for index in header.positions)

    def rejected(*reasons: str) -> Rejected:
        return Rejected(line, " ".join(reasons), query, language, country, tag_field,
                        tuple((name, fields[index]) for name, index in header.numbers))

    if width > header.width or width < header.required_width:
        separator = "comma" if header.delimiter == "," else "semicolon"
        reason = f"This line has {width} fields, but the header has {header.width}."
        if width > header.width:
            reason += f" A field that holds a {separator} must be in double quotes."
        return rejected(reason)

    values = (query.strip(), language.strip(), country.strip())
    reasons = [] if all(values) and _valid(values) else [problem for problem in (
        _problem(query, "query", _TEXT, MAX_STRING),
        _problem(language, "language code", _CODE, MAX_CODE),
        _problem(country, "country code", _CODE, MAX_CODE),
    ) if problem]
    # Each name once, in the file's order, trimmed; empty ones (";;", a trailing ";") dropped.
    names = tag_names_in(tag_field) if tag_field else []
    tag_ids = [tags.get(fold_tag_name(name)) for name in names]
    if None in tag_ids:
        unknown = [name for name, tag_id in zip(names, tag_ids, strict=True) if tag_id is None]
        shown = ", ".join(f"“{name}”" for name in unknown[:5])
        more = f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
        reasons.append(f"This project has no tag named {shown}{more}." if len(unknown) == 1
                       else f"This project has no tags named {shown}{more}.")
    if reasons:
        return rejected(*reasons)
    # The values passed the API's rules, which admin.normalize_query's checks are part of:
    # checking them again took a fifth of reading a file.
    if numbers is not None:
        return (*admin.query_key(*values), tag_ids, None, numbers.read(fields, line))
    return (*admin.query_key(*values), tag_ids, None)


def _valid(values: tuple[str, str, str]) -> bool:
    try:
        _ROW.validate_python(values)
    except ValidationError:
        return False
    return True


def _problem(value: str, what: str, adapter: TypeAdapter, maximum: int) -> str | None:
    """Why the trimmed value would not be accepted by the API, in words; None if it would."""
    value = value.strip()
    if not value:
        return f"The {what} is empty."
    try:
        adapter.validate_python(value)
    except ValidationError:
        if len(value) > maximum:
            return (f"The {what} is {len(value):,} characters long; at most {maximum:,} are "
                    "allowed.")
        character = forbidden_character(value) or ""
        name = _CHARACTER_NAMES.get(character, "a control character")
        return (f"The {what} contains {name} (U+{ord(character or '?'):04X}), which is not "
                "allowed.")
    return None


# --- importing ---------------------------------------------------------------------------------


class Sink:
    """What happens with each batch besides its rows: `write` in the batch's transaction (it
    may run again if the transaction is tried again), `done` once it is committed."""

    def write(self, session: Session, batch: Batch, counts: Counts) -> None:
        pass

    def done(self, batch: Batch, counts: Counts) -> None:
        pass


def import_file(session: Session, project_id: str, binary: BinaryIO, sink: Sink | None = None,
                batch_rows: int = BATCH_ROWS, title_lines: int = 0,
                file_name: str | None = None, update_numbers: bool = True,
                numbers: list[number_values.Column] | None = None) -> Counts:
    """Import a CSV file into a project: every good row is added unless the project has it;
    NotCsv (nothing written) for a file that is not CSV at all.

    Two steps of transactions of `batch_rows` rows, on one connection held throughout (its
    temporary tables keep the rows from one to the next; service/bulk_load.py):

    1. Reading: the file is read and checked a batch at a time; each batch's good rows are
       staged, and the sink writes its rejected rows and the counts, in one transaction.
    2. Adding: the staged rows, numbered in the order of the project's key (text, language,
       country), are added a range at a time, one transaction each. Each range goes into the
       key-ordered indexes as one run beside the last: in the file's order, every batch
       touched nearly every page of those indexes (1M rows on SQLite: 52–57 → 38–41 s).

    An import stopped on the way keeps the ranges it finished. `title_lines`: as read_batches
    takes it. `file_name`: the file's, kept with the import's time on each link its tags
    column makes (where a tag came from). `update_numbers`: a row whose query the project has
    replaces the numbers it names (else they are left as they are). `numbers`: as
    read_batches takes it."""
    sink = sink or Sink()
    if admin.project_by_id(session, project_id) is None:
        raise admin.AdminError(f"No project {project_id}.")
    header = check_file(binary)
    tags = project_tags(session, project_id)
    names = tag_names(session, project_id)
    session.commit()
    with _held(session, project_id) as (held, load):
        load.origin = (file_name, utcnow()) if file_name else None
        load.update_numbers = update_numbers
        counts = _read(held, load, binary, header, tags, sink, batch_rows, title_lines,
                       numbers)
        return _add(held, load, counts, sink, batch_rows, names)


def check_only(session: Session, project_id: str, binary: BinaryIO,
               new_tags: Iterable[str] = (), sink: Sink | None = None,
               batch_rows: int = BATCH_ROWS, title_lines: int = 0,
               update_numbers: bool = True,
               numbers: list[number_values.Column] | None = None) -> Counts:
    """What importing the file would do, writing nothing: its rows read and checked as an
    import checks them (the tags of `new_tags` counted as if they existed), and those the
    project has already (or that an earlier row of the file has) counted as present; with
    `update_numbers`, those present whose numbers the file would change counted as
    `renumbered`. `numbers`: as read_batches takes it."""
    sink = sink or Sink()
    if admin.project_by_id(session, project_id) is None:
        raise admin.AdminError(f"No project {project_id}.")
    header = check_file(binary)
    tags = project_tags(session, project_id)
    for name in new_tags:
        tags.setdefault(fold_tag_name(name), -1)
    counts, seen, numbered, renumbered = Counts(), set(), set(), 0
    for batch in read_batches(binary, header, tags, batch_rows, title_lines, numbers):
        counts = counts.read(batch)
        keys = [row[:3] for row in batch.rows]
        present = bulk_load.present_keys(session, project_id, keys)
        if update_numbers and header.numbers:
            # Each present query once (its first row's numbers), whatever batch it is in.
            given = {row[:3]: _by_name(found) for row, found in reversed(list(zip(
                batch.rows, batch.numbers_each(), strict=True)))
                if found and row[:3] in present and row[:3] not in numbered}
            numbered.update(given)
            renumbered += numbers_changed(session, project_id, list(given.items()))
        # A read transaction a batch: a long check (a job of its own) never holds back the
        # checkpoints of SQLite's log that an import beside it waits for.
        session.rollback()
        new = 0
        for key in keys:
            if key not in present and key not in seen:
                new += 1
            seen.add(key)
        counts = counts.inserted(len(keys), new)
        counts = replace(counts, renumbered=renumbered)
        sink.done(batch, counts)
    session.rollback()
    return counts


def add_rows(session: Session, project_id: str, batches: Iterable[list[admin.NewQuery]],
             batch_rows: int = BATCH_ROWS) -> int:
    """Rows that need no checking (normalized, the project's tag ids: the demo's) added as a
    file's rows are: all staged, then added a range of the key's order at a time, one
    transaction each, by two connections at once on PostgreSQL. Returns how many were added."""
    session.commit()
    with _held(session, project_id) as (held, load):
        # Staging writes temporary tables only: SQLite's write lock is not needed.
        held.connection(execution_options={BEGIN_OPTION: "DEFERRED"})
        load.open()
        rows = 0
        for batch in batches:
            load.stage(batch)
            rows += len(batch)
        held.commit()
        return _add(held, load, Counts(rows=rows), Sink(), batch_rows).added


# The queries' keys and numbers, read where the engine does not count the changes itself.
_QUERIES = table("queries", column("project_id", Id),
                 *map(column, ("query", "language", "country", *NUMBER_NAMES)))


def numbers_changed(session: Session, project_id: str,
                    numbers: list[tuple[tuple[str, str, str], dict[str, int]]]) -> int:
    """How many of these present queries (key, the stored numbers a file gives it) hold
    another value of one of those numbers (or none): the engine's count
    (bulk_load.present_numbers) where it has one, else read here."""
    if not numbers:
        return 0
    if (engine_count := getattr(bulk_load, "present_numbers", None)) is not None:
        return engine_count(session, project_id, numbers)
    given = dict(numbers)
    changed = 0
    for start in range(0, len(numbers), bulk_load.LOOKED_UP):
        texts = sorted({key[0] for key, _ in numbers[start:start + bulk_load.LOOKED_UP]})
        statement = select(*(_QUERIES.c[name] for name in ("query", "language", "country",
                                                           *NUMBER_NAMES))).where(
            _QUERIES.c.project_id == project_id, _QUERIES.c.query.in_(texts))
        for row in session.execute(statement):
            wanted = given.pop(tuple(row[:3]), None)
            if wanted and any(getattr(row, name) != value for name, value in wanted.items()):
                changed += 1
    return changed


@contextmanager
def _held(session: Session, project_id: str) -> Iterator[tuple[Session, bulk_load.Load]]:
    """A connection of its own for a load (its temporary tables hold the staged rows from one
    transaction to the next), with the load's settings; the staged rows dropped after."""
    with session.get_bind().connect() as connection, \
            Session(connection, expire_on_commit=False) as held:
        load = bulk_load.Load.on(connection, project_id)
        load.existing_tags_only = True  # a tag deleted meanwhile: left out, and reported
        load.prepare()
        try:
            yield held, load
        finally:
            _close(held, load)


def _read(held: Session, load: bulk_load.Load, binary: BinaryIO, header: Header,
          tags: dict[str, int], sink: Sink, batch_rows: int, title_lines: int = 0,
          numbers: list[number_values.Column] | None = None) -> Counts:
    begin_write(held)
    load.open()
    held.commit()
    counts = Counts()
    for batch in read_ahead(read_batches(binary, header, tags, batch_rows, title_lines,
                                         numbers)):
        begin_write(held)
        if batch.rows:
            load.stage(batch.rows, batch.numbers)
        counts = counts.read(batch)
        sink.write(held, batch, counts)
        held.commit()
        sink.done(batch, counts)
    return counts


def _add(held: Session, load: bulk_load.Load, counts: Counts, sink: Sink,
         batch_rows: int, names: dict[int, str] | None = None) -> Counts:
    # Numbering the rows writes temporary tables only: SQLite's write lock is not needed.
    held.connection(execution_options={BEGIN_OPTION: "DEFERRED"})
    placed = load.order()
    ranges = load.ranges(placed, batch_rows)
    used = load.used_tags() if names is not None else set()
    held.commit()
    adding = Adding(counts, sink, Batch(last_line=counts.last_line, bytes_read=counts.bytes_read),
                    used, names or {})
    # Round robin: each writer's ranges spread over the whole key, so they end together.
    shares = [ranges[n::load.writers] for n in range(min(load.writers, len(ranges)))]
    if len(shares) > 1:
        _add_at_once(held, load, shares, adding)
    else:
        adding.add(held, load, ranges)
    return adding.counts


def _add_at_once(held: Session, load: bulk_load.Load, shares: list[list[tuple[int, int]]],
                 adding: Adding) -> None:
    """The first share added on the held connection, each other one by a thread on a
    connection of its own, given its rows first (temporary tables are the connection's)."""
    helpers: list[tuple[Session, bulk_load.Load]] = []
    try:
        for share in shares[1:]:
            session = Session(held.get_bind().engine.connect(), expire_on_commit=False)
            helper = bulk_load.Load.on(session.connection(), load.project_id)
            helper.existing_tags_only, helper.origin = load.existing_tags_only, load.origin
            helper.update_numbers = getattr(load, "update_numbers", True)
            helpers.append((session, helper))
            held.connection(execution_options={BEGIN_OPTION: "DEFERRED"})
            load.hand_over(helpers[-1][1], share)
            session.commit()
            held.commit()
        with ThreadPoolExecutor(len(helpers), thread_name_prefix="tagdesk-import-add") as pool:
            added = [pool.submit(adding.add, session, helper, share)
                     for (session, helper), share in zip(helpers, shares[1:], strict=True)]
            try:
                adding.add(held, load, shares[0])
            finally:
                wait(added)
            for future in added:
                future.result()
    finally:
        for session, helper in helpers:
            _close(session, helper)
            session.close()
            helper.connection.close()


class Adding:
    """The ranges' rows added, each range in a transaction of its own, by one connection or
    several at once: each range's counts written by the sink and committed one range at a time,
    so the counts only grow. A failure stops the other writers after their current range.

    The tags the staged rows name (`used`) are looked up in each range's transaction (held
    there on PostgreSQL, so that none goes before the range is committed): a tag deleted
    since the file was read is left out of the range's rows (bulk_load adds links to tags
    that exist only), and its name (`names`) is added to the counts' `deleted_tags`; a tag merged
    into another since is replaced by that tag in the range's rows (bulk_load.merged_away),
    and the two names are added to the counts' `retagged`."""

    def __init__(self, counts: Counts, sink: Sink, end: Batch, used: set[int] | None = None,
                 names: dict[int, str] | None = None) -> None:
        self.counts = counts
        self.sink = sink
        self.end = end
        self.used = used or set()
        self.names = names or {}
        self.lock = threading.Lock()
        self.failed = threading.Event()

    def add(self, session: Session, load: bulk_load.Load, ranges: list[tuple[int, int]]) -> None:
        try:
            for first, last in ranges:
                if self.failed.is_set():
                    return
                self._insert(session, load, first, last)
        except BaseException:
            self.failed.set()
            # The range's locks go now: another writer may be waiting for them.
            session.rollback()
            raise

    def _insert(self, session: Session, load: bulk_load.Load, first: int, last: int) -> None:
        """The range in one transaction, run again when it met another writer's same new
        query, or lost a deadlock (PostgreSQL: a range's numbers, updated, re-check rules'
        links that another writer, such as a rule's unapply, holds meanwhile)."""
        for attempt in range(ATTEMPTS):
            counted = getattr(load, "numbers_updated", 0)
            try:
                begin_write(session)
                gone = self.used - load.present_tags(self.used) if self.used else set()
                moved = load.merged_away(gone) if gone else {}
                into_names = _names(session, set(moved.values()))
                renumbered = getattr(load, "numbers_updated", 0)
                added = load.insert(first, last)
                renumbered = getattr(load, "numbers_updated", 0) - renumbered
                # The insert ran beside the other writers'; what follows is one at a time.
                with self.lock:
                    after = self.counts.inserted(last - first + 1, added, load.tagged,
                                                 renumbered)
                    deleted = [self.names.get(tag_id, str(tag_id))
                               for tag_id in sorted(gone - moved.keys())]
                    if set(deleted) - set(after.deleted_tags):
                        after = replace(after, deleted_tags=tuple(dict.fromkeys(
                            (*after.deleted_tags, *deleted))))
                    retagged = dict(after.retagged) | {
                        self.names.get(tag_id, str(tag_id)): into_names[into]
                        for tag_id, into in sorted(moved.items())}
                    after = replace(after, retagged=tuple(retagged.items()))
                    self.sink.write(session, self.end, after)
                    session.commit()
                    self.counts = after
                    load.committed()
                    self.sink.done(self.end, after)
                return
            except (IntegrityError, OperationalError) as error:
                session.rollback()
                load.numbers_updated = counted  # the rolled-back attempt's are not counted
                if attempt == ATTEMPTS - 1 or (isinstance(error, OperationalError)
                                               and not retryable(error)):
                    raise


def _names(session: Session, tag_ids: set[int]) -> dict[int, str]:
    """These tags' names as they are now."""
    if not tag_ids:
        return {}
    return dict(session.execute(select(Tag.id, Tag.name).where(Tag.id.in_(tag_ids))).all())


def _close(held: Session, load: bulk_load.Load) -> None:
    """The staged rows dropped, whatever happened; if that fails, the connection is closed
    instead (its temporary tables go with it)."""
    held.rollback()
    try:
        held.connection(execution_options={BEGIN_OPTION: "DEFERRED"})
        load.close()
        held.commit()
    except SQLAlchemyError:
        load.connection.invalidate()


def read_ahead(batches: Iterator[Batch]) -> Iterator[Batch]:
    """The batches, the next one read and checked by a thread while this one is stored: the
    database works without holding Python's lock, so reading and storing overlap. One batch
    is read ahead, no more (memory stays flat)."""
    with ThreadPoolExecutor(1, thread_name_prefix="tagdesk-import-read") as reader:
        ahead = reader.submit(next, batches, None)
        while (batch := ahead.result()) is not None:
            ahead = reader.submit(next, batches, None)
            yield batch


# --- the rejected rows as a CSV file -----------------------------------------------------------

REJECTED_HEADER = ("line", "reason", *COLUMNS)


def rejected_csv(rows: Iterable) -> Iterator[str]:
    """Rejected rows (Rejected, or the rows kept of an import job) as CSV text, a few hundred
    lines a piece: line, reason and the row's own fields, then its cells of the file's number
    columns (named as the first row names them), safe to open in a spreadsheet: guarded and
    quoted as the dashboard's export is (weblib/spreadsheet_cells.py). UTF-8 with a byte order
    mark, which spreadsheet programs need to read it as UTF-8 (and which an import accepts:
    fixed, it can be imported again, its numbers with it, its line and reason columns ignored
    and the guard's apostrophes taken off)."""
    rows = iter(rows)
    first = next(rows, None)
    names = list(_number_cells(first)) if first is not None else []
    lines = ["\ufeff" + csv_line((*REJECTED_HEADER, *names))]
    for count, row in enumerate(chain([first] if first is not None else [], rows), start=1):
        cells = _number_cells(row)
        lines.append(csv_line((row.line, *(guard_cell(value) for value in (
            row.reason, row.query, row.language, row.country, row.tags,
            *(cells.get(name, "") for name in names))))))
        if count % 500 == 0:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


def _number_cells(row) -> dict[str, str]:
    """A rejected row's number cells by number: Rejected.numbers, or an import job's row's
    (import_jobs.ImportRejection.numbers, JSON)."""
    numbers = row.numbers
    if isinstance(numbers, str):
        return json.loads(numbers)
    return dict(numbers or ())
