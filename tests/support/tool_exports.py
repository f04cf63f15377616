"""Files as keyword tools export them, byte for byte: Google Search Console (Queries CSV and
its Excel workbook of seven sheets), Google Ads Keyword Planner (UTF-16 with tabs and title
lines, "Keyword Stats" and "Keyword ideas", or CSV UTF-8), Semrush (Keyword Magic Tool,
Organic Research; commas, or semicolons with decimal commas; its default .xlsx), Ahrefs
Keywords Explorer ("UTF-16 for Excel" or UTF-8, its `#` column first, countries as lower-case
codes) and an Excel workbook made by hand (a title above the header, extra columns, countries
by name, tags "product, price"), and the same made in LibreOffice (.ods, countries in German).

Search Console's "Download CSV" is a zip archive of such files (`search_console_zip`).

Each `…()` gives the file's bytes; `EXPORTS` names every shape with its file name and what an
import of it with only column choices must give (`Expected`)."""

from __future__ import annotations

import codecs
import csv
import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from tests.support.xlsx import Parts, column_name, write_parts

# --- text files ------------------------------------------------------------------------------


def _table(rows: list[list], separator: str, quoting: int = csv.QUOTE_MINIMAL,
           newline: str = "\r\n") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=separator, quoting=quoting, lineterminator=newline)
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def _utf16(text: str) -> bytes:
    """UTF-16 little-endian with its byte order mark, as Windows tools write it."""
    return codecs.BOM_UTF16_LE + text.encode("utf-16-le")


# Google Search Console, Performance → Export → CSV: a zip of CSV files, one of them
# Queries.csv (UTF-8, no byte order mark; some tools re-save it with one).
GSC_HEADER = ["Top queries", "Clicks", "Impressions", "CTR", "Position"]
GSC_ROWS = [["laufschuhe herren", 412, 11743, "3.51%", 7.2],
            ["laufschuhe damen sale", 128, 5021, "2.55%", 9.8],
            ["\"trail\" schuhe, wasserdicht", 37, 1903, "1.94%", 12.4],
            ["größe 44 laufschuh", 5, 622, "0.8%", 31],
            ["hoka clifton 9", 0, 88, "0%", 54.1]]
GSC_QUERIES = [row[0] for row in GSC_ROWS]


def search_console_csv(bom: bool = False) -> bytes:
    text = _table([GSC_HEADER, *GSC_ROWS], ",", newline="\n")
    return (codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8")


def search_console_zip() -> bytes:
    """Search Console's "Download CSV": a zip archive of a CSV file a dimension and the
    filters, Queries.csv not the first."""
    tables = {
        "Dates.csv": [["Date", "Clicks", "Impressions", "CTR", "Position"],
                      ["2026-11-27", 20, 610, "3.28%", 7.7]],
        "Filters.csv": [["Filter", "Value"], ["Search type", "Web"],
                        ["Date", "Last 3 months"], ["Query", "+schuhe"]],
        "Pages.csv": [["Top pages", "Clicks", "Impressions", "CTR", "Position"],
                      ["https://shop.example/laufschuhe", 540, 17000, "3.18%", 8.1]],
        "Queries.csv": [GSC_HEADER, *GSC_ROWS],
        "Countries.csv": [["Country", "Clicks", "Impressions", "CTR", "Position"],
                          ["Germany", 500, 15000, "3.33%", 7.9]],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        for name, rows in tables.items():
            packed.writestr(name, _table(rows, ",", newline="\n").encode("utf-8"))
    return buffer.getvalue()


def search_console_xlsx(queries_first: bool = True) -> bytes:
    """Search Console's Excel export: a sheet a dimension, and the filters. Its queries are
    on the sheet "Queries" — first, or (an export made from another tab) not first."""
    sheets = {
        "Queries": [GSC_HEADER] + [[q, c, i, float(ctr.rstrip("%")) / 100, p]
                                   for q, c, i, ctr, p in GSC_ROWS],
        "Pages": [["Top pages", "Clicks", "Impressions", "CTR", "Position"],
                  ["https://shop.example/laufschuhe", 540, 17000, 0.0318, 8.1]],
        "Countries": [["Country", "Clicks", "Impressions", "CTR", "Position"],
                      ["Germany", 500, 15000, 0.0333, 7.9], ["Austria", 40, 2000, 0.02, 9]],
        "Devices": [["Device", "Clicks", "Impressions", "CTR", "Position"],
                    ["Mobile", 400, 12000, 0.0333, 8], ["Desktop", 140, 5000, 0.028, 7]],
        "Search appearance": [["Search Appearance", "Clicks", "Impressions", "CTR",
                               "Position"], ["Product snippets", 20, 900, 0.0222, 6.5]],
        "Dates": [["Date", "Clicks", "Impressions", "CTR", "Position"],
                  ["2026-11-27", 20, 610, 0.0328, 7.7], ["2026-11-26", 18, 590, 0.0305, 7.9]],
        "Filters": [["Filter", "Value"], ["Search type", "Web"],
                    ["Date", "Last 3 months"], ["Query", "+schuhe"]],
    }
    if not queries_first:
        sheets = {name: sheets[name] for name in
                  ("Dates", "Filters", "Pages", "Countries", "Queries", "Devices",
                   "Search appearance")}
    return styled_workbook(sheets, percent_columns={"CTR"})


# Google Ads Keyword Planner, "Download keyword ideas" / forecast stats: CSV (UTF-16 LE with a
# byte order mark, tab separated) or Google Sheets / CSV UTF-8, two title lines first.
PLANNER_MONTHS = ["Nov 2025", "Dec 2025", "Jan 2026", "Feb 2026", "Mar 2026", "Apr 2026",
                  "May 2026", "Jun 2026", "Jul 2026", "Aug 2026", "Sep 2026", "Oct 2026"]
PLANNER_HEADER = ["Keyword", "Currency", "Avg. monthly searches", "Three month change",
                  "YoY change", "Competition", "Competition (indexed value)",
                  "Top of page bid (low range)", "Top of page bid (high range)",
                  "Ad impression share", "Organic impression share",
                  "Organic average position", "In account?", "In plan?"] + [
    f"Searches: {month}" for month in PLANNER_MONTHS]
PLANNER_ROWS = [
    ["running shoes", "EUR", 49500, "0%", "-18%", "High", 100, 0.51, 1.87, "", "", "",
     "", ""] + [40500, 40500, 49500, 49500, 60500, 60500, 60500, 49500, 49500, 40500,
                40500, 40500],
    ["trail running shoes", "EUR", 12100, "22%", "0%", "High", 90, 0.43, 1.38, "", "",
     "", "Y", "N"] + [9900, 9900, 12100, 12100, 14800, 14800, 14800, 12100, 12100, 9900,
                      9900, 9900],
    ["running shoes, women's", "EUR", 880, "0%", "0%", "Medium", 55, "", "", "", "", "",
     "", ""] + [720] * 12,
    ["laufschuhe größe 46", "EUR", "10 – 100", "", "", "Low", 8, "", "", "", "", "", "",
     ""] + [10] * 12,
]
PLANNER_QUERIES = [row[0] for row in PLANNER_ROWS]


def keyword_planner(ideas: bool = False, utf8: bool = False) -> bytes:
    """A Keyword Planner download: "Keyword Stats …" (the plan's) or "Keyword ideas" (its
    ideas, over a date range) above the header; UTF-16 with tabs, or CSV UTF-8."""
    title = (["Keyword ideas"], ["November 1, 2025 - October 31, 2026"]) if ideas else (
        ["Keyword Stats 2026-11-28 at 10_00_00"], ["All locations"])
    header, rows = PLANNER_HEADER, PLANNER_ROWS
    if ideas:  # the ideas list has no "In account?" / "In plan?"
        cut = PLANNER_HEADER.index("In account?")
        header = PLANNER_HEADER[:cut] + PLANNER_HEADER[cut + 2:]
        rows = [row[:cut] + row[cut + 2:] for row in PLANNER_ROWS]
    if utf8:
        return codecs.BOM_UTF8 + _table([*title, header, *rows], ",").encode("utf-8")
    # Its tab-separated file quotes a field that holds a comma, as the CSV it also writes.
    lines = ["\t".join(f'"{value}"' if "," in str(value) else str(value) for value in row)
             for row in [*title, header, *rows]]
    return _utf16("".join(line + "\r\n" for line in lines))


# Semrush: Keyword Magic Tool and Organic Research → Export → CSV (UTF-8, comma separated; in
# a European locale's setting, semicolons and decimal commas).
MAGIC_HEADER = ["Keyword", "Intent", "Volume", "Trend", "Keyword Difficulty", "CPC (USD)",
                "Competitive Density", "SERP Features", "Number of Results"]
MAGIC_ROWS = [
    ["nike air max", "Commercial, Transactional", 135000,
     "0.81,0.81,1.00,0.81,0.67,0.67,0.67,0.67,0.81,0.81,0.81,0.81", 92, 0.78, 1.0,
     "Sitelinks, Reviews, Image pack, Video, People also ask", 410000000],
    ["nike air max 90", "Transactional", 49500,
     "0.55,0.67,0.82,1.00,0.82,0.67,0.67,0.55,0.55,0.55,0.67,0.82", 74, 0.55, 1.0,
     "Image pack, Shopping ads", 112000000],
    ["air max \"plus\" sale", "Transactional", 90, "", 31, 0, 0.35, "", 0],
]
ORGANIC_HEADER = ["Keyword", "Position", "Previous position", "Search Volume",
                  "Keyword Difficulty", "CPC", "URL", "Traffic", "Traffic (%)", "Traffic Cost",
                  "Competition", "Number of Results", "Trends", "Timestamp",
                  "SERP Features by Keyword", "Keyword Intents", "Position Type"]
ORGANIC_ROWS = [
    ["laufschuhe", 3, 4, 74000, 67, 0.89, "https://shop.example/laufschuhe", 5402, 12.37,
     4807.78, 1.0, 56200000, "0.67,0.82,1.00,0.82,0.82,0.67,0.67,0.67,0.67,0.82,0.82,0.82",
     "2026-11-27", "Sitelinks, Reviews, Image pack", "commercial, transactional",
     "Organic"],
    ["laufschuhe damen", 5, 5, 22200, 54, 0.71, "https://shop.example/damen", 710, 1.62,
     504.1, 1.0, 11400000, "0.82,0.82,1.00,0.82,0.82,0.67,0.67,0.67,0.67,0.82,0.82,0.82",
     "2026-11-27", "Image pack, Shopping ads", "transactional", "Organic"],
    ["schuhe; größe 46", 18, 0, 40, 11, 0, "https://shop.example/grosse", 0, 0, 0, 0.12,
     90000, "", "2026-11-25", "", "informational", "Organic"],
]


def _decimal_commas(value):
    return str(value).replace(".", ",") if isinstance(value, float) else value


def semrush(organic: bool = False, european: bool = False) -> bytes:
    header, rows = (ORGANIC_HEADER, ORGANIC_ROWS) if organic else (MAGIC_HEADER, MAGIC_ROWS)
    if european:
        rows = [[_decimal_commas(value) for value in row] for row in rows]
        return _table([header, *rows], ";", newline="\n").encode("utf-8")
    return _table([header, *rows], ",", newline="\n").encode("utf-8")


def semrush_xlsx() -> bytes:
    """Semrush's default export of the Keyword Magic Tool: an .xlsx of one sheet, numbers as
    numbers."""
    return styled_workbook({"Sheet 1": [MAGIC_HEADER, *MAGIC_ROWS]})


SEMRUSH_QUERIES = {False: [row[0] for row in MAGIC_ROWS], True: [row[0] for row in ORGANIC_ROWS]}


# Ahrefs Keywords Explorer → Export: "UTF-16 for Excel" (tabs) or "UTF-8" (commas), every
# field in quotes, a row number `#` first, countries as lower-case codes.
AHREFS_HEADER = ["#", "Keyword", "Country", "Difficulty", "Volume", "CPC", "CPS",
                 "Parent Keyword", "Last Update", "SERP Features", "Global volume",
                 "Traffic potential", "Global traffic potential", "First seen", "Intents"]
AHREFS_ROWS = [
    [1, "running shoes", "us", 87, 92000, 1.4, 1.12, "running shoes", "2026-11-20 06:12:55",
     "Sitelinks, Image pack, Top stories, Thumbnail", 301000, 61000, 180000,
     "2015-09-04 00:00:00", "Informational, Commercial"],
    [2, "laufschuhe", "de", 71, 74000, 0.6, 1.3, "laufschuhe", "2026-11-21 02:40:10",
     "Image pack, Shopping", 99000, 50000, 60000, "2016-01-10 00:00:00", "Commercial"],
    [3, "chaussures de course", "fr", 44, 12000, 0.35, 0.9, "chaussure running",
     "2026-11-19 11:02:31", "", 21000, 9000, 12000, "2017-03-01 00:00:00", "Commercial"],
    [4, "#1 running shoe", "gb", 12, 150, 0.2, 0.4, "best running shoes",
     "2026-11-18 09:00:00", "Featured snippet", 800, 300, 900, "2020-06-11 00:00:00",
     "Informational"],
]


def ahrefs(utf16: bool = True) -> bytes:
    rows = [AHREFS_HEADER, *([str(v) for v in row] for row in AHREFS_ROWS)]
    if utf16:
        return _utf16(_table(rows, "\t", quoting=csv.QUOTE_ALL, newline="\n"))
    return codecs.BOM_UTF8 + _table(rows, ",", quoting=csv.QUOTE_ALL,
                                    newline="\n").encode("utf-8")


# An Excel workbook made by hand: a title and a blank row above the header, a number column
# first, extra columns, countries by English name, tags joined by ", ".
HAND_SHEETS = {
    "Keyword research": [
        ["Keyword research – spring campaign 2026"],
        [],
        ["Nr.", "Keyword", "Search volume", "Country", "Tags", "Owner", "Notes"],
        [1, "laufschuhe herren", 12100, "Germany", "product, price", "Ann", ""],
        [2, "running shoes men", 40500, "United States", "product", "Ann", "check CPC", "",
         "see the sheet Notes"],  # a note beside the table: two columns without a name
        [3, "chaussures running", 6600, "France", "", "Bob", ""],
        [4, "laufschuhe test", 8100, "Austria", "review, price", "", ""],
    ],
    "Notes": [["Volumes from the Keyword Planner, November 2026"]],
}


def hand_made_workbook() -> bytes:
    return styled_workbook(HAND_SHEETS)


def hand_made_ods() -> bytes:
    """The same, made in LibreOffice Calc (.ods), its countries in German."""
    german = {"Germany": "Deutschland", "United States": "Vereinigte Staaten",
              "France": "Frankreich", "Austria": "Österreich"}
    rows = [[german.get(value, value) for value in row]
            for row in HAND_SHEETS["Keyword research"]]
    return opendocument_spreadsheet({"Tabelle1": rows, "Notizen": HAND_SHEETS["Notes"]})


# --- what an import of each shape gives ------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """A shape: its file, the choices made on its columns page (the fields' labels → values)
    and the rows an import makes (query, language, country, tags)."""

    name: str
    file_name: str
    content: Callable[[], bytes]
    query_column: str
    country_column: str | None = None  # guessed from the header, where the file has one
    every_row: dict[str, str] = field(default_factory=dict)  # language / country for all
    tags_columns: tuple[str, ...] = ()
    rows: frozenset = frozenset()
    header_line: int = 1
    read_as: str = ""


def _rows(queries, language, country, tags=()) -> frozenset:
    return frozenset((q, language, country, tuple(tags)) for q in queries)


# What the hand-made workbooks hold (.ods and .xlsx alike), as the import keeps it.
HAND_MADE_ROWS = frozenset({("laufschuhe herren", "de", "DE", ("price", "product")),
                            ("running shoes men", "de", "US", ("product",)),
                            ("chaussures running", "de", "FR", ()),
                            ("laufschuhe test", "de", "AT", ("price", "review"))})
# What Ahrefs' exports hold (UTF-16 and UTF-8 alike) as the import keeps it.
AHREFS_IMPORTED = frozenset({("running shoes", "en", "US", ()), ("laufschuhe", "en", "DE", ()),
                             ("chaussures de course", "en", "FR", ()),
                             ("#1 running shoe", "en", "GB", ())})
EXPORTS = [
    Expected("search-console-csv", "Queries.csv", search_console_csv, "Top queries",
             every_row={"language": "German", "country": "Germany"},
             rows=_rows(GSC_QUERIES, "de", "DE"),
             read_as="Read as UTF-8 text separated by commas, its header on line 1"),
    Expected("search-console-csv-bom", "Queries.csv",
             lambda: search_console_csv(bom=True), "Top queries",
             every_row={"language": "de", "country": "DE"},
             rows=_rows(GSC_QUERIES, "de", "DE"),
             read_as="Read as UTF-8 text separated by commas, its header on line 1"),
    Expected("search-console-zip", "shop.example-Performance-on-Search-2026-11-28.zip",
             search_console_zip, "Top queries",
             every_row={"language": "de", "country": "CH"},
             rows=_rows(GSC_QUERIES, "de", "CH"),
             read_as="Read the file “Queries.csv” of a zip archive as UTF-8 text separated by "
                     "commas, its header on line 1"),
    Expected("search-console-xlsx", "shop.example-Performance-on-Search-2026-11-28.xlsx",
             search_console_xlsx, "Top queries",
             every_row={"language": "de", "country": "Germany"},
             rows=_rows(GSC_QUERIES, "de", "DE"),
             read_as="Read the sheet “Queries” of an Excel workbook, its header on row 1"),
    Expected("search-console-xlsx-queries-later", "Performance-Pages.xlsx",
             lambda: search_console_xlsx(queries_first=False), "Top queries",
             every_row={"language": "de", "country": "AT"},
             rows=_rows(GSC_QUERIES, "de", "AT"),
             read_as="Read the sheet “Queries” of an Excel workbook, its header on row 1"),
    Expected("keyword-planner", "Keyword Stats 2026-11-28 at 10_00_00.csv", keyword_planner,
             "Keyword", every_row={"language": "English", "country": "United States"},
             rows=_rows(PLANNER_QUERIES, "en", "US"), header_line=3,
             read_as="Read as UTF-16 text separated by tabs, its header on line 3"),
    Expected("keyword-planner-ideas", "Keyword ideas.csv", lambda: keyword_planner(ideas=True),
             "Keyword", every_row={"language": "en", "country": "gb"},
             rows=_rows(PLANNER_QUERIES, "en", "GB"), header_line=3,
             read_as="Read as UTF-16 text separated by tabs, its header on line 3"),
    Expected("keyword-planner-utf8", "Keyword Stats 2026-11-28 at 10_00_00 (1).csv",
             lambda: keyword_planner(utf8=True), "Keyword",
             every_row={"language": "en", "country": "US"},
             rows=_rows(PLANNER_QUERIES, "en", "US"), header_line=3,
             read_as="Read as UTF-8 text separated by commas, its header on line 3"),
    Expected("semrush-magic", "nike-air-max_broad-match_us_2026-11-28.csv", semrush,
             "Keyword", every_row={"language": "en", "country": "US"},
             rows=_rows(SEMRUSH_QUERIES[False], "en", "US"),
             read_as="Read as UTF-8 text separated by commas, its header on line 1"),
    Expected("semrush-magic-xlsx", "nike-air-max_broad-match_us_2026-11-28.xlsx", semrush_xlsx,
             "Keyword", every_row={"language": "en", "country": "US"},
             rows=_rows(SEMRUSH_QUERIES[False], "en", "US"),
             read_as="Read the sheet “Sheet 1” of an Excel workbook, its header on row 1"),
    Expected("semrush-organic-european", "shop.example-organic.Positions-de-20261128.csv",
             lambda: semrush(organic=True, european=True), "Keyword",
             every_row={"language": "German", "country": "de"},
             rows=_rows(SEMRUSH_QUERIES[True], "de", "DE"),
             read_as="Read as UTF-8 text separated by semicolons, its header on line 1"),
    Expected("semrush-organic", "shop.example-organic.Positions-de-20261128.csv",
             lambda: semrush(organic=True), "Keyword",
             every_row={"language": "de", "country": "DE"},
             rows=_rows(SEMRUSH_QUERIES[True], "de", "DE"),
             read_as="Read as UTF-8 text separated by commas, its header on line 1"),
    Expected("semrush-magic-european", "air-max_broad-match_de_2026-11-28.csv",
             lambda: semrush(european=True), "Keyword",
             every_row={"language": "de", "country": "DE"},
             rows=_rows(SEMRUSH_QUERIES[False], "de", "DE"),
             read_as="Read as UTF-8 text separated by semicolons, its header on line 1"),
    Expected("ahrefs-utf16", "running-shoes_keywords_2026-11-28.csv", ahrefs, "Keyword",
             country_column="Country", every_row={"language": "en"},
             rows=AHREFS_IMPORTED,
             read_as="Read as UTF-16 text separated by tabs, its header on line 1"),
    Expected("ahrefs-utf8", "running-shoes_keywords_2026-11-28 (utf-8).csv",
             lambda: ahrefs(utf16=False), "Keyword", country_column="Country",
             every_row={"language": "en"},
             rows=AHREFS_IMPORTED,
             read_as="Read as UTF-8 text separated by commas, its header on line 1"),
    Expected("hand-made-ods", "Keyword research spring.ods", hand_made_ods,
             "Keyword", country_column="Country", every_row={"language": "German"},
             tags_columns=("Tags",),
             rows=HAND_MADE_ROWS,
             header_line=3,
             read_as="Read the sheet “Tabelle1” of an OpenDocument spreadsheet, its header on "
                     "row 3"),
    Expected("hand-made-workbook", "Keyword research spring.xlsx", hand_made_workbook,
             "Keyword", country_column="Country", every_row={"language": "German"},
             tags_columns=("Tags",),
             rows=HAND_MADE_ROWS,
             header_line=3,
             read_as="Read the sheet “Keyword research” of an Excel workbook, its header on "
                     "row 3"),
]
BY_NAME = {shape.name: shape for shape in EXPORTS}


# --- workbooks as Excel and Google write them -------------------------------------------------

_NS = "http://schemas.openxmlformats.org"
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
    f'<Types xmlns="{_NS}/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sheet.main+xml"/>{sheets}'
    '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
_SHEET_TYPE = ('<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.'
               'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>')
_ROOT_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
              f'<Relationships xmlns="{_NS}/package/2006/relationships">'
              f'<Relationship Id="rId1" Type="{_NS}/officeDocument/2006/relationships/'
              'officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WORKBOOK = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
             f'<workbook xmlns="{_NS}/spreadsheetml/2006/main" '
             f'xmlns:r="{_NS}/officeDocument/2006/relationships"><sheets>{{sheets}}</sheets>'
             '</workbook>')
_WORKBOOK_RELS = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
                  f'<Relationships xmlns="{_NS}/package/2006/relationships">{{rels}}'
                  f'<Relationship Id="rIdStyles" Type="{_NS}/officeDocument/2006/'
                  'relationships/styles" Target="styles.xml"/>'
                  f'<Relationship Id="rIdStrings" Type="{_NS}/officeDocument/2006/'
                  'relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>')
_SHEET_REL = (f'<Relationship Id="rId{{n}}" Type="{_NS}/officeDocument/2006/relationships/'
              'worksheet" Target="worksheets/sheet{n}.xml"/>')
# Style 0: general; style 1: a percentage (0.00%); style 2: bold (the header).
_STYLES = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
           f'<styleSheet xmlns="{_NS}/spreadsheetml/2006/main">'
           '<fonts count="2"><font><sz val="10"/><name val="Arial"/></font>'
           '<font><b/><sz val="10"/><name val="Arial"/></font></fonts>'
           '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
           '<borders count="1"><border/></borders>'
           '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/>'
           '</cellStyleXfs><cellXfs count="3">'
           '<xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
           '<xf numFmtId="10" fontId="0" fillId="0" borderId="0" xfId="0" '
           'applyNumberFormat="1"/>'
           '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
           '</cellXfs></styleSheet>')
_SHEET = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
          f'<worksheet xmlns="{_NS}/spreadsheetml/2006/main" '
          f'xmlns:r="{_NS}/officeDocument/2006/relationships">'
          '<dimension ref="{dimension}"/><sheetData>{rows}</sheetData></worksheet>')


# Excel's parts: standalone declarations, and the styles and shared strings listed.
_EXCEL = Parts(_CONTENT_TYPES, _SHEET_TYPE, _ROOT_RELS, _WORKBOOK, _WORKBOOK_RELS, _SHEET_REL)


def styled_workbook(sheets: dict[str, list[list]], percent_columns: set[str] = frozenset()
                    ) -> bytes:
    """An .xlsx as Excel or Google Sheets save it: texts in the shared strings, numbers as
    numbers (percentages styled as such in the columns named `percent_columns`), a bold
    header, the used range in each sheet's <dimension>."""
    strings: dict[str, int] = {}

    def shared(text: str) -> int:
        return strings.setdefault(text, len(strings))

    def sheet_xml(rows: list[list]) -> str:
        header = next((row for row in rows if len(row) > 1), [])
        percent = {at for at, name in enumerate(header) if name in percent_columns}
        lines, width = [], 1
        for r, row in enumerate(rows, 1):
            cells = []
            for c, value in enumerate(row):
                if value in ("", None):
                    continue
                width = max(width, c + 1)
                ref = f"{column_name(c)}{r}"
                style = ' s="2"' if row is header else (' s="1"' if c in percent else "")
                if isinstance(value, int | float) and not isinstance(value, bool):
                    cells.append(f'<c r="{ref}"{style}><v>{value!r}</v></c>')
                else:
                    cells.append(f'<c r="{ref}"{style} t="s"><v>{shared(str(value))}</v></c>')
            lines.append(f'<row r="{r}" spans="1:{max(len(row), 1)}">{"".join(cells)}</row>'
                         if cells else "")
        return _SHEET.format(dimension=f"A1:{column_name(width - 1)}{max(len(rows), 1)}",
                             rows="".join(lines))

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        write_parts(packed, list(sheets), _EXCEL)
        packed.writestr("xl/styles.xml", _STYLES)
        for n, rows in enumerate(sheets.values(), 1):
            packed.writestr(f"xl/worksheets/sheet{n}.xml", sheet_xml(rows))
        packed.writestr("xl/sharedStrings.xml", (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
            f'<sst xmlns="{_NS}/spreadsheetml/2006/main" count="{len(strings)}" '
            f'uniqueCount="{len(strings)}">'
            + "".join(f'<si><t xml:space="preserve">{escape(text)}</t></si>'
                      for text in strings) + "</sst>"))
    return buffer.getvalue()


_ODS_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
           'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
           'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')


def opendocument_spreadsheet(sheets: dict[str, list[list]]) -> bytes:
    """An .ods as LibreOffice Calc saves it: the mimetype first and stored, a manifest, the
    cells in content.xml (numbers with their office:value)."""
    def cell(value) -> str:
        if value in ("", None):
            return "<table:table-cell/>"
        if isinstance(value, int | float) and not isinstance(value, bool):
            return (f'<table:table-cell office:value-type="float" office:value="{value}">'
                    f"<text:p>{value}</text:p></table:table-cell>")
        return (f'<table:table-cell office:value-type="string"><text:p>{escape(str(value))}'
                "</text:p></table:table-cell>")

    tables = "".join(
        f'<table:table table:name="{escape(name)}">' + "".join(
            "<table:table-row>" + "".join(map(cell, row or [""])) + "</table:table-row>"
            for row in rows) + "</table:table>"
        for name, rows in sheets.items())
    return packed_ods(tables)


def packed_ods(tables: str) -> bytes:
    """The .ods file around `tables` (content.xml's <table:table> elements): the mimetype
    first and stored, a manifest, the content."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        packed.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet",
                        compress_type=zipfile.ZIP_STORED)
        packed.writestr("META-INF/manifest.xml", (
            '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest="urn:'
            'oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
            '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/'
            'vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="'
            'content.xml" manifest:media-type="text/xml"/></manifest:manifest>'))
        packed.writestr("content.xml", (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_ODS_NS} '
            f'office:version="1.2"><office:body><office:spreadsheet>{tables}'
            "</office:spreadsheet></office:body></office:document-content>"))
    return buffer.getvalue()
