"""The files people have, read as an import's rows: a Search Console or Keyword Planner export,
a Semrush or Ahrefs keyword list, any CSV or TSV — and turned into the import's own shape
(`query,language,country,tags`, service/imports/imports.py), which the import then reads as it reads
any file of that shape.

- Text: UTF-8 with or without a byte order mark, UTF-16 (LE or BE) with one or without (told
  by its zero bytes), else Windows-1252 (said: `Source.encoding`). Separated by commas,
  semicolons or tabs, decided from the header line.
- The header is the first row (of the first TITLE_ROWS) that names a query column, one of
  two cells or more first (`_header_index`); the rows above it (an export's title lines) are
  passed over. Columns the choice does not name are ignored, never a reason to refuse. For
  the settings' columns page (`any_header`), a file none of whose rows names one has the
  columns of its widest first row offered to choose from.
- Of a workbook (.xlsx or .ods, read with python-calamine) or a zip archive of CSV files (Search
  Console's "Download CSV"), the chosen sheet or file; else the first whose rows name a query
  column, one named like one ("Queries", "Keywords.csv") tried first (Search Console's Filters
  sheet may have a row "Query | +shoes").
- `Choice`: which column holds the query, the language (or one language for every row), the
  country (or one for every row) and the tags (none, one or several, with their separator);
  `guess` makes one from the header's names in the languages of the demo; a separator left
  open is guessed from the first rows' tags (`tags_separator`: "product, price" is two).
- Languages and countries are codes in any case or names in English or in the languages of
  the header names ("German", "Germany", "Deutschland", "Allemagne"), read with Babel's
  names (English first where two would differ).

The rows keep their line numbers: the normalized file has a blank line (which an import
passes over, not counting it among the file's blank lines: `Shaping.title_lines`) for each
line above the header, and one for each row with no text, so a rejected row is named by its
line in the person's file.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import shutil
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import chain, islice
from operator import itemgetter
from typing import BinaryIO, TextIO

from babel import Locale
from babel.numbers import list_currencies
from python_calamine import CalamineError, CalamineWorkbook
from sqlalchemy import select

from weblib.spreadsheet_cells import guard_cell, unguard_cell
from weblib.tag_lists import (
    ANY_READER,
    SEPARATOR,
    join_tag_names,
    separators_in,
    split_tag_names,
)
from weblib.tag_names import fold_tag_name, tag_name_problem

from ..engine.numbers import BY_NAME as NUMBERS_BY_NAME
from ..engine.numbers import NAMES as NUMBER_NAMES
from ..org import admin, org_record, palette
from ..store.models import Tag
from . import language_detection, number_values, workbook_files, zip_members
from .imports import DROP_PIECE, HEADER_BYTES, MAX_LINE, NotCsv, project_tags, tag_names_in

TITLE_ROWS = 20  # an export's title lines above its header, at most
SEPARATORS = ",;\t"
SAMPLE_BYTES = 64 * 1024

# Header names, compared folded and without spaces or punctuation.
QUERY_NAMES = ("query", "queries", "topqueries", "keyword", "keywords", "searchterm",
               "searchterms", "searchquery", "suchanfrage", "suchanfragen", "suchbegriff",
               "motcle", "motscles", "requete", "requetes", "consulta", "consultas",
               "palabraclave", "palabrasclave", "parolachiave", "ricerca", "palavrachave",
               "palavraschave", "zoekwoord", "zoekwoorden", "zoekterm", "zoekopdracht",
               # Search Console's "Top queries" in German, French, Spanish
               "haufigstesuchanfragen", "requeteslesplusfrequentes", "consultasprincipales")
# Tried in this order on a tags cell when no separator is chosen (";" always separates).
TAG_SEPARATORS = ANY_READER
GUESS_ROWS = 200  # the rows a separator is guessed from
PROGRESS_ROWS = 20_000  # Shaping.write tells its progress every this many rows
LANGUAGE_NAMES = ("language", "lang", "languagecode", "sprache", "langue", "idioma",
                  "lingua")
COUNTRY_NAMES = ("country", "countrycode", "land", "pays", "pais", "paese", "database",
                 "location", "market")
# The names of languages and countries read as their codes: English, then the languages of
# the header names above.
NAME_LOCALES = ("en", "de", "fr", "es", "it")
# Names people use that Babel's English names are not: the official, newer or longer name is.
COUNTRY_ALIASES = {"uk": "GB", "greatbritain": "GB", "usa": "US",
                   "unitedstatesofamerica": "US", "turkey": "TR", "czechrepublic": "CZ",
                   "holland": "NL", "hongkong": "HK", "macau": "MO", "palestine": "PS",
                   "ivorycoast": "CI", "swaziland": "SZ", "burma": "MM"}
TAG_NAMES = ("tags", "tag", "labels", "label", "schlagworter", "etiquettes", "etiquetas")
# The columns of each number (service/engine/numbers.py) as the tools name them, folded: the
# names of a language that writes decimal commas second (a hint for the column's locale,
# number_values.decided). Search Console: Clicks, Impressions, CTR, Position; Keyword
# Planner: Avg. monthly searches, Top of page bid (low range) / (high range); Semrush: Volume
# or Search Volume, Keyword Difficulty, CPC (USD); Ahrefs: Volume, Difficulty or KD, CPC.
COLUMN_NAMES = {
    "clicks": (("clicks", "totalclicks"),
               ("klicks", "clics", "clicchi", "cliques", "klikken")),
    "impressions": (("impressions", "totalimpressions"),
                    ("impressionen", "impresiones", "impressioni", "impressoes",
                     "vertoningen")),
    "ctr": (("ctr", "clickthroughrate", "averagectr", "avgctr"),
            ("durchklickrate", "tauxdeclics", "porcentajedeclics", "tassodiclic")),
    "position": (("position", "averageposition", "avgposition", "currentposition"),
                 ("durchschnittlicheposition", "positionmoyenne", "posicion", "posicionmedia",
                  "posizione", "posizionemedia", "posicao", "posicaomedia", "positie",
                  "gemiddeldepositie")),
    "volume": (("volume", "searchvolume", "avgmonthlysearches", "averagemonthlysearches",
                "monthlysearches"),
               ("suchvolumen", "durchschnsuchanfragenpromonat",
                "durchschnittlichesuchanfragenpromonat", "moyennedesrecherchesmensuelles",
                "volumederecherche", "volumederecherches", "promediodebusquedasmensuales",
                "volumendebusqueda", "volumendebusquedas", "volumediricerca", "zoekvolume")),
    "cpc": (("cpc", "costperclick", "averagecpc", "avgcpc", "suggestedbid"),
            ("cpcmoyen", "cpcmedio", "kostenproklick", "coutparclic", "costeporclic")),
    "difficulty": (("keyworddifficulty", "kd", "difficulty", "seodifficulty"),
                   ("keywordschwierigkeit", "schwierigkeit", "difficulte", "dificultad",
                    "difficolta", "dificuldade")),
}
# Keyword Planner's bids, low and high: its CPC is their midpoint (one of them alone where
# the other is empty). A CPC column that is one of a pair reads both.
BID_PAIRS = (("topofpagebidlowrange", "topofpagebidhighrange"),
             ("gebotfuroberenseitenbereichniedrigerbereich",
              "gebotfuroberenseitenbereichhoherbereich"),
             ("enchereenhautdepageplagebasse", "enchereenhautdepageplagehaute"),
             ("pujaporlapartesuperiordelapaginaintervalobajo",
              "pujaporlapartesuperiordelapaginaintervaloalto"))


def folded_name(name: str) -> str:
    """A header's name as it is compared: letters and digits only, accents and case gone."""
    decomposed = unicodedata.normalize("NFKD", name.casefold())
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c))


@dataclass(frozen=True)
class Choice:
    """Which columns (by their header's name, as written) hold what; a language or country
    for every row instead of a column."""

    query_column: str | None = None
    language_column: str | None = None
    language: str | None = None
    country_column: str | None = None
    country: str | None = None
    tags_columns: tuple[str, ...] = ()
    tags_separator: str | None = None  # None: guessed from the cells (tags_separator)
    sheet: str | None = None  # of a workbook: guessed when None (read_source)
    # Each query's language told from its words, among these languages, where the file has
    # no language column; `language` for the queries it cannot tell (language_detection.py).
    detect_language: bool = False
    detect_languages: tuple[str, ...] = ()
    # The column of each number (its name, as NUMBERS name it): (number, column) pairs, in
    # the order of NUMBERS; a number not named is guessed from the header, one named with
    # the column "" has none.
    numbers: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # Read back from JSON as a list, given by the command line as "de,fr".
        object.__setattr__(self, "detect_languages", tuple(dict.fromkeys(
            code.strip().lower() for code in self.detect_languages if code.strip())))
        named = dict((str(name), str(column or "")) for name, column in self.numbers
                     if name in NUMBERS_BY_NAME)
        object.__setattr__(self, "numbers", tuple(
            (name, named[name]) for name in NUMBER_NAMES if name in named))

    def number_column(self, name: str) -> str | None:
        """The column chosen for a number: its name, "" for none, None when not chosen."""
        return dict(self.numbers).get(name)

    def problems(self) -> list[str]:
        found = []
        if self.detect_language and not self.language_column:
            found.extend(language_detection.problems(self.detect_languages))
        if self.language_column and self.language:
            found.append("Choose a language column or one language for every row, not both.")
        if self.country_column and self.country:
            found.append("Choose a country column or one country for every row, not both.")
        if self.tags_separator == "":
            found.append("The separator of the tags must not be empty.")
        return found


def guess(header: list[str], given: Choice = Choice()) -> Choice:
    """`given` with each column it leaves open guessed from the header's names."""
    by_name = {}
    for name in header:
        by_name.setdefault(folded_name(name), name)

    def found(names: tuple[str, ...]) -> str | None:
        return next((by_name[name] for name in names if name in by_name), None)

    return Choice(
        query_column=given.query_column or found(QUERY_NAMES),
        language_column=given.language_column or (None if given.language
                                                  else found(LANGUAGE_NAMES)),
        language=given.language,
        country_column=given.country_column or (None if given.country
                                                else found(COUNTRY_NAMES)),
        country=given.country,
        tags_columns=given.tags_columns or tuple(
            name for name in header if folded_name(name) in TAG_NAMES),
        tags_separator=given.tags_separator,
        sheet=given.sheet,
        detect_language=given.detect_language,
        detect_languages=given.detect_languages,
        numbers=tuple((name, column if (column := given.number_column(name)) is not None
                       else number_column_in(header, name) or "")
                      for name in NUMBER_NAMES),
    )


def number_column_in(header: list[str], name: str) -> str | None:
    """The column of the header a number is guessed from (COLUMN_NAMES; a CPC also from a
    column named "CPC …", such as "CPC (USD)", else from Keyword Planner's low bid)."""
    by_name = {}
    for column in header:
        by_name.setdefault(folded_name(column), column)
    english, others = COLUMN_NAMES[name]
    found = next((by_name[folded] for folded in (*english, *others) if folded in by_name), None)
    if found is None and name == "cpc":
        found = next((column for folded, column in by_name.items()
                      if folded.startswith("cpc")), None) or next(
            (by_name[low] for low, _high in BID_PAIRS if low in by_name), None)
    return found


def _decimal_hint(column: str, separator: str) -> str:
    """The decimal mark a column's name or the file's separator suggests: "," for a name of
    a language that writes decimal commas, or a file separated by semicolons."""
    folded = folded_name(column)
    if any(folded in others for _english, others in COLUMN_NAMES.values()) or \
            separator == ";":
        return ","
    return "."


# --- names of languages and countries ---------------------------------------------------------


@cache
def _names(kind: str) -> dict[str, str]:
    """Folded name → code, of Babel's languages or territories, in NAME_LOCALES (the first
    locale's name kept where two would differ)."""
    found: dict[str, str] = {}
    for locale in map(Locale, NAME_LOCALES):
        names = locale.languages if kind == "language" else locale.territories
        for code, name in names.items():
            if code.isalpha() and "_" not in code:
                found.setdefault(folded_name(name), code)
    return found


# A file's languages and countries are a few values over and over: each read once (1M rows of
# "United States": 3 s of folding names).
CODES_KEPT = 4096


@lru_cache(maxsize=CODES_KEPT)
def language_code(value: str) -> str:
    """A language as an import reads it: its code (any case) as it is, or the code of its
    English name ("German" → "de"); anything else as it is, for the import to judge."""
    value = value.strip()
    if len(value) > 3 or not value.isalpha():
        return _names("language").get(folded_name(value), value)
    return value


@lru_cache(maxsize=CODES_KEPT)
def country_code(value: str) -> str:
    """A country as an import reads it: its code as it is, or the code of its name ("Germany",
    "Deutschland" → "DE"; "UK", "USA", "Turkey": COUNTRY_ALIASES)."""
    value = value.strip()
    if (alias := COUNTRY_ALIASES.get(folded_name(value))) is not None:
        return alias
    if len(value) > 3 or not value.isalpha():
        return _names("country").get(folded_name(value), value)
    return value


# --- reading -----------------------------------------------------------------------------------


@dataclass
class Source:
    """A file's rows as lists of texts, from its first line, and how its text was read."""

    rows: Iterator[list[str]]
    encoding: str
    separator: str
    header_line: int = 1  # the header's line, once found
    header: list[str] = field(default_factory=list)
    sheet: str | None = None  # of a workbook, the sheet read


def _decoded(binary: BinaryIO) -> tuple[TextIO, str]:
    binary.seek(0)
    start = binary.read(SAMPLE_BYTES)
    binary.seek(0)
    if not start:
        raise NotCsv("The file is empty.")
    if start.startswith(codecs.BOM_UTF8):
        return io.TextIOWrapper(binary, "utf-8-sig", newline=""), "UTF-8"
    if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return io.TextIOWrapper(binary, "utf-16", newline=""), "UTF-16"
    if (order := _utf16_without_mark(start)) is not None:
        return io.TextIOWrapper(binary, order, newline=""), "UTF-16"
    if b"\x00" in start:
        raise NotCsv("This is not a CSV file: it holds binary data, not text.")
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(start) - 4:  # not a character cut by the sample's end
            return io.TextIOWrapper(binary, "cp1252", errors="replace",
                                    newline=""), "Windows-1252"
    return io.TextIOWrapper(binary, "utf-8", errors="strict", newline=""), "UTF-8"


def _utf16_without_mark(start: bytes) -> str | None:
    """"utf-16-le" or "utf-16-be" for UTF-16 text with no byte order mark, told by its
    zero bytes (the high bytes of Latin letters, digits and separators); else None."""
    pairs = start[:4096]
    pairs = pairs[:len(pairs) - len(pairs) % 2]
    if len(pairs) < 4:
        return None
    even, odd = pairs[0::2].count(0), pairs[1::2].count(0)
    half = len(pairs) // 2
    if odd >= half * 0.4 and even <= half * 0.02:
        return "utf-16-le"
    if even >= half * 0.4 and odd <= half * 0.02:
        return "utf-16-be"
    return None


def _separator(line: str) -> str:
    counts = {separator: line.count(separator) for separator in SEPARATORS}
    return max(SEPARATORS, key=lambda separator: (counts[separator], separator == ","))


TOO_LONG = object()  # a line longer than the bound: read in pieces and dropped


def _bounded_lines(text: TextIO) -> Iterator:
    """The file's lines, each at most MAX_LINE characters (the first TITLE_ROWS at most
    HEADER_BYTES): a longer one is read a piece at a time, dropped, and given as TOO_LONG,
    never held whole. A file that cannot be decoded is NotCsv."""
    number = 0
    try:
        while True:
            number += 1
            bound = HEADER_BYTES if number <= TITLE_ROWS else MAX_LINE
            line = text.readline(bound + 1)
            if not line:
                return
            if len(line) > bound and not line.endswith(("\n", "\r")):
                while (rest := text.readline(DROP_PIECE)) and not rest.endswith("\n"):
                    pass
                yield TOO_LONG
                continue
            yield line
    except UnicodeDecodeError:
        raise NotCsv("The file is not UTF-8 text (nor UTF-16 with a byte order mark): save "
                     "it as CSV UTF-8 and import that file.") from None


def _names_query(cells: list[str], choice: Choice) -> bool:
    wanted = {folded_name(choice.query_column)} if choice.query_column else set(QUERY_NAMES)
    return not wanted.isdisjoint(folded_name(cell) for cell in cells)


def _no_header(choice: Choice) -> NotCsv:
    named = f"“{choice.query_column}”" if choice.query_column else \
        "query, keyword or top queries"
    return NotCsv(f"No line among the first {TITLE_ROWS} of this file names a query column "
                  f"({named}): choose the column that holds the queries.")


def read_source(binary: BinaryIO, choice: Choice = Choice(), any_header: bool = False
                ) -> Source:
    """The file's rows, its header found (the first of its first TITLE_ROWS rows that names
    a query column: `choice.query_column`, or a name of QUERY_NAMES), or NotCsv. With
    `any_header`, when none names one, the first of the widest of those rows (two cells or
    more): its columns are offered for a person to choose the query column among them."""
    binary.seek(0)
    if binary.read(4) == b"PK\x03\x04":
        if (members := _archived_texts(binary)) is not None:
            return _archive(binary, members, choice, any_header)
        return _workbook(binary, choice, any_header)
    return _text_source(binary, choice, any_header)


def _text_source(binary: BinaryIO, choice: Choice, any_header: bool) -> Source:
    text, encoding = _decoded(binary)
    lines = _bounded_lines(text)
    first: list[tuple[str, str, list[str]]] = []  # (line, separator, cells)
    for _ in range(TITLE_ROWS):
        line = next(lines, None)
        if line is None:
            break
        if line is TOO_LONG:  # a header is looked for above it only
            lines = chain([TOO_LONG], lines)
            break
        separator = _separator(line)
        first.append((line, separator, next(csv.reader([line], delimiter=separator), [])))
    at = _header_index([cells for _line, _separator, cells in first], choice, any_header)
    if at is None:
        if len(first) < TITLE_ROWS and next(lines, None) is TOO_LONG:
            which = "first line" if not first else f"line {len(first) + 1}"
            raise NotCsv(f"The header must name a query column, but this file's {which} is "
                         f"longer than {HEADER_BYTES // 1024} KiB.")
        raise _no_header(choice)
    _line, separator, cells = first[at]
    rest = chain((line for line, _separator, _cells in first[at + 1:]), lines)
    return Source(_rows(rest, separator), encoding, separator, at + 1, cells)


def _header_index(rows: list[list[str]], choice: Choice, any_header: bool) -> int | None:
    """Which of a file's first rows is its header: the first that names a query column and
    holds two cells or more (a title "Keywords" alone above it is passed over), else the first
    that names one; else, with `any_header`, the first of the widest, if two cells or more
    hold text."""
    naming = [at for at, cells in enumerate(rows) if _names_query(cells, choice)]
    if naming:
        return next((at for at in naming if _filled(rows[at]) >= 2), naming[0])
    if not any_header:
        return None
    widths = [_filled(cells) for cells in rows]
    if not widths or max(widths) < 2:
        return None
    return widths.index(max(widths))


def _filled(cells: list[str]) -> int:
    return sum(1 for cell in cells if cell.strip())


# The most a workbook's sheets and shared strings may hold unpacked (a small file can unpack
# to gigabytes: it is refused before it is opened).
MAX_UNPACKED = 512 * 1024 * 1024


def _workbook(binary: BinaryIO, choice: Choice, any_header: bool = False) -> Source:
    """A workbook's sheet (the chosen one, else the first whose rows name a query column):
    Excel's .xlsx, or LibreOffice's .ods, read with python-calamine from a copy whose sheets
    are within their bounds (service/imports/workbook_files.py); each cell as text ("42", not
    "42.0")."""
    try:
        with workbook_files.checked_copy(binary, MAX_UNPACKED) as copy:
            book = CalamineWorkbook.from_path(str(copy.path))
        kind = copy.kind
        names = book.sheet_names
        if choice.sheet is not None and choice.sheet not in names:
            raise NotCsv(f"The workbook has no sheet “{choice.sheet}”; its sheets are "
                         + ", ".join(f"“{name}”" for name in names[:12]) + ".")
        tried = [choice.sheet] if choice.sheet is not None else _sheets_to_try(names)
        for name in tried:
            found = _sheet_header(book.get_sheet_by_name(name), kind, choice)
            if found:
                return found
        if any_header and tried:
            found = _sheet_header(book.get_sheet_by_name(tried[0]), kind, choice, any_header)
            if found:
                return found
    except CalamineError as error:
        raise NotCsv(f"This workbook could not be read ({error}): save its sheet as CSV and "
                     "import that file.") from None
    raise _no_header(choice)


def _sheets_to_try(names: list[str]) -> list[str]:
    """A workbook's sheets (or an archive's files) in the order their header is looked for:
    those named like a query column first ("Queries", "Keywords.csv"), then the others in
    order."""
    return sorted(names, key=lambda name: folded_name(_stem(name)) not in QUERY_NAMES)


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    stem, dot, extension = base.rpartition(".")
    return stem if dot and extension.lower() in TEXT_EXTENSIONS else base


# --- a zip archive of CSV files (Search Console's "Download CSV") -------------------------------

TEXT_EXTENSIONS = ("csv", "tsv", "txt")
WORKBOOK_PARTS = ("xl/workbook.xml", "xl/workbook.bin", "content.xml")
ARCHIVE_MEMORY = 16 * 1024 * 1024  # a member is copied out, on disk beyond this


def _archived_texts(binary: BinaryIO) -> list[str] | None:
    """The CSV, TSV and text files of a zip archive that is not a workbook, in its order;
    None for a workbook (or a file whose directory zipfile cannot read: read as a workbook, it
    says why)."""
    try:
        with zip_members.opened(binary) as packed:
            names = packed.namelist()
            unpacked = sum(item.file_size for item in packed.infolist())
    except NotCsv:
        return None
    if any(part in names for part in WORKBOOK_PARTS):
        return None
    if unpacked > MAX_UNPACKED:
        raise NotCsv(f"This zip archive unpacks to more than {MAX_UNPACKED >> 20} MiB: import "
                     "its CSV file itself.")
    found = [name for name in names if not name.endswith("/")
             and not name.startswith("__MACOSX/")
             and name.rpartition(".")[2].lower() in TEXT_EXTENSIONS]
    if not found:
        raise NotCsv("This zip archive holds no CSV file: import a CSV file or a workbook.")
    return found


def _archive(binary: BinaryIO, members: list[str], choice: Choice, any_header: bool
             ) -> Source:
    """A file of a zip archive of CSV files, as a sheet of a workbook: the chosen one, else
    the first whose rows name a query column."""
    if choice.sheet is not None and choice.sheet not in members:
        raise NotCsv(f"The archive has no file “{choice.sheet}”; its files are "
                     + ", ".join(f"“{name}”" for name in members[:12]) + ".")
    tried = [choice.sheet] if choice.sheet is not None else _sheets_to_try(members)
    # Each file for a header that names a query column; then, with any_header, the first
    # for its widest row.
    attempts = [(name, False) for name in tried] + [(tried[0], True)] * any_header
    for index, (name, widest) in enumerate(attempts):
        with zip_members.opened(binary) as packed, \
                zip_members.reading(packed, packed.getinfo(name)) as member:
            copy = tempfile.SpooledTemporaryFile(ARCHIVE_MEMORY)  # noqa: SIM115 — the rows read it
            shutil.copyfileobj(member, copy)
        try:
            found = _text_source(copy, choice, widest)
        except NotCsv as error:
            if index < len(attempts) - 1:
                continue
            if choice.sheet is None and not widest:
                raise
            raise NotCsv(f"“{name}” of this archive: {error}") from None
        found.sheet = name
        return found
    raise _no_header(choice)  # not reached: the last attempt returns or raises


def _sheet_header(sheet, kind: str, choice: Choice, any_header: bool = False
                  ) -> Source | None:
    rows = (list(map(_cell_text, row)) for row in sheet.iter_rows())
    first = list(islice(rows, TITLE_ROWS))
    at = _header_index(first, choice, any_header)
    if at is None:
        return None
    first_row = sheet.start[0] + 1 if sheet.start else 1
    return Source(chain(first[at + 1:], rows), f"the sheet “{sheet.name}” of {kind}", "",
                  first_row + at, first[at], sheet.name)


def sheet_names(binary: BinaryIO) -> list[str]:
    """A workbook's sheets, or the CSV files of a zip archive, in order ([] for a text file,
    or a workbook or archive that cannot be read, or is beyond its bounds: reading it says
    why)."""
    binary.seek(0)
    if binary.read(4) != b"PK\x03\x04":
        return []
    try:
        if (members := _archived_texts(binary)) is not None:
            return members
        with workbook_files.checked_copy(binary, MAX_UNPACKED) as copy:
            return list(CalamineWorkbook.from_path(str(copy.path)).sheet_names)
    except (NotCsv, CalamineError):
        return []


def _cell_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return "" if value is None else str(value)


def _rows(lines: Iterator, separator: str) -> Iterator[list[str] | object]:
    """The rows after the header; TOO_LONG for a line over the bound."""
    pending: list[str] = []

    def text_lines():
        for line in lines:
            if line is TOO_LONG:
                pending.append("")
                continue
            yield line

    reader = csv.reader(text_lines(), delimiter=separator, quotechar='"', doublequote=True,
                        strict=False)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            for _ in pending:
                yield TOO_LONG
            return
        except csv.Error:
            row = TOO_LONG  # a field over csv's own limit: rejected as too long
        while pending:
            pending.pop()
            yield TOO_LONG
        yield row


# --- the import's own shape --------------------------------------------------------------------


def _column(header: list[str], name: str | None, what: str) -> int | None:
    if name is None:
        return None
    for index, cell in enumerate(header):
        if cell.strip() == name.strip():
            return index
    for index, cell in enumerate(header):
        if folded_name(cell) == folded_name(name):
            return index
    raise NotCsv(f"The file has no column “{name}” for the {what}; its columns are "
                 + ", ".join(f"“{cell}”" for cell in header[:12]) + ".")


class Shaping:
    """A file's rows turned into the import's own (query, language, country, tags), as a
    choice of columns says; NotCsv when the choice cannot be made on this file."""

    def __init__(self, binary: BinaryIO, given: Choice, any_header: bool = False) -> None:
        self.source = read_source(binary, given, any_header)
        choice = replace(guess(self.source.header, given), sheet=self.source.sheet)
        header = self.source.header
        self.query = _column(header, choice.query_column, "queries")
        self.language = _column(header, choice.language_column, "language")
        self.country = _column(header, choice.country_column, "country")
        # What is still to choose before the rows can be imported (the rows can be shown).
        self.problems = choice.problems()
        if self.query is None:
            self.problems.append("Choose the column that holds the queries.")
        if self.language is None and not choice.language:
            self.problems.append("The file has no language column: choose one, or one "
                                 "language for every row.")
        if self.country is None and not choice.country:
            self.problems.append("The file has no country column: choose one, or one country "
                                 "for every row.")
        self.tags = [_column(header, name, "tags") for name in choice.tags_columns]
        numbers = [(name, column) for name, column in choice.numbers if column]
        first: list = []
        if choice.tags_separator is None or numbers:
            first = list(islice(self.source.rows, GUESS_ROWS))
            self.source.rows = chain(first, self.source.rows)
            first = [row for row in first if row is not TOO_LONG]
        if choice.tags_separator is None:
            choice = replace(choice, tags_separator=tags_separator(
                row[index] for row in first
                for index in self.tags if index is not None and index < len(row)))
        self.choice = choice
        self.numbers = NumberCells(header, numbers, first, self.source.separator)
        self.every_language = language_code(choice.language) if choice.language else ""
        self.every_country = country_code(choice.country) if choice.country else ""
        self.separators = (choice.tags_separator, SEPARATOR)
        self.width = len(header)
        self.tag_separators = SeparatorCounts(self.separators)
        # Each query's language detected (a file's language column wins, as over `language`).
        self.detection = language_detection.Detection(
            choice.detect_languages, self.every_language) \
            if choice.detect_language and self.language is None else None

    def shaped(self, row: list[str], line: int = 0) -> list[str]:
        """The row in the import's own shape (its numbers after its tags, NumberCells);
        `line`: its line in the file, said of a number that cannot be read."""
        if len(row) < self.width:
            row = row + [""] * (self.width - len(row))

        def cell(index: int | None) -> str:
            return row[index] if index is not None and index < len(row) else ""

        # Split as written (our export's apostrophes off, quoted names whole), joined for the
        # import's own shape (split at ";" only), guarded again as the import takes it.
        names = [name for index in self.tags
                 for name in split_tag_names(unguard_cell(cell(index)), self.separators)]
        shaped = [cell(self.query),
                  self.every_language or language_code(cell(self.language)),
                  self.every_country or country_code(cell(self.country)),
                  guard_cell(join_tag_names(names, (SEPARATOR,), SEPARATOR))]
        if self.numbers.names:
            shaped.extend(self.numbers.cells(row, line))
        return shaped

    def first(self, count: int, numbers: bool = False) -> list[list[str]]:
        """The first `count` rows with any text, shaped (a preview); with `numbers`, each
        followed by its numbers as they will be stored, in words (`NumberCells.names`)."""
        found = []
        for line, row in enumerate(self.source.rows, start=self.source.header_line + 1):
            if row is TOO_LONG or not any(value.strip() for value in row):
                continue
            found.append(self.shaped(row, line))
            if len(found) == count:
                break
        if self.detection is not None and not self.problems:
            found = list(self.detection.relabel(found))
        return [[*admin.query_key(query, language, country), tags,
                 *(self.numbers.shown(cells) if numbers else ())]
                for query, language, country, tags, *cells in found]

    @property
    def title_lines(self) -> int:
        """The lines above the header: blank lines in the import's own shape (so that every
        row keeps its line), which the import passes over without counting them as blank."""
        return self.source.header_line - 1

    def write(self, out: TextIO, progress: Callable[[int], None] | None = None,
              every: int = PROGRESS_ROWS) -> None:
        """Every row, in the import's own shape; the lines above the header kept counted.
        A row with no text (no cells, separators only, a workbook's empty cells) is written
        as a blank line, which the import passes over and counts: no row, so never "the query
        is empty". The separators of the tags cells are counted (`tag_separators`).
        NotCsv while something is still to choose. `progress`, if given, is called with the
        rows written so far every `every` rows (it may raise to stop the writing)."""
        if self.problems:
            raise NotCsv(" ".join(self.problems))
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["query", "language", "country", "tags", *self.numbers.names])
        out.write("\n" * self.title_lines)
        lines = self._lines()
        if self.detection is not None:  # a batch at a time, in order
            lines = self.detection.relabel(lines)
        for count, line in enumerate(lines, start=1):
            if line is None:
                out.write("\n")
            else:
                writer.writerow(line)
            if progress is not None and count % every == 0:
                progress(count)

    def _lines(self) -> Iterator[list[str] | None]:
        """Each row shaped, or None for a row with no text (a blank line)."""
        too_long = "x" * (MAX_LINE + 1)  # the import rejects it as too long, on its line
        empty = [""] * (3 + len(self.numbers.names))
        for line, row in enumerate(self.source.rows, start=self.source.header_line + 1):
            if row is TOO_LONG:
                yield [too_long, *empty]
            elif not any(value.strip() for value in row):
                yield None
            else:
                if self.tags:  # most exports have none: nothing to count, row after row
                    self.tag_separators.count(row[index] for index in self.tags
                                              if index is not None and index < len(row))
                yield self.shaped(row, line)


# Decimal commas written as decimal points, and points (thousands) as commas: a cell of a
# column with decimal commas as the import's own shape reads it (number_values: one locale).
_SWAPPED = str.maketrans({",": ".", ".": ","})


class NumberCells:
    """The cells of a row's numbers in the import's own shape: each chosen column's cell as
    the file has it where its decimal mark is a point (the import reads it, and counts it
    where it cannot: number_values.Column), its points and commas swapped where its decimal
    mark is a comma, "%" added to a CTR column of percentages without it; Keyword Planner's
    two bids read here (the midpoint written), their unreadable cells counted in `columns`.
    `names`: the numbers, in the order of their cells."""

    def __init__(self, header: list[str], chosen: list[tuple[str, str]], first: list,
                 separator: str) -> None:
        self.names: list[str] = []
        self.plain: list[tuple[int, bool, bool]] = []  # (index, swapped, percent)
        self.bids: tuple[int, int, number_values.Column, number_values.Column] | None = None
        self.columns: list[number_values.Column] = []  # read here: the bids
        self.described: list[str] = []
        self.sources = dict(chosen)  # number → the file's column
        for name, column in chosen:
            number = NUMBERS_BY_NAME[name]
            index = _column(header, column, number.label + " column")
            pair = _bid_pair(header, column) if name == "cpc" else None

            def decided(at: int, number=number) -> number_values.Column:
                values = [row[at] for row in first if at < len(row)]
                return number_values.decided(number, values,
                                             _decimal_hint(header[at], separator), header[at])

            if pair is not None:
                low, high = pair
                self.bids = (low, high, decided(low), decided(high))
                self.columns.extend(self.bids[2:])
                self.described.append(f"CPC from the midpoint of “{header[low]}” and "
                                      f"“{header[high]}”")
                self.names.append(name)
                continue
            reader = decided(index)
            self.plain.append((index, reader.decimal == ",", reader.percent))
            self.names.append(name)
            self.described.append(f"{number.label if name in ('ctr', 'cpc') else name} from "
                                  f"“{header[index]}”")
        # The currency of its CPC, where the file says it ("CPC (USD)", a Currency column).
        self.currency = _currency(header, self.sources["cpc"], first) \
            if "cpc" in self.names else None
        if self.currency:
            self.described.append(f"CPC in {self.currency}")
        # The own shape's order: the plain cells, then the bids' midpoint.
        if self.bids is not None:
            self.names.remove("cpc")
            self.names.append("cpc")
        self.own = [number_values.Column(NUMBERS_BY_NAME[name]) for name in self.names]
        # The plain cells taken at once where none needs changing (most exports).
        indexes = [index for index, _swapped, _percent in self.plain]
        self.copied = None
        if indexes and not any(swapped or percent for _i, swapped, percent in self.plain):
            self.copied = itemgetter(*indexes) if len(indexes) > 1 else \
                (lambda row, at=indexes[0]: (row[at],))

    def cells(self, row: list[str], line: int) -> list[str]:
        """The row's number cells (the row as wide as the header)."""
        if self.copied is not None:  # every plain cell as the file has it
            found = list(self.copied(row))
        else:
            found = []
            for index, swapped, percent in self.plain:
                text = row[index]
                if swapped:
                    text = text.translate(_SWAPPED)
                if percent and text[-1:].isdigit():
                    text += "%"
                found.append(text)
        if self.bids is not None:
            low, high, low_reader, high_reader = self.bids
            bids = [value for value in (low_reader.value(row[low], line),
                                        high_reader.value(row[high], line))
                    if value is not None]
            found.append(repr(sum(bids) / len(bids)) if bids else "")
        return found

    def named(self, columns: list[number_values.Column]) -> list[number_values.Column]:
        """The readers of the import's own shape (named by the numbers), named by the
        columns of the person's file they came from, for what a check says of them."""
        for column in columns:
            if column.name == column.number.name and column.name in self.sources:
                column.name = self.sources[column.name]
        return columns

    def shown(self, cells: list[str]) -> list[str]:
        """The cells' numbers as they will be stored, in words ("" where unknown)."""
        return [shown_number(reader.number.name, reader.value(text))
                for reader, text in zip(self.own, cells, strict=True)]


def shown_number(name: str, value: float | None) -> str:
    """A number as the Columns page shows it: "1,234", "3.51%", "7.2", "" when unknown."""
    if value is None:
        return ""
    number = NUMBERS_BY_NAME[name]
    if number.whole:
        return f"{round(value):,}"
    if name == "ctr":
        return f"{round(value * 100, 4):g}%"
    return f"{round(value, 6):,.6g}"


CURRENCY_NAMES = ("currency", "wahrung", "devise", "moneda", "valuta", "moeda")
_CODE_IN_NAME = re.compile(r"\(([A-Za-z]{3})\)")
_SIGNS = {"€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}  # "$" is many currencies'


def _currency(header: list[str], cpc: str, first: list[list[str]]) -> str | None:
    """The ISO 4217 code of a file's CPC, where it says it: in the CPC column's name ("CPC
    (USD)"), a Currency column's first value (Keyword Planner), or a sign its first cells
    carry ("0,45 €"); else None."""
    found = None
    if (named := _CODE_IN_NAME.search(cpc)) is not None:
        found = named.group(1)
    folded = [folded_name(name) for name in header]
    if found is None and (at := next((folded.index(name) for name in CURRENCY_NAMES
                                      if name in folded), None)) is not None:
        found = next((row[at].strip() for row in first
                      if at < len(row) and row[at].strip()), None)
    if found is None and cpc in header:
        at = header.index(cpc)
        found = next((code for row in first if at < len(row)
                      for sign, code in _SIGNS.items() if sign in row[at]), None)
    found = (found or "").upper()
    return found if found in _currencies() else None


@cache
def _currencies() -> frozenset[str]:
    return frozenset(list_currencies())


def keep_currency(session, project_id: str, code: str | None) -> bool:
    """Say the project's CPC currency is `code` where it said none; whether it did (in the
    session's transaction)."""
    project = admin.project_by_id(session, project_id)
    if not code or project is None or project.currency:
        return False
    project.currency = code
    return True


def _bid_pair(header: list[str], column: str) -> tuple[int, int] | None:
    """The indexes of Keyword Planner's low and high bids when `column` is one of them and
    the header has the other; else None."""
    folded = [folded_name(name) for name in header]
    chosen = folded_name(column)
    for low, high in BID_PAIRS:
        if chosen in (low, high) and low in folded and high in folded:
            return folded.index(low), folded.index(high)
    return None


class SeparatorCounts:
    """How many rows' tags cells hold each separator an import knows (ANY_READER, outside
    quoted names), and what they say when a file uses one that `splitting_at` would not
    split at: "price | cargo" left as one tag beside cells of "price; cargo"."""

    def __init__(self, splitting_at: tuple[str, ...]) -> None:
        self.splitting_at = splitting_at
        self.rows: Counter[str] = Counter()

    def count(self, cells: Iterable[str]) -> None:
        found = set()
        for cell in cells:
            found.update(separators_in(unguard_cell(cell), TAG_SEPARATORS))
        self.rows.update(found)

    def sentence(self) -> str:
        """"Tags cells use “;” in 1,204 rows and “|” in 37 rows: choose the separator.", or ""
        when every separator the cells use is one they are split at."""
        if set(self.rows) <= set(self.splitting_at):
            return ""
        used = [f"“{separator}” in {count:,} row{'s' * (count != 1)}"
                for separator, count in self.rows.most_common()]
        listed = used[0] if len(used) == 1 else ", ".join(used[:-1]) + " and " + used[-1]
        return f"Tags cells use {listed}: choose the separator."


def tags_separator(cells: Iterable[str]) -> str:
    """What separates the tags of these cells: the first of TAG_SEPARATORS any holds outside
    its quoted names, else ";"."""
    held = set()
    for cell in cells:
        held.update(separators_in(unguard_cell(cell), TAG_SEPARATORS))
    return next((separator for separator in TAG_SEPARATORS if separator in held), ";")


def normalized(binary: BinaryIO, given: Choice, out: TextIO) -> Shaping:
    """Write the file in the import's own shape to `out`; the Shaping that wrote it (its
    choice made, given and the rest guessed; how the file was read; the separators its tags
    cells use). NotCsv when the choice cannot be made."""
    shaping = Shaping(binary, given)
    shaping.write(out)
    return shaping


def tags_named(text_file: TextIO) -> dict[str, str]:
    """The tag names a file in the import's own shape names, by folded name (first spelling
    kept); read from its start, left at its start."""
    text_file.seek(0)
    found: dict[str, str] = {}
    reader = csv.reader(text_file)
    header = [name.strip().lower() for name in next(reader, [])]
    if "tags" in header:
        at = header.index("tags")
        for row in reader:
            if at < len(row):
                for name in tag_names_in(unguard_cell(row[at])):
                    found.setdefault(fold_tag_name(name), name)
    text_file.seek(0)
    return found


def lacking_tags(session, project_id: str, names: dict[str, str]) -> list[str]:
    """The names of `names` (by folded name, tags_named's answer) the project has no tag of."""
    known = project_tags(session, project_id)
    return [name for folded, name in names.items() if folded not in known]


def create_missing_tags(session, project_id: str, names: dict[str, str],
                        by: org_record.ByImport) -> list[str]:
    """Make the tags of `names` (by folded name) the project lacks, each in the palette
    colour its tags use least, each on the organization's record as made by the import `by`;
    their names, in the file's order."""
    project = admin.project_by_id(session, project_id)
    existing = project_tags(session, project_id)
    in_use = Counter(color.lower() for color in session.scalars(
        select(Tag.color).where(Tag.project_id == project_id)))
    made = []
    for folded, name in names.items():
        if folded in existing or tag_name_problem(name):
            continue  # a name no tag may have: its rows are rejected, and say why
        color = palette.pick(in_use)
        in_use[color] += 1
        admin.create_tag(session, project_id, name, color)
        org_record.record_tag_change(session, project.org_id, "tag.created", name,
                                     f"In “{project.name}”, colour {color}.", by_import=by)
        existing[folded] = -1
        made.append(name)
    return made


SEPARATOR_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def detected_language(choice: Choice) -> str:
    """"the language of each query detected among de, fr (de where it cannot be told)", or ""
    when it is not detected."""
    if not choice.detect_language or choice.language_column:
        return ""
    fallback = language_code(choice.language) if choice.language else "?"
    return (f"the language of each query detected among {', '.join(choice.detect_languages)}"
            f" ({fallback} where it cannot be told)")


def describe(choice: Choice, source: Source, shaping_numbers: list[str] | None = None) -> str:
    """How a file was read, in words: 'Read as UTF-16 text separated by tabs, its header on
    line 3: the queries from “Keyword”, language de for every row, … Numbers: clicks from
    “Clicks”, …' (`shaping_numbers`: NumberCells.described)."""
    def column(name: str | None, fixed: str | None, what: str) -> str:
        return f"{what} {fixed} for every row" if fixed else f"the {what} from “{name}”"

    tags = ", ".join(f"“{name}”" for name in choice.tags_columns)
    if tags and choice.tags_separator and choice.tags_separator != ";":
        tags += f" (separated by “{choice.tags_separator}”)"
    parts = [f"the queries from “{choice.query_column}”",
             detected_language(choice) or column(
                 choice.language_column, choice.language and language_code(choice.language),
                 "language"),
             column(choice.country_column, choice.country and country_code(choice.country),
                    "country"),
             f"the tags from {tags}" if tags else "no tags"]
    numbers = f" Numbers: {', '.join(shaping_numbers)}." if shaping_numbers else ""
    if not source.separator:  # a workbook
        return (f"Read {source.encoding}, its header on row {source.header_line}: "
                + ", ".join(parts) + "." + numbers)
    within = f"the file “{source.sheet}” of a zip archive " if source.sheet else ""
    return (f"Read {within}as {source.encoding} text separated by "
            f"{SEPARATOR_NAMES[source.separator]}, its header on line {source.header_line}: "
            + ", ".join(parts) + "." + numbers)
