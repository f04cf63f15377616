"""Excel workbooks made for tests: the least an .xlsx needs (its parts, each sheet's cells as
inline strings or numbers), written with zipfile, as spreadsheet programs read them."""

from __future__ import annotations

import io
import zipfile
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


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _cell(row: int, column: int, value) -> str:
    reference = f"{_column(column)}{row}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<c r="{reference}"><v>{value}</v></c>'
    return f'<c r="{reference}" t="inlineStr"><is><t>{escape(str(value))}</t></is></c>'


def workbook(sheets: dict[str, list[list]]) -> bytes:
    """An .xlsx file of `sheets` (name → rows of cells: text or numbers), in order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        numbered = list(enumerate(sheets.items(), 1))
        packed.writestr("[Content_Types].xml", TYPES.format(
            sheets="".join(SHEET_TYPE.format(n=n) for n, _ in numbered)))
        packed.writestr("_rels/.rels", ROOT_RELS)
        packed.writestr("xl/workbook.xml", WORKBOOK.format(sheets="".join(
            f'<sheet name="{escape(name)}" sheetId="{n}" r:id="rId{n}"/>'
            for n, (name, _rows) in numbered)))
        packed.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS.format(
            rels="".join(SHEET_REL.format(n=n) for n, _ in numbered)))
        for n, (_name, rows) in numbered:
            packed.writestr(f"xl/worksheets/sheet{n}.xml", SHEET.format(rows="".join(
                f'<row r="{r}">' + "".join(_cell(r, c, v) for c, v in enumerate(row)
                                           if v not in ("", None)) + "</row>"
                for r, row in enumerate(rows, 1))))
    return buffer.getvalue()
