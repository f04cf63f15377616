"""Hostile workbooks and zip archives, built byte for byte for the tests and the import-fairness
bench: small files whose reading would cost what they do not hold.

- Workbooks: an .xlsx with cells at A1 and XFD1048576 (`far_cell_xlsx`: 2 KB, a bounding box
  of 16,384 × 1,048,576 cells), one row of a million cells (`wide_row_xlsx`), an .ods whose
  repeats declare a million rows of thousands of cells (`repeated_ods`), an .xlsx of millions
  of empty shared strings (`shared_strings_xlsx`), values written again and again in one
  place (`one_place_filled_xlsx`).
- Zip archives of CSV files (`damaged_zip`): a bad CRC, an encrypted member, a compression
  method zipfile cannot read, a member cut short, and a member whose header declares 1 KiB
  but which inflates to far more (`inflated`).

The archives are written by hand (`_zip`), so that each header says exactly what the test
wants, true or not."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass

from tests.support import tool_exports
from tests.support.xlsx import write_parts

QUERIES_CSV = b"query,language,country\nlaufschuhe,de,DE\nrunning shoes,en,US\n"
_SHEET = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats'
          '.org/spreadsheetml/2006/main">{dimension}<sheetData>{rows}</sheetData></worksheet>')
_HEADER = ('<c r="A1" t="inlineStr"><is><t>query</t></is></c>'
           '<c r="B1" t="inlineStr"><is><t>language</t></is></c>'
           '<c r="C1" t="inlineStr"><is><t>country</t></is></c>')
_ROW2 = ('<row r="2"><c r="A2" t="inlineStr"><is><t>boots</t></is></c>'
         '<c r="B2" t="inlineStr"><is><t>en</t></is></c>'
         '<c r="C2" t="inlineStr"><is><t>US</t></is></c></row>')


def _xlsx(sheet_xml: str, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        write_parts(packed, ["Sheet1"])
        packed.writestr("xl/worksheets/sheet1.xml", sheet_xml)
        for name, content in (extra or {}).items():
            packed.writestr(name, content)
    return buffer.getvalue()


def far_cell_xlsx(dimension: str = "A1:C2",
                  far_cell: str = '<c r="XFD1048576"><v>1</v></c>') -> bytes:
    """A header and a row, and one more cell at XFD1048576 (the sheet's <dimension> says
    `dimension`): some 2 KB whose bounding box is every cell Excel has."""
    return _xlsx(_SHEET.format(dimension=f'<dimension ref="{dimension}"/>', rows=(
        f'<row r="1">{_HEADER}</row>{_ROW2}<row r="1048576">{far_cell}</row>')))


def wide_row_xlsx(cells: int = 1_000_000) -> bytes:
    """A header, then one row of `cells` numbers, without cell references (columns past XFD:
    a reader counts them on)."""
    return _xlsx(_SHEET.format(dimension="", rows=(
        f'<row r="1">{_HEADER}</row><row r="2">' + "<c><v>1</v></c>" * cells + "</row>")))


def one_place_filled_xlsx(copies: int, far_cell: str) -> bytes:
    """A header, then `copies` values all at A2 (each in the place of the one before), then one
    value at `far_cell`: many cells read, few places filled, the box mostly empty."""
    return _xlsx(_SHEET.format(dimension="", rows=(
        f'<row r="1">{_HEADER}</row><row r="2">' + '<c r="A2"><v>1</v></c>' * copies
        + f'</row><row r="{far_cell.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")}">'
        f'<c r="{far_cell}"><v>1</v></c></row>')))


def shared_strings_xlsx(strings: int = 3_000_000) -> bytes:
    """A small sheet and `strings` empty shared strings (a list a reader holds whole), more
    than the 2,000,000 a workbook of few cells may hold."""
    sst = ('<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/'
           f'spreadsheetml/2006/main" count="{strings}" uniqueCount="{strings}">'
           + "<si/>" * strings + "</sst>")
    return _xlsx(_SHEET.format(dimension="", rows=f'<row r="1">{_HEADER}</row>{_ROW2}'),
                 {"xl/sharedStrings.xml": sst.encode()})



def repeated_ods(rows: int = 1_048_576, columns: int = 16_384, sheets: int = 1) -> bytes:
    """An .ods of `sheets` sheets, each a header, then one row of a number repeated over
    `columns` columns, that row repeated `rows` times: a few hundred bytes."""
    def text(value: str) -> str:
        return (f'<table:table-cell office:value-type="string"><text:p>{value}</text:p>'
                "</table:table-cell>")

    table = ('<table:table table:name="Sheet{n}"><table:table-row>'
             + text("query") + text("language") + text("country") + "</table:table-row>"
             f'<table:table-row table:number-rows-repeated="{rows}">'
             f'<table:table-cell table:number-columns-repeated="{columns}" '
             'office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell>'
             "</table:table-row></table:table>")
    table = "".join(table.replace("{n}", str(n)) for n in range(1, sheets + 1))
    return tool_exports.packed_ods(table)


# --- zip archives written by hand ---------------------------------------------------------------

STORED, DEFLATED, DEFLATE64 = 0, 8, 9  # DEFLATE64: a method zipfile does not read
ENCRYPTED = 0x1  # the general purpose flag of an encrypted member


@dataclass(frozen=True)
class Member:
    """A member as its headers declare it, and the bytes that follow its local header."""

    name: str
    data: bytes
    method: int
    crc: int
    file_size: int
    flags: int = 0


def member(name: str, content: bytes, method: int = DEFLATED) -> Member:
    """A member whose headers tell the truth."""
    data = _deflated(content) if method == DEFLATED else content
    return Member(name, data, method, zlib.crc32(content), len(content))


def _deflated(content: bytes) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    return packer.compress(content) + packer.flush()


def _zip(members: list[Member]) -> bytes:
    out, central = io.BytesIO(), io.BytesIO()
    for item in members:
        name = item.name.encode()
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, item.flags, item.method, 0, 0x21,
                              item.crc, len(item.data), item.file_size, len(name), 0))
        out.write(name + item.data)
        central.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, item.flags,
                                  item.method, 0, 0x21, item.crc, len(item.data),
                                  item.file_size, len(name), 0, 0, 0, 0, 0, offset) + name)
    start = out.tell()
    out.write(central.getvalue())
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                          len(central.getvalue()), start, 0))
    return out.getvalue()


def inflating_member(name: str, head: bytes, inflated: int, declared: int = 1024) -> Member:
    """A member that inflates to `inflated` bytes (`head`, then zeros) under a header that
    declares `declared` bytes (its CRC that of the whole)."""
    packer, crc = zlib.compressobj(9, zlib.DEFLATED, -15), zlib.crc32(head)
    zeros = bytes(1 << 20)
    pieces = [packer.compress(head)]
    left = inflated - len(head)
    while left > 0:
        piece = zeros[:min(left, len(zeros))]
        pieces.append(packer.compress(piece))
        crc = zlib.crc32(piece, crc)
        left -= len(piece)
    pieces.append(packer.flush())
    return Member(name, b"".join(pieces), DEFLATED, crc, declared)


def damaged_zip(how: str, inflated: int = 256 << 20) -> bytes:
    """A Search Console "Download CSV" archive (Dates.csv, then Queries.csv) whose
    Queries.csv is damaged `how`: "bad-crc", "encrypted", "unsupported-method", "truncated"
    (its deflated data cut in half), "inflated" (declares 1 KiB, inflates to `inflated`
    bytes) or "cut" (the archive itself cut in half)."""
    dates = member("Dates.csv", b"Date,Clicks\n2026-11-27,20\n")
    queries = member("Queries.csv", QUERIES_CSV)
    if how == "bad-crc":
        queries = Member(queries.name, queries.data, queries.method, queries.crc ^ 1,
                         queries.file_size)
    elif how == "encrypted":
        queries = Member(queries.name, bytes(12) + queries.data, queries.method, queries.crc,
                         queries.file_size, ENCRYPTED)
    elif how == "unsupported-method":
        queries = Member(queries.name, queries.data, DEFLATE64, queries.crc, queries.file_size)
    elif how == "truncated":
        queries = Member(queries.name, queries.data[:len(queries.data) // 2], queries.method,
                         queries.crc, queries.file_size)
    elif how == "inflated":
        queries = inflating_member("Queries.csv", QUERIES_CSV, inflated)
    elif how != "cut":
        raise ValueError(how)
    packed = _zip([dates, queries])
    return packed[:len(packed) // 2] if how == "cut" else packed


def bad_crc_workbook(content: bytes) -> bytes:
    """The workbook `content` written again, its first sheet's CRC wrong by one bit."""
    members = []
    with zipfile.ZipFile(io.BytesIO(content)) as packed:
        for info in packed.infolist():
            made = member(info.filename, packed.read(info))
            if info.filename == "xl/worksheets/sheet1.xml":
                made = Member(made.name, made.data, made.method, made.crc ^ 1, made.file_size)
            members.append(made)
    return _zip(members)


DAMAGES = ("bad-crc", "encrypted", "unsupported-method", "truncated", "inflated", "cut")
