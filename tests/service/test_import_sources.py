"""The files people have, imported by the command line without a spreadsheet edit: a Search
Console export (no language or country: given for every row), a Keyword Planner export
(UTF-16, tabs, title lines above the header), a Semrush list (extra columns, countries by
name), a Windows-1252 file, columns named by the options, tags created on request, a check
that changes nothing, and a file whose every row is rejected said as a failure with its
reasons; on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import codecs

import pytest
from sqlalchemy import inspect

from service.imports import import_sources
from service.imports.import_sources import country_code, folded_name, guess, language_code
from tests.service.migrating import engine_of_its_own, migrate, migrated_with_rows
from tests.support.imports import Administrator
from tests.support.tool_exports import BY_NAME
from tests.support.xlsx import workbook

GSC = ("Top queries,Clicks,Impressions,CTR,Position\n"
       "laufschuhe herren,120,3400,3.5%,4.2\n\"schuhe, günstig\",80,2000,4%,6.1\n")
PLANNER = ("Keyword Stats 2026-11-01 at 10_00_00\nAll locations\n"
           "Keyword\tCurrency\tAvg. monthly searches\tCompetition\n"
           "running shoes\tEUR\t12100\tHigh\ntrail shoes\tEUR\t880\t\n")
SEMRUSH = ("Keyword,Country,Volume,KD,CPC,Intent\nnike air,United States,1000,55,1.2,c\n"
           "adidas samba,germany,500,40,0.8,c\nasics,AT,10,1,0.1,c\n")


def queries(api) -> set[tuple[str, str, str, tuple[str, ...]]]:
    names = {tag["id"]: tag["name"] for tag in api.tags(limit=1000).json()["results"]}
    found = api.queries(limit=1000).json()["results"]
    return {(q["query"], q["language"], q["country"], tuple(sorted(names[t] for t in q["tags"])))
            for q in found}


def dry_run(flask_cli, world, path, *flags: str) -> str:
    """What `import-queries … --dry-run` of `path` said, once it ended well."""
    checked = flask_cli("import-queries", world.project_id, path, *flags, "--dry-run")
    assert checked.exit_code == 0, checked.output
    return checked.output


def test_a_search_console_export_with_a_language_and_country_for_every_row(
        api, world, flask_cli, tmp_path):
    path = tmp_path / "Queries.csv"
    path.write_text(GSC, encoding="utf-8")
    refused = flask_cli("import-queries", world.project_id, path)
    assert refused.exit_code == 1
    assert "no language column: choose one, or one language for every row" in refused.output
    done = flask_cli("import-queries", world.project_id, path, "--language", "DE",
                     "--country", "Germany")
    assert done.exit_code == 0, done.output
    assert ("Read as UTF-8 text separated by commas, its header on line 1: the queries from "
            "“Top queries”, language DE for every row, country DE for every row, no tags."
            ) in done.output
    assert queries(api) == {("laufschuhe herren", "de", "DE", ()),
                            ("schuhe, günstig", "de", "DE", ())}


def test_a_keyword_planner_export_in_utf16_with_title_lines(api, world, flask_cli, tmp_path):
    path = tmp_path / "Keyword Stats.csv"
    path.write_bytes(codecs.BOM_UTF16_LE + PLANNER.encode("utf-16-le"))
    done = flask_cli("import-queries", world.project_id, path, "--language", "English",
                     "--country", "us")
    assert done.exit_code == 0, done.output
    assert "Read as UTF-16 text separated by tabs, its header on line 3" in done.output
    assert queries(api) == {("running shoes", "en", "US", ()), ("trail shoes", "en", "US", ())}


def test_a_semrush_list_with_extra_columns_and_countries_by_name(api, world, flask_cli,
                                                                 tmp_path):
    path = tmp_path / "semrush.csv"
    path.write_text(SEMRUSH, encoding="utf-8")
    done = flask_cli("import-queries", world.project_id, path, "--language", "en")
    assert done.exit_code == 0, done.output
    assert "the country from “Country”" in done.output
    assert queries(api) == {("nike air", "en", "US", ()), ("adidas samba", "en", "DE", ()),
                            ("asics", "en", "AT", ())}


def test_windows_1252_named_columns_and_tags_of_two_columns(api, world, flask_cli, tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes(("Suchbegriff;Sprache;Markt;Thema;Marke\n"
                      "straße schuhe;German;DE;sale|local;brand\ncafé;fr;France;;\n"
                      ).encode("cp1252"))
    done = flask_cli("import-queries", world.project_id, path, "--country-column", "Markt",
                     "--tags-column", "Thema", "--tags-column", "Marke",
                     "--tags-separator", "|")
    assert done.exit_code == 0, done.output
    assert "Read as Windows-1252 text separated by semicolons" in done.output
    assert queries(api) == {("straße schuhe", "de", "DE", ("brand", "local", "sale")),
                            ("café", "fr", "FR", ())}


def test_missing_tags_fail_the_import_with_reasons_or_are_created(api, world, flask_cli,
                                                                  tmp_path):
    path = tmp_path / "tags.csv"
    path.write_text("query,language,country,tags\na1,en,US,product;price\na2,en,US,product\n"
                    "a3,en,US,Product\n", encoding="utf-8")
    failed = flask_cli("import-queries", world.project_id, path)
    assert failed.exit_code == 1
    assert "0 added, 0 already present, 3 rejected." in failed.output
    assert ("Rows name tags this project does not have: product (3), price (1).") in \
        failed.output
    assert "Nothing was imported: every row was rejected." in failed.output
    checked = dry_run(flask_cli, world, path, "--create-tags")
    assert "Would create the tags product, price." in checked
    assert "Checked, nothing changed: 3 to add, 0 already present, 0 rejected." in checked
    assert queries(api) == set()
    assert "product" not in {tag["name"] for tag in api.tags(limit=100).json()["results"]}
    made = flask_cli("import-queries", world.project_id, path, "--create-tags")
    assert made.exit_code == 0, made.output
    assert "Created the tags product, price." in made.output
    tags = {tag["name"]: tag["color"] for tag in api.tags(limit=100).json()["results"]}
    assert tags["product"] != tags["price"]  # the palette's least used colours
    assert queries(api) == {("a1", "en", "US", ("price", "product")),
                            ("a2", "en", "US", ("product",)), ("a3", "en", "US", ("product",))}
    again = flask_cli("import-queries", world.project_id, path, "--dry-run")
    assert "Checked, nothing changed: 0 to add, 3 already present, 0 rejected." in again.output


def test_a_rejected_row_is_named_by_its_line_in_the_persons_file(api, world, flask_cli,
                                                                 tmp_path):
    path = tmp_path / "planner.csv"
    path.write_text("Title\nMore title\nKeyword,Language,Country\nok,en,US\n,en,US\n",
                    encoding="utf-8")
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 1
    assert "Line 5: The query is empty." in done.output


def test_guesses_and_names():
    assert guess(["Top queries", "Clicks"]).query_column == "Top queries"
    assert guess(["Mot-clé", "Langue", "Pays", "Étiquettes"]) == guess(
        ["Mot-clé", "Langue", "Pays", "Étiquettes"])
    french = guess(["Mot-clé", "Langue", "Pays", "Étiquettes"])
    assert (french.query_column, french.language_column, french.country_column,
            french.tags_columns) == ("Mot-clé", "Langue", "Pays", ("Étiquettes",))
    assert folded_name(" Suchanfrage ") == "suchanfrage"
    assert [language_code(v) for v in ("de", "EN", "German", "french", "Klingon", "Nowhere")] == [
        "de", "EN", "de", "fr", "tlh", "Nowhere"]
    assert [country_code(v) for v in ("de", "United States", "germany", "Atlantis")] == [
        "de", "US", "DE", "Atlantis"]
    # Names in the languages of the header names, and the names people use for some.
    assert [country_code(v) for v in ("Deutschland", "Allemagne", "Österreich", "Vereinigte "
                                      "Staaten", "UK", "usa", "Turkey", "Czech Republic")] == [
        "DE", "DE", "AT", "US", "GB", "US", "TR", "CZ"]
    assert [language_code(v) for v in ("Deutsch", "anglais", "español")] == ["de", "en", "es"]


def test_keyword_planner_exports_as_the_tool_writes_them(api, world, flask_cli, tmp_path):
    """UTF-16 with tabs and two title lines, its "Keyword ideas" and CSV UTF-8 variants: the
    flags name the column and give a language and country for every row."""
    path = tmp_path / "Keyword Stats 2026-11-28 at 10_00_00.csv"
    path.write_bytes(BY_NAME["keyword-planner"].content())
    wrong = flask_cli("import-queries", world.project_id, path, "--language", "en",
                      "--country-column", "Country")
    assert wrong.exit_code == 1
    assert ("The file has no column “Country” for the country; its columns are “Keyword”, "
            "“Currency”, “Avg. monthly searches”") in wrong.output
    checked = dry_run(flask_cli, world, path, "--query-column", "Keyword",
                      "--language", "English", "--country", "United States")
    assert ("Read as UTF-16 text separated by tabs, its header on line 3: the queries from "
            "“Keyword”, language en for every row, country US for every row, no tags."
            ) in checked
    assert "Checked, nothing changed: 4 to add, 0 already present, 0 rejected." in checked
    assert queries(api) == set()
    done = flask_cli("import-queries", world.project_id, path, "--query-column", "Keyword",
                     "--language", "English", "--country", "United States")
    assert done.exit_code == 0, done.output
    assert queries(api) == set(BY_NAME["keyword-planner"].rows)
    for name in ("keyword-planner-ideas", "keyword-planner-utf8"):
        shape = BY_NAME[name]
        path = tmp_path / shape.file_name
        path.write_bytes(shape.content())
        done = flask_cli("import-queries", world.project_id, path,
                         "--language", shape.every_row["language"],
                         "--country", shape.every_row["country"])
        assert done.exit_code == 0, done.output
        assert shape.read_as in done.output
    assert queries(api) >= set(BY_NAME["keyword-planner-ideas"].rows)


def test_ahrefs_exports_their_countries_and_row_numbers(api, world, flask_cli, tmp_path):
    """Ahrefs' "UTF-16 for Excel" (tabs, every field quoted, `#` first) and UTF-8: the country
    column guessed, or named; lower-case codes kept upper-case."""
    path = tmp_path / "running-shoes_keywords.csv"
    path.write_bytes(BY_NAME["ahrefs-utf16"].content())
    checked = dry_run(flask_cli, world, path, "--language", "en")
    assert ("Read as UTF-16 text separated by tabs, its header on line 1: the queries from "
            "“Keyword”, language en for every row, the country from “Country”, no tags."
            ) in checked
    assert "Checked, nothing changed: 4 to add, 0 already present, 0 rejected." in checked
    done = flask_cli("import-queries", world.project_id, path, "--query-column", "Keyword",
                     "--language", "en", "--country-column", "Country")
    assert done.exit_code == 0, done.output
    assert queries(api) == set(BY_NAME["ahrefs-utf16"].rows)
    utf8 = tmp_path / "running-shoes_keywords (utf-8).csv"
    utf8.write_bytes(BY_NAME["ahrefs-utf8"].content())
    again = flask_cli("import-queries", world.project_id, utf8, "--language", "en")
    assert again.exit_code == 0, again.output
    assert "Read as UTF-8 text separated by commas" in again.output
    assert "0 added, 4 already present, 0 rejected." in again.output
    one_country = flask_cli("import-queries", world.project_id, utf8, "--language", "de",
                            "--country", "at")
    assert "language de for every row, country at for every row" in one_country.output
    assert ("laufschuhe", "de", "AT", ()) in queries(api)


def test_workbooks_their_sheet_guessed_and_tags_created(api, world, flask_cli, tmp_path):
    """Search Console's workbook whose Queries sheet is not the first; a workbook made by hand
    with its tags joined by ", " (the separator guessed, or given) and created on request."""
    search_console = tmp_path / "Performance.xlsx"
    search_console.write_bytes(BY_NAME["search-console-xlsx-queries-later"].content())
    done = flask_cli("import-queries", world.project_id, search_console, "--language", "de",
                     "--country", "AT")
    assert done.exit_code == 0, done.output
    assert "Read the sheet “Queries” of an Excel workbook, its header on row 1" in done.output
    hand = tmp_path / "Keyword research spring.xlsx"
    hand.write_bytes(BY_NAME["hand-made-workbook"].content())
    missing = flask_cli("import-queries", world.project_id, hand, "--language", "German")
    assert missing.exit_code == 1
    assert "Rows name tags this project does not have: product (2), price (2), review (1)." \
        in missing.output
    checked = dry_run(flask_cli, world, hand, "--sheet", "Keyword research", "--language",
                      "German", "--country-column", "Country", "--tags-column", "Tags",
                      "--tags-separator", ",", "--create-tags")
    assert ("its header on row 3: the queries from “Keyword”, language de for every row, the "
            "country from “Country”, the tags from “Tags” (separated by “,”).") in checked
    assert "Would create the tags product, price, review." in checked
    made = flask_cli("import-queries", world.project_id, hand, "--language", "German",
                     "--create-tags")
    assert made.exit_code == 0, made.output
    assert "Created the tags product, price, review." in made.output
    assert queries(api) == set(BY_NAME["hand-made-workbook"].rows) | set(
        BY_NAME["search-console-xlsx-queries-later"].rows)


@pytest.mark.parametrize("content, words", [
    (b"", "The file is empty."),
    (b"PK\x03\x04rest", "cannot be opened as one"),
    (b"Clicks,Impressions\n1,2\n", "No line among the first 20 of this file names a query "
                                   "column"),
])
def test_files_that_cannot_be_read_say_why(world, flask_cli, tmp_path, content, words):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    done = flask_cli("import-queries", world.project_id, path, "--language", "en")
    assert done.exit_code == 1 and words in done.output, done.output


def test_an_excel_workbook_its_chosen_sheet_and_row_numbers(api, world, flask_cli, tmp_path):
    path = tmp_path / "keywords.xlsx"
    path.write_bytes(workbook({
        "Notes": [["Exported from a keyword tool"]],
        "Keywords": [["Keyword export"], [], ["Keyword", "Language", "Country", "Volume"],
                     ["laufschuhe", "de", "DE", 1200], ["nike 270", "en", "United States", 90.0],
                     ["", "en", "US", 5]]}))
    notes = flask_cli("import-queries", world.project_id, path, "--sheet", "Notes")
    assert notes.exit_code == 1
    assert "No line among the first 20 of this file names a query column" in notes.output
    done = flask_cli("import-queries", world.project_id, path)  # the sheet is guessed
    assert done.exit_code == 1, done.output  # its last row has no query
    assert ("Read the sheet “Keywords” of an Excel workbook, its header on row 3: the queries "
            "from “Keyword”") in done.output
    assert "Line 6: The query is empty." in done.output
    assert queries(api) == {("laufschuhe", "de", "DE", ()), ("nike 270", "en", "US", ())}
    chosen = flask_cli("import-queries", world.project_id, path, "--sheet", "Keywords")
    assert "0 added, 2 already present, 1 rejected." in chosen.output
    missing = flask_cli("import-queries", world.project_id, path, "--sheet", "Sheet9")
    assert "The workbook has no sheet “Sheet9”; its sheets are “Notes”, “Keywords”." in \
        missing.output


def test_a_workbook_that_unpacks_too_far_or_is_broken_is_refused(world, flask_cli, tmp_path,
                                                                 monkeypatch):
    path = tmp_path / "big.xlsx"
    path.write_bytes(workbook({"Sheet1": [["query", "language", "country"]] +
                                         [[f"q{n}", "en", "US"] for n in range(200)]}))
    monkeypatch.setattr(import_sources, "MAX_UNPACKED", 4096)
    refused = flask_cli("import-queries", world.project_id, path)
    assert refused.exit_code == 1
    assert "This workbook unpacks to more than 0 MiB" in refused.output
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    refused = flask_cli("import-queries", world.project_id, broken)
    assert "cannot be opened as one" in refused.output


@pytest.fixture
def administrator(service_config, tmp_path, live_service, world):
    service_config["IMPORTS_FOLDER"] = str(tmp_path / "imports")
    world.with_administrator("ann@example.com", "correct horse battery staple")
    return Administrator(live_service.url, "ann@example.com", "correct horse battery staple")


def test_the_settings_upload_takes_a_workbook_and_a_keyword_list(api, world, administrator):
    data = workbook({"Sheet1": [["Keyword", "Language", "Country", "KD"],
                                ["laufschuhe", "German", "Germany", 12]]})
    semrush = SEMRUSH.replace("Keyword,Country", "Keyword,Language,Country").replace(
        ",United States,", ",en,US,").replace(",germany,", ",en,germany,").replace(
        ",AT,", ",de,AT,")
    for content, name, read in ((data, "keywords.xlsx", "Read the sheet “Sheet1” of an Excel "
                                 "workbook, its header on row 1"),
                                (semrush, "semrush.csv", "Read as UTF-8 text separated by "
                                 "commas")):
        columns = administrator.upload(world.project_id, content, name=name)
        page = administrator.get(columns).text
        assert read in page
        started = administrator.post(columns, data={
            "csrf_token": administrator.csrf(columns), "query_column": "Keyword",
            "language_column": "Language", "country_column": "Country", "action": "import"})
        assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == {("laufschuhe", "de", "DE", ()), ("nike air", "en", "US", ()),
                            ("adidas samba", "en", "DE", ()), ("asics", "de", "AT", ())}


def test_a_search_console_export_through_its_columns_page(api, world, administrator):
    report = administrator.upload(world.project_id, GSC, name="Queries.csv")
    assert report.endswith("/columns")
    page = administrator.get(report).text
    assert "<h1>Columns of “Queries.csv”</h1>" in page
    assert '<option value="Top queries" selected>' in page  # guessed
    for label in ("Query column", "Language column", "Language for every row",
                  "Country column", "Country for every row", "Tags separator"):
        assert f">{label}</label>" in page
    assert "<legend>Tags column</legend>" in page
    assert "Create tags that do not exist yet" in page
    assert ">Check the file</button>" in page and ">Import queries</button>" in page
    form = {"csrf_token": administrator.csrf(report), "query_column": "Top queries",
            "language_column": "", "country_column": "", "tags_separator": ";"}
    refused = administrator.post(report, data={**form, "action": "check"})
    assert refused.status_code == 422
    assert "The file has no language column: choose one" in refused.text
    checked = administrator.check(report, {**form, "language": "German", "country": "de"})
    assert checked.status_code == 200, checked.text[:500]
    assert "Checked, nothing changed: 2 will be added, 0 already present, 0 rejected." in \
        checked.text
    assert "laufschuhe herren" in checked.text  # the preview
    assert queries(api) == set()
    started = administrator.post(report, data={**form, "language": "German",
                                              "country": "de", "action": "import"})
    assert started.status_code == 303
    location = started.headers["Location"]
    assert administrator.finished(location)["state"] == "finished"
    assert queries(api) == {("laufschuhe herren", "de", "DE", ()),
                            ("schuhe, günstig", "de", "DE", ())}
    # The next file of that shape starts from the choice made.
    again = administrator.upload(world.project_id, GSC.replace("herren", "damen"),
                                 name="Queries (2).csv")
    page = administrator.get(again).text
    assert 'name="language" value="German"' in page and 'name="country" value="de"' in page


def test_missing_tags_are_named_by_the_check_and_created_on_request(api, world,
                                                                    administrator):
    content = "Keyword;Language;Country;Labels\na1;en;US;product|price\na2;en;US;product\n"
    report = administrator.upload(world.project_id, content, name="labels.csv")
    form = {"csrf_token": administrator.csrf(report), "query_column": "Keyword",
            "language_column": "Language", "country_column": "Country",
            "tags_columns": "Labels", "tags_separator": "|"}
    checked = administrator.check(report, form).text
    assert "0 will be added, 0 already present, 2 rejected." in checked
    assert "Rows name tags this project does not have: product (2), price (1)." in checked
    with_tags = administrator.check(report, {**form, "create_tags": "1"}).text
    assert "2 will be added, 0 already present, 0 rejected." in with_tags
    assert "These tags would be created: product, price." in with_tags
    started = administrator.post(report, data={**form, "create_tags": "1", "action": "import"})
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == {("a1", "en", "US", ("price", "product")),
                            ("a2", "en", "US", ("product",))}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0030_keeps_a_projects_import_choice_and_takes_it_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_import_choice_") as engine:
        migrated_with_rows(engine, "0029", [("shoes", "en", "US")])
        migrate(engine, "0030")
        assert "import_choice" in {c["name"] for c in inspect(engine).get_columns("projects")}
        migrate(engine, "0029", down=True)
        assert "import_choice" not in {c["name"] for c in
                                       inspect(engine).get_columns("projects")}
        migrate(engine, "head")


def test_the_columns_page_offers_a_workbooks_sheets(api, world, administrator):
    data = workbook({"Notes": [["Keyword list of the spring"]],
                     "Keywords": [["Keyword", "Language", "Country"], ["boots", "en", "US"]]})
    columns = administrator.upload(world.project_id, data, name="spring.xlsx")
    assert columns.endswith("/columns")
    page = administrator.get(columns).text  # its first sheet names no query column
    assert ">Sheet</label>" in page and '<option value="Keywords" selected>' in page
    assert "the queries from “Keyword”" in page  # the sheet that names one, guessed
    notes = administrator.check(columns, {
        "csrf_token": administrator.csrf(columns), "sheet": "Notes"})
    assert "No line among the first 20 of this file names a query column" in notes.text
    form = {"csrf_token": administrator.csrf(columns), "sheet": "Keywords",
            "query_column": "Keyword", "language_column": "Language",
            "country_column": "Country"}
    checked = administrator.check(columns, form)
    assert "1 will be added" in checked.text and "boots" in checked.text
    started = administrator.post(columns, data={**form, "action": "import"})
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == {("boots", "en", "US", ())}
