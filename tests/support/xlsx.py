"""Excel workbooks made for tests: the least an .xlsx needs (its parts, each sheet's cells as
inline strings or numbers), written with zipfile, as spreadsheet programs read them.

The parts that list the sheets (write_parts) serve tool_exports.py's workbooks as Excel saves
them too, with Excel's own templates (Parts); its cells (shared strings, styles) stay its own."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from xml.sax.saxutils import escape

TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org'
         '/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.'
         'openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="'
         'application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
         'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>{sheets}</Types>')
SHEET_TYPE = ('<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.'
              'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>')
ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
             'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="'
             'http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
             'officeDocument" Target="xl/workbook.xml"/></Relationships>')
WORKBOOK = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.'
            'openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats'
            '.org/officeDocument/2006/relationships"><sheets>{sheets}</sheets></workbook>')
WORKBOOK_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
                 'openxmlformats.org/package/2006/relationships">{rels}</Relationships>')
SHEET_REL = ('<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument'
             '/2006/relationships/worksheet" Target="worksheets/sheet{n}.xml"/>')
SHEET = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats'
         '.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>')


@dataclass(frozen=True)
class Parts:
    """The XML of the parts around a workbook's sheets, as templates: `content_types` (with
    {sheets}, a `sheet_type` of {n} each), `root_rels`, `workbook` (with {sheets}) and
    `workbook_rels` (with {rels}, a `sheet_rel` of {n} each)."""

    content_types: str
    sheet_type: str
    root_rels: str
    workbook: str
    workbook_rels: str
    sheet_rel: str


# The least a workbook needs (what minimal generators write).
MINIMAL = Parts(TYPES, SHEET_TYPE, ROOT_RELS, WORKBOOK, WORKBOOK_RELS, SHEET_REL)


def write_parts(packed: zipfile.ZipFile, names: list[str], parts: Parts = MINIMAL) -> None:
    """Write into `packed` the parts that list the sheets `names` (sheet n is
    xl/worksheets/sheet{n}.xml, from 1): [Content_Types].xml, the relationships and
    xl/workbook.xml. The sheets themselves, and any other part, are the caller's to write."""
    numbered = list(enumerate(names, 1))
    packed.writestr("[Content_Types].xml", parts.content_types.format(
        sheets="".join(parts.sheet_type.format(n=n) for n, _ in numbered)))
    packed.writestr("_rels/.rels", parts.root_rels)
    packed.writestr("xl/workbook.xml", parts.workbook.format(sheets="".join(
        f'<sheet name="{escape(name)}" sheetId="{n}" r:id="rId{n}"/>' for n, name in numbered)))
    packed.writestr("xl/_rels/workbook.xml.rels", parts.workbook_rels.format(
        rels="".join(parts.sheet_rel.format(n=n) for n, _ in numbered)))


def column_name(index: int) -> str:
    """The letters of the column at `index` (from 0): A, …, Z, AA, …"""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _cell(row: int, column: int, value) -> str:
    reference = f"{column_name(column)}{row}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<c r="{reference}"><v>{value}</v></c>'
    return f'<c r="{reference}" t="inlineStr"><is><t>{escape(str(value))}</t></is></c>'


def workbook(sheets: dict[str, list[list]]) -> bytes:
    """An .xlsx file of `sheets` (name → rows of cells: text or numbers), in order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        write_parts(packed, list(sheets))
        for n, rows in enumerate(sheets.values(), 1):
            packed.writestr(f"xl/worksheets/sheet{n}.xml", SHEET.format(rows="".join(
                f'<row r="{r}">' + "".join(_cell(r, c, v) for c, v in enumerate(row)
                                           if v not in ("", None)) + "</row>"
                for r, row in enumerate(rows, 1))))
    return buffer.getvalue()
