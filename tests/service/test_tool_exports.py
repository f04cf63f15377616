"""The files keyword tools export, as they write them (tests/support/tool_exports.py): each is
read, its columns guessed (the query column; the country column where it has one), its first
rows previewed as they will be imported, and imported through the settings area's columns
page with nothing but the choices the page offers — its fields as the page fills them, and a
language or country for every row where the file has none. On SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import codecs
import io
import re
import zipfile
from html.parser import HTMLParser

import pytest

from service.imports import import_sources
from service.imports.import_sources import Choice, Shaping
from tests.service.test_import_sources import queries
from tests.support.imports import Administrator
from tests.support.tool_exports import BY_NAME, EXPORTS, search_console_xlsx, styled_workbook

SHAPES = [pytest.param(shape, id=shape.name) for shape in EXPORTS]


def every_row(shape) -> Choice:
    return Choice(language=shape.every_row.get("language"),
                  country=shape.every_row.get("country"))


@pytest.mark.parametrize("shape", SHAPES)
def test_each_export_is_read_guessed_and_previewed(shape):
    shaping = Shaping(io.BytesIO(shape.content()), every_row(shape))
    assert shaping.choice.query_column == shape.query_column
    assert shaping.choice.country_column == shape.country_column
    assert shaping.choice.language_column is None
    assert shaping.choice.tags_columns == shape.tags_columns
    assert shaping.problems == []
    assert shaping.source.header_line == shape.header_line
    assert import_sources.describe(shaping.choice, shaping.source).startswith(shape.read_as)
    preview = shaping.first(5)
    expected = {(q, lang, country, tags) for q, lang, country, tags in shape.rows}
    # The preview shows the rows as the import keeps them: codes in their case, tags split.
    assert {(q, lang, country, tuple(sorted(filter(None, tags.split(";")))))
            for q, lang, country, tags in preview} == expected


def test_the_sheet_that_names_a_query_column_is_guessed():
    """Search Console's workbook exported from another tab: its Queries sheet is not the
    first, and its Filters sheet has a row "Query | +schuhe" that is not a header."""
    data = search_console_xlsx(queries_first=False)
    assert import_sources.sheet_names(io.BytesIO(data))[:2] == ["Dates", "Filters"]
    source = import_sources.read_source(io.BytesIO(data))
    assert source.sheet == "Queries" and source.header[0] == "Top queries"
    shaping = Shaping(io.BytesIO(data), Choice(language="de", country="DE"))
    assert shaping.choice.sheet == "Queries"
    # A sheet chosen is read as chosen, even one that names no query column.
    chosen = import_sources.read_source(io.BytesIO(data), Choice(sheet="Countries",
                                                                 query_column="Country"))
    assert chosen.sheet == "Countries" and chosen.header[0] == "Country"


def test_a_hand_made_workbook_tags_separated_by_commas_are_guessed():
    shaping = Shaping(io.BytesIO(BY_NAME["hand-made-workbook"].content()),
                      Choice(language="de"))
    assert shaping.choice.tags_separator == ","
    # One that is chosen stays chosen.
    chosen = Shaping(io.BytesIO(BY_NAME["hand-made-workbook"].content()),
                     Choice(language="de", tags_separator="|"))
    assert chosen.choice.tags_separator == "|"
    assert chosen.first(1)[0][3] == "product, price"


def test_utf16_without_a_byte_order_mark_is_read():
    """Some tools (and some re-saves) write UTF-16 with no byte order mark."""
    planner = BY_NAME["keyword-planner"].content()
    ahrefs = BY_NAME["ahrefs-utf16"].content()
    for data in (planner[len(codecs.BOM_UTF16_LE):], ahrefs[len(codecs.BOM_UTF16_LE):]):
        source = import_sources.read_source(io.BytesIO(data))
        assert source.encoding == "UTF-16" and source.separator == "\t"
    big_endian = ahrefs[2:].decode("utf-16-le").encode("utf-16-be")
    assert import_sources.read_source(io.BytesIO(big_endian)).header[:2] == ["#", "Keyword"]


# --- through the settings area's columns page -------------------------------------------------


class FormDefaults(HTMLParser):
    """The values a browser would post from the columns page's form as it is filled: each
    select's selected option (else its first), each text field's value, the checked boxes."""

    def __init__(self):
        super().__init__()
        self.values: list[tuple[str, str]] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "select":
            self._select, self._options = attrs["name"], []
        elif tag == "option" and self._select:
            self._options.append((attrs.get("value", ""), "selected" in attrs))
        elif tag == "input" and attrs.get("name") and attrs.get("type") in ("text", "hidden"):
            self.values.append((attrs["name"], attrs.get("value") or ""))
        elif tag == "input" and attrs.get("type") == "checkbox" and "checked" in attrs:
            self.values.append((attrs["name"], attrs.get("value", "on")))

    def handle_endtag(self, tag):
        if tag == "select" and self._select:
            chosen = [value for value, selected in self._options if selected]
            self.values.append((self._select, (chosen or [v for v, _ in self._options]
                                               or [""])[0]))
            self._select = None


def form_of(page: str) -> dict[str, list[str]]:
    parser = FormDefaults()
    parser.feed(page)
    found: dict[str, list[str]] = {}
    for name, value in parser.values:
        found.setdefault(name, []).append(value)
    return found


@pytest.fixture
def administrator(service_config, tmp_path, live_service, world):
    service_config["IMPORTS_FOLDER"] = str(tmp_path / "imports")
    world.with_administrator("ann@example.com", "correct horse battery staple")
    return Administrator(live_service.url, "ann@example.com", "correct horse battery staple")


@pytest.mark.parametrize("shape", SHAPES)
def test_each_export_imports_through_its_columns_page_with_only_choices(
        shape, api, world, administrator):
    columns = administrator.upload(world.project_id, shape.content(), name=shape.file_name)
    assert columns.endswith("/columns")
    page = administrator.get(columns).text
    # Only columns with a name are offered (a note beside a table makes nameless ones).
    assert not re.search(r'<option value=""></option>|<label for="[^"]*"></label>', page)
    form = form_of(page)
    assert form["query_column"] == [shape.query_column]
    assert form["country_column"] == [shape.country_column or ""]
    assert form.get("tags_columns", []) == list(shape.tags_columns)
    form.update({name: [value] for name, value in shape.every_row.items()})
    form["create_tags"] = ["1"]
    checked = administrator.check(columns, form)
    assert checked.status_code == 200, checked.text[:3000]
    assert (f"Checked, nothing changed: {len(shape.rows)} will be added, 0 already present, "
            "0 rejected.") in checked.text
    assert shape.read_as in checked.text
    assert queries(api) == set()
    started = administrator.post(columns, data={**form, "action": "import"})
    assert started.status_code == 303, started.text[:3000]
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == set(shape.rows)


def test_a_file_with_a_country_column_uses_it_after_one_given_for_every_row(
        api, world, administrator):
    """The columns page starts from the project's last choice, but a column this file has
    wins over a value given for every row to a file that had none."""
    for name, country, language in (("semrush-magic", "", ""), ("ahrefs-utf16", "", "en"),
                                    ("semrush-organic", "", "en")):
        shape = BY_NAME[name]
        columns = administrator.upload(world.project_id, shape.content(),
                                       name=shape.file_name)
        form = form_of(administrator.get(columns).text)
        assert form["country_column"] == [shape.country_column or ""]
        # The last choice, but for a column the file has (no country for every row then)
        assert (form["country"], form["language"]) == ([country], [language])
        form.update({name: [value] for name, value in shape.every_row.items()})
        started = administrator.post(columns, data={**form, "action": "import"})
        assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert ("laufschuhe", "en", "DE", ()) in queries(api)


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_a_file_whose_query_column_has_a_name_not_known_offers_its_columns(
        kind, api, world, administrator):
    """No row names a query column (a tool in another language): the widest of the first
    rows is offered as the header, its query column to choose, rather than a failed import."""
    rows = [["Export vom 28.11.2026"], ["Begriff", "Suchvolumen", "Land"],
            ["laufschuhe", "1000", "Deutschland"], ["turnschuhe", "90", "AT"]]
    if kind == "csv":
        content = "\r\n".join(";".join(row) for row in rows).encode("utf-8")
    else:
        content = styled_workbook({"Tabelle1": rows})
    columns = administrator.upload(world.project_id, content, name=f"begriffe.{kind}")
    assert columns.endswith("/columns")
    page = administrator.get(columns).text
    assert "Choose the column that holds the queries." in page
    assert 'role="alert"' not in page
    form = form_of(page)
    assert form["query_column"] == [""]  # "Choose a column"
    refused = administrator.post(columns, data={**form, "action": "check"})
    assert refused.status_code == 422
    assert "Choose the column that holds the queries." in refused.text
    form.update(query_column=["Begriff"], language=["de"], country_column=["Land"])
    checked = administrator.check(columns, form)
    assert "2 will be added, 0 already present, 0 rejected." in checked.text
    started = administrator.post(columns, data={**form, "action": "import"})
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == {("laufschuhe", "de", "DE", ()), ("turnschuhe", "de", "AT", ())}
    with pytest.raises(import_sources.NotCsv, match="No line among the first 20"):
        import_sources.read_source(io.BytesIO(content))  # elsewhere the column is named


def test_a_zip_archive_of_csv_files_is_read_as_a_workbook_of_them(world, flask_cli, tmp_path):
    data = BY_NAME["search-console-zip"].content()
    assert import_sources.sheet_names(io.BytesIO(data)) == [
        "Dates.csv", "Filters.csv", "Pages.csv", "Queries.csv", "Countries.csv"]
    pages = import_sources.read_source(io.BytesIO(data), Choice(sheet="Pages.csv"),
                                       any_header=True)
    assert pages.sheet == "Pages.csv" and pages.header[0] == "Top pages"
    with pytest.raises(import_sources.NotCsv, match="The archive has no file “Sheet1”; its "
                       "files are “Dates.csv”, “Filters.csv”"):
        import_sources.read_source(io.BytesIO(data), Choice(sheet="Sheet1"))
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as packed:
        packed.writestr("notes.md", "nothing here")
    with pytest.raises(import_sources.NotCsv, match="This zip archive holds no CSV file"):
        import_sources.read_source(empty)
    path = tmp_path / "Performance.zip"
    path.write_bytes(data)
    done = flask_cli("import-queries", world.project_id, path, "--sheet", "Queries.csv",
                     "--language", "de", "--country", "CH", "--dry-run")
    assert done.exit_code == 0, done.output
    assert "Checked, nothing changed: 5 to add, 0 already present, 0 rejected." in done.output


@pytest.mark.parametrize("kind", ["csv", "xlsx"])
def test_a_title_that_names_a_query_column_alone_is_passed_over(kind):
    """A workbook made by hand titled "Keywords" above its header: the header is the row of
    two cells or more that names a query column; a file of one column keeps its own."""
    rows = [["Keywords"], [], ["Keyword", "Country", "Tags"], ["boots", "Germany", "a, b"]]
    if kind == "csv":
        content = "\n".join(",".join(row) for row in rows).replace("a, b", '"a, b"').encode()
    else:
        content = styled_workbook({"Sheet1": rows})
    shaping = Shaping(io.BytesIO(content), Choice(language="de"))
    assert shaping.source.header_line == 3 and shaping.source.header[0] == "Keyword"
    assert shaping.first(5) == [["boots", "de", "DE", "a;b"]]
    alone = Shaping(io.BytesIO(b"Keyword\nboots\nshoes\n"), Choice(language="de", country="AT"))
    assert alone.source.header_line == 1 and alone.first(5) == [
        ["boots", "de", "AT", ""], ["shoes", "de", "AT", ""]]
