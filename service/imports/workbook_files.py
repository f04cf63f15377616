"""An uploaded workbook (.xlsx, .ods) made safe to give to python-calamine: its parts read
through zipfile (service/imports/zip_members.py) and copied, uncompressed, to a file of their
own, each sheet's extent measured on the way — before calamine allocates anything.

calamine builds a dense range of a sheet's bounding box when it loads the sheet (an .ods: every
sheet, when it opens the file), so two cells at A1 and XFD1048576 in a 2 KB file ask for 17
billion cells and end the process. Here each sheet's XML is read as a stream (expat, no
document type allowed) and the cells calamine would place are counted as calamine places them:
an .xlsx cell at its `r` reference, or after the cell before it in its row (the sheet's
<dimension> is not trusted); an .ods row and cell repeated as many times as they say.

The bounds, checked as the scan goes, so that a far cell is refused at once: a sheet reaches at
most MAX_ROWS and MAX_COLUMNS; its box (last row × last column; an .ods: its sheets' boxes
together, calamine holds them all) is at most MAX_BOX cells; and the box's cells without a
value are at most MAX_EMPTY, or as many as the cells with one if those are more (a value
written in a place filled before counts as empty: calamine holds it, filling nothing). calamine
spends some 32 bytes a cell of the box: the rows a file really has may take what they take,
empty space at most MAX_EMPTY's worth (64 MiB). A sheet past them is refused with a sentence
naming them, and so is a workbook of more shared strings than MAX_EMPTY and its cells with a
value (calamine holds them all; never more than MAX_STRINGS), other parts (styles, the
workbook) larger than MAX_PART, or any run of text longer than MAX_TEXT. The copy is what
calamine reads (from its path, never whole in memory), so calamine sees only members whose
sizes and CRCs zipfile has checked.

An Excel binary workbook (.xlsb) is refused: save it as .xlsx or CSV.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from xml.parsers import expat

from . import zip_members
from .imports import NotCsv

MAX_ROWS = 1_048_576  # Excel's own bounds
MAX_COLUMNS = 16_384
MAX_BOX = 20_000_000  # a sheet's last row × last column (an .ods: its sheets together)
MAX_EMPTY = 2_000_000  # the box's cells without a value, if more than those with one
MAX_STRINGS = MAX_BOX  # shared strings, as they are read (then: MAX_EMPTY or the cells filled)
MAX_PART = 64 * 1024 * 1024  # any other part, unpacked (shared strings, styles, the workbook)
MAX_TEXT = 1024 * 1024  # the bytes between two tags (a cell holds at most 32,767 characters)
MAX_ELEMENTS = 4 * MAX_BOX  # the elements of a part (a cell is two to four)
PIECE = 256 * 1024

WORKBOOK = "an Excel workbook"
OPENDOCUMENT = "an OpenDocument spreadsheet"
# The parts calamine reads: XML, relationships and the OpenDocument mimetype.
COPIED = (".xml", ".rels")

NOT_OPENED = ("This file looks like a workbook (.xlsx) or a zip archive but cannot be opened as "
              "one: save it again, or as CSV, and import that file.")
_REFERENCE = re.compile(r"\$?([A-Za-z]{0,3})\$?([0-9]{1,9})")
_ODS_VALUES = ("office:value", "office:date-value", "office:time-value",
               "office:boolean-value", "office:string-value", "table:formula")


@dataclass
class Copy:
    """The checked copy's path (calamine opens it) and what the file is (`WORKBOOK`,
    `OPENDOCUMENT`), for sentences."""

    path: Path
    kind: str


def _kind_of(names: list[str]) -> str | None:
    """What the parts named `names` make, by the part that holds the sheets (None: neither)."""
    if "content.xml" in names:
        return OPENDOCUMENT
    if "xl/workbook.xml" in names:
        return WORKBOOK
    return None


@contextmanager
def checked_copy(binary: BinaryIO, max_unpacked: int) -> Iterator[Copy]:
    """The workbook's parts copied to a temporary file once every sheet is within the bounds;
    NotCsv, with the sentence to show, when one is not or the file cannot be read. The copy is
    removed when the block ends (a workbook calamine opened from it keeps it open)."""
    what = "This workbook"
    try:
        packed = zip_members.opened(binary, what)
    except NotCsv:  # not even its directory: whatever it is, it is not a workbook
        raise NotCsv(NOT_OPENED) from None
    with packed:
        infos = packed.infolist()
        names = [info.filename for info in infos]
        if "xl/workbook.bin" in names:
            raise NotCsv("This is an Excel binary workbook (.xlsb): save it as an Excel "
                         "workbook (.xlsx) or as CSV, and import that file.")
        kind = _kind_of(names)
        if kind is None:
            raise NotCsv(NOT_OPENED)
        if sum(info.file_size for info in infos) > max_unpacked:
            raise NotCsv(f"This workbook unpacks to more than {max_unpacked >> 20} MiB: save "
                         "its sheet as CSV and import that file.")
        identity = _identity(binary)
        scanned = _verdicts.get(identity) if identity is not None else None
        if scanned:  # refused before
            raise NotCsv(scanned)
        with tempfile.NamedTemporaryFile(prefix="tagdesk-workbook-", suffix=".zip") as out:
            try:
                strings = filled = 0
                with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
                    for info in infos:
                        if info.filename == "mimetype" or info.filename.endswith(COPIED):
                            read = _copy_part(packed, info, copy, kind, what,
                                              scan=scanned is None)
                            strings += read.strings
                            filled += read.filled_before + read.filled
                _strings_within(strings, filled)
            except NotCsv as refusal:
                _remember(identity, str(refusal))
                raise
            _remember(identity, _WITHIN)
            out.flush()
            yield Copy(Path(out.name), kind)


# What the reading of an uploaded file found (_WITHIN, or the sentence that refused it), by the
# file's identity on disk: an upload is never written again, and its Columns page, its check
# and its import each read it.
_WITHIN = ""
_REMEMBERED = 256
_verdicts: OrderedDict[tuple, str] = OrderedDict()
_verdicts_lock = threading.Lock()


def _identity(binary: BinaryIO) -> tuple | None:
    try:
        found = os.fstat(binary.fileno())
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None  # not a file on disk
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def _remember(identity: tuple | None, verdict: str) -> None:
    if identity is None:
        return
    with _verdicts_lock:
        _verdicts[identity] = verdict
        while len(_verdicts) > _REMEMBERED:
            _verdicts.popitem(last=False)


def _copy_part(packed: zipfile.ZipFile, info: zipfile.ZipInfo, copy: zipfile.ZipFile,
               kind: str, what: str, scan: bool) -> _Part:
    """One part copied, read as its kind says (unless `scan` is false: read before): an .xlsx
    part for sheets (any part may be one) and shared strings, an .ods content.xml for its
    tables; any other part at most MAX_PART. The reader is returned with its counts."""
    sheets = info.filename.startswith("xl/worksheets/") or info.filename == "content.xml"
    if not sheets and info.file_size > MAX_PART:
        raise NotCsv(f"This workbook's part “{info.filename}” unpacks to more than "
                     f"{MAX_PART >> 20} MiB: save its sheet as CSV and import that file.")
    with zip_members.reading(packed, info, what) as member, \
            copy.open(zipfile.ZipInfo(info.filename), "w", force_zip64=True) as target:
        if info.filename == "mimetype" or not scan:
            shutil.copyfileobj(member, target, PIECE)
            return _Part()
        reader = _XlsxSheets() if kind == WORKBOOK else \
            _OdsSheets() if info.filename == "content.xml" else _Part()
        reader.read(member, target)
        return reader


class _Part:
    """A part read as XML with no document type, at most MAX_ELEMENTS elements and no run of
    MAX_TEXT bytes without one (what a sheet holds is counted by the subclasses, whose
    `started` counts `elements`, and the cells with a value and shared strings they find)."""

    def __init__(self) -> None:
        self.parser = expat.ParserCreate()
        self.parser.StartElementHandler = self.started
        self.parser.StartDoctypeDeclHandler = _doctype
        self.elements = 0
        self.filled = 0  # the cells with a value of the sheet being read
        self.filled_before = 0  # those of the sheets before it in the part
        self.strings = 0

    def read(self, member: BinaryIO, target: BinaryIO) -> None:
        quiet = 0  # the bytes read since a piece that held an element
        try:
            while piece := member.read(PIECE):
                target.write(piece)
                before = self.elements
                self.parser.Parse(piece, False)
                quiet = quiet + len(piece) if self.elements == before else 0
                if quiet > MAX_TEXT:
                    raise NotCsv(f"This workbook holds a text longer than {MAX_TEXT >> 20} "
                                 "MiB: save its sheet as CSV and import that file.")
                if self.elements > MAX_ELEMENTS:
                    raise NotCsv(f"A part of this workbook holds more than {MAX_ELEMENTS:,} "
                                 "elements: save its sheet as CSV and import that file.")
            self.parser.Parse(b"", True)
        except expat.ExpatError:
            raise NotCsv("This workbook is damaged (a part of it is not well-formed XML): "
                         "save it again, or as CSV, and import that file.") from None

    def started(self, _name: str, _attributes: dict[str, str]) -> None:
        self.elements += 1


def _doctype(*_args) -> None:
    raise NotCsv("This workbook is damaged (a part of it declares a document type): save it "
                 "again, or as CSV, and import that file.")


def _bounds() -> str:
    return (f"at most row {MAX_ROWS:,} and column {MAX_COLUMNS:,}, its rows × columns may be "
            f"at most {MAX_BOX:,} cells, and at most {MAX_EMPTY:,} of them (or as many as hold a "
            "value) may be empty")


def _refused(rows: int, columns: int, empty: int = 0, copies: int = 0) -> NotCsv:
    found = f"cells as far as row {rows:,} and column {columns:,}"
    if empty or copies:
        found += f", {empty:,} of its {rows * columns:,} cells empty"
    if copies:
        found += f" and {copies:,} values written over others"
    return NotCsv(f"A sheet of this workbook has {found}: a sheet may reach "
                  f"{_bounds()}. Save the sheet as CSV (or delete the cells far from "
                  "the table) and import that file.")


def _within(rows: int, columns: int, filled: int, box_before: int = 0,
            filled_before: int = 0, copies: int = 0) -> None:
    """A sheet's extent within the bounds, `filled` of its cells with a value and `copies`
    values written in places filled before (calamine holds them too: they count as empty
    space), with sheets held beside it whose boxes are `box_before` cells, `filled_before` of
    them with a value. Called whenever the box or the copies grow: the cells filled since only
    make its empty space smaller."""
    if rows > MAX_ROWS or columns > MAX_COLUMNS:
        raise _refused(rows, columns)
    box = box_before + rows * columns
    filled += filled_before
    empty = box - filled
    if box <= MAX_BOX and (empty + copies <= MAX_EMPTY or empty + copies <= filled):
        return
    if not box_before:
        raise _refused(rows, columns, empty, copies) if box <= MAX_BOX else \
            _refused(rows, columns)
    raise NotCsv(f"The sheets of this spreadsheet span {box:,} cells together (each sheet's "
                 f"last row × last column), {empty:,} of them empty: a spreadsheet's sheets "
                 f"may together reach {_bounds()}. Save its sheet as CSV and import "
                 "that file.")


def _strings_within(strings: int, filled: int) -> None:
    """calamine holds every shared string: no more than the cells with a value (or
    MAX_EMPTY), lest they be empty space of their own."""
    if strings > MAX_EMPTY and strings > filled:
        raise NotCsv(f"This workbook holds {strings:,} shared strings, more than its cells "
                     f"with a value ({filled:,}): a workbook may hold at most "
                     f"{MAX_EMPTY:,} shared strings, or as many as its cells with a value. "
                     "Save its sheet as CSV and import that file.")


_CELL_CONTENT = frozenset(("v", "f", "is"))  # what gives an .xlsx cell a value


_CELL, _CONTENT, _ROW, _STRING, _DATA = range(5)
# What an element is to the count, by its local name ("x:c" is a cell as "c" is).
_KINDS = {"c": _CELL, "v": _CONTENT, "f": _CONTENT, "is": _CONTENT, "row": _ROW, "si": _STRING,
          "sheetData": _DATA}


class _XlsxSheets(_Part):
    """An .xlsx part, its cells placed as calamine places them, in <sheetData>: a row at its
    `r`, else after the row before; a cell at its `r`, else after the cell before in its row.
    A cell with a value, a formula or a text counts (an empty styled cell does not; one not
    after the last filled counts as empty space: it may fill a place filled before); each
    sheet's last row × last column and its empty space within the bounds. Start tags alone
    are read (the parts are large): a row starts the count of its cells again. The cells
    counted, empty or not, are at most MAX_BOX a sheet, the shared strings MAX_STRINGS."""

    def __init__(self) -> None:
        super().__init__()
        self.in_data = False
        self.row = -1
        self.column = 0
        self.cell: tuple[int, int] | None = None  # the cell open, until a value fills it
        self.last = -1  # the place of the last cell filled, row by row (writers go in order)
        self.copies = 0  # the values in a place not after the last one filled
        self.rows = self.columns = 0  # the sheet's extent so far
        self.cells = 0

    def started(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        kind = _KINDS.get(name)
        if kind is None:
            kind = _KINDS.get(name.rpartition(":")[2]) if ":" in name else None
            if kind is None:
                self.cell = None
                return
        if kind == _CELL:
            if not self.in_data:
                return
            self.cells += 1
            if self.cells > MAX_BOX:
                raise _too_many_cells()
            reference = attributes.get("r")
            if reference is not None:
                self.cell = _reference(reference)
                self.column = self.cell[1] + 1
            else:
                self.cell = (self.row, self.column)
                self.column += 1
        elif kind == _CONTENT:
            if self.cell is not None:
                row, column = self.cell
                self.cell = None
                place = row * MAX_COLUMNS + column
                if place > self.last:
                    self.last = place
                    self.filled += 1
                else:  # a place filled before (or out of order): held, filling nothing more
                    self.copies += 1
                    _within(self.rows, self.columns, self.filled, copies=self.copies)
                if row >= self.rows or column >= self.columns:
                    self.rows, self.columns = max(self.rows, row + 1), max(self.columns,
                                                                          column + 1)
                    _within(self.rows, self.columns, self.filled, copies=self.copies)
        elif kind == _ROW:
            if self.in_data:
                self.cell = None
                self.row = _row_number(attributes["r"]) - 1 if "r" in attributes \
                    else self.row + 1
                self.column = 0
        elif kind == _STRING:
            self.strings += 1
            if self.strings > MAX_STRINGS:
                raise NotCsv(f"This workbook holds more than {MAX_STRINGS:,} shared strings: "
                             "save its sheet as CSV and import that file.")
        else:  # <sheetData>
            self.in_data, self.row, self.column, self.rows, self.columns = True, -1, 0, 0, 0
            self.cells = 0
            self.last = -1
            self.copies = 0
            self.filled_before += self.filled
            self.filled = 0


def _too_many_cells() -> NotCsv:
    return NotCsv(f"A sheet of this workbook holds more than {MAX_BOX:,} cells: save it as CSV "
                  "and import that file.")


def _row_number(text: str) -> int:
    if not text.isdigit() or int(text) == 0:
        raise _damaged_reference(text)
    if int(text) > MAX_ROWS:
        raise _refused(int(text), 1)
    return int(text)


def _reference(text: str) -> tuple[int, int]:
    """A cell reference's row and column, from 0 ("B3" → (2, 1))."""
    letters = text.rstrip("0123456789")
    digits = text[len(letters):]
    column = _column_numbers.get(letters)
    if column is None:
        match = _REFERENCE.fullmatch(text)
        if match is None or not match.group(1):
            raise _damaged_reference(text)
        column = 0
        for letter in match.group(1).upper():
            column = column * 26 + ord(letter) - 64
        if len(_column_numbers) < MAX_COLUMNS:
            _column_numbers[letters] = column
    if not digits.isdigit() or len(digits) > 9 or int(digits) == 0:
        raise _damaged_reference(text)
    row = int(digits)
    if row > MAX_ROWS or column > MAX_COLUMNS:
        raise _refused(row, column)
    return row - 1, column - 1


_column_numbers: dict[str, int] = {}  # "B" → 2, as cell references are read


def _damaged_reference(text: str) -> NotCsv:
    return NotCsv(f"This workbook is damaged (a cell or row is at “{text[:20]}”, which is "
                  "not a place in a sheet): save it again, or as CSV, and import that file.")


class _OdsSheets(_Part):
    """content.xml of an .ods, as calamine reads it: in each table, a row repeated
    `table:number-rows-repeated` times, its cells each `table:number-columns-repeated` times
    (at most MAX_ROWS and MAX_COLUMNS, as calamine caps them); the table's box runs to its last
    row with a value (repeats counted) and its widest such row, and its cells with a value
    are counted with their repeats, as calamine places them. The cells read, their repeats
    not counted, are at most MAX_BOX."""

    def __init__(self) -> None:
        super().__init__()
        self.parser.EndElementHandler = self.ended
        self.depth_in_cell = 0
        self.rows_before = 0  # the rows of the table so far, repeats counted
        self.rows = self.columns = 0
        self.row_repeats = 1
        self.row_width = 0  # the row's cells so far, repeats counted
        self.row_filled = 0  # where the row's last cell with a value ends
        self.row_values = 0  # the row's cells with a value, repeats counted
        self.cell_repeats = 1
        self.cell_filled = False
        self.cells = 0
        self.box_before = 0  # the cells of the sheets before this one (their boxes)

    def started(self, name: str, attributes: dict[str, str]) -> None:
        self.elements += 1
        if self.depth_in_cell:
            self.depth_in_cell += 1
            self.cell_filled = True  # a paragraph or any content: a value
        elif name == "table:table":  # calamine holds every table at once: their boxes add up
            self.box_before += self.rows * self.columns
            self.filled_before += self.filled
            self.rows_before = self.rows = self.columns = self.filled = 0
        elif name == "table:table-row":
            self.row_repeats = min(_repeats(attributes.get("table:number-rows-repeated")),
                                   MAX_ROWS - min(self.rows_before, MAX_ROWS))
            self.row_width = self.row_filled = self.row_values = 0
        elif name in ("table:table-cell", "table:covered-table-cell"):
            self.cells += 1
            if self.cells > MAX_BOX:
                raise _too_many_cells()
            self.depth_in_cell = 1
            self.cell_repeats = min(_repeats(attributes.get("table:number-columns-repeated")),
                                    MAX_COLUMNS - min(self.row_width, MAX_COLUMNS))
            self.cell_filled = any(key in attributes for key in _ODS_VALUES)

    def ended(self, name: str) -> None:
        if self.depth_in_cell > 1:
            self.depth_in_cell -= 1
        elif self.depth_in_cell == 1:
            self.depth_in_cell = 0
            self.row_width += self.cell_repeats
            if self.cell_filled:
                self.row_filled = self.row_width
                self.row_values += self.cell_repeats
        elif name == "table:table-row":
            self.rows_before += self.row_repeats
            if self.row_filled:
                self.rows = self.rows_before
                self.columns = max(self.columns, self.row_filled)
                self.filled += self.row_values * self.row_repeats
                _within(self.rows, self.columns, self.filled, self.box_before,
                        self.filled_before)


def _repeats(text: str | None) -> int:
    if text is None:
        return 1
    if not text.isdigit():
        raise NotCsv("This workbook is damaged (a row or cell repeats “" + text[:20]
                     + "” times): save it again, or as CSV, and import that file.")
    return int(text)
