"""A query's numbers kept from the files people import: Search Console exports in English,
German, French and Spanish (CSV, and its Excel workbook), Keyword Planner (UTF-16, ranges,
its bids' midpoint), Semrush with decimal commas, Ahrefs; by the command line and through the
settings area's Columns page over real HTTP; read back through POST /api/queries/list with
"include": ["metrics"]. Re-importing updates the numbers of queries already present (their
tags kept), unless asked not to; cells that cannot be read leave their number unknown and
are counted by the check. SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import csv
import io

import pytest

from service.store.models import Project
from tests.support.imports import Administrator
from tests.support.tool_exports import BY_NAME

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def metrics(api) -> dict[tuple[str, str], dict]:
    """Each query's numbers as the API gives them, by (query, country)."""
    found = api.queries(limit=1000, include=["metrics"])
    assert found.status_code == 200, found.text
    return {(q["query"], q["country"]): q["metrics"] for q in found.json()["results"]}


def currency(world) -> str | None:
    return world.run(lambda s: s.get(Project, world.project_id).currency)


def tags_of(api) -> dict[str, list[int]]:
    return {q["query"]: q["tags"] for q in api.queries(limit=1000).json()["results"]}


def table(rows: list[list], separator: str = ",") -> bytes:
    out = io.StringIO()
    csv.writer(out, delimiter=separator, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


# Search Console's Queries.csv as each language's interface writes it.
SEARCH_CONSOLE = {
    "en": (["Top queries", "Clicks", "Impressions", "CTR", "Position"],
           [["laufschuhe", "1,412", "11,743", "12.02%", "7.2"],
            ["trail schuhe", "0", "88", "0%", "54.1"]]),
    "de": (["Häufigste Suchanfragen", "Klicks", "Impressionen", "CTR", "Position"],
           [["laufschuhe", "1.412", "11.743", "12,02 %", "7,2"],
            ["trail schuhe", "0", "88", "0 %", "54,1"]]),
    "fr": (["Requêtes les plus fréquentes", "Clics", "Impressions", "CTR", "Position"],
           [["laufschuhe", "1\u202f412", "11\u202f743", "12,02 %", "7,2"],
            ["trail schuhe", "0", "88", "0 %", "54,1"]]),
    "es": (["Consultas principales", "Clics", "Impresiones", "CTR", "Posición"],
           [["laufschuhe", "1412", "11743", "12,02 %", "7,2"],
            ["trail schuhe", "0", "88", "0 %", "54,1"]]),
}


def test_search_console_in_four_languages_keeps_its_numbers(api, world, flask_cli, tmp_path):
    countries = {"en": "US", "de": "DE", "fr": "FR", "es": "ES"}
    for language, (header, rows) in SEARCH_CONSOLE.items():
        path = tmp_path / f"Queries-{language}.csv"
        path.write_bytes(table([header, *rows]))
        done = flask_cli("import-queries", world.project_id, path, "--language", "de",
                         "--country", countries[language])
        assert done.exit_code == 0, done.output
        assert (f"Numbers: clicks from “{header[1]}”, impressions from “{header[2]}”, CTR "
                f"from “CTR”, position from “{header[4]}”.") in done.output
    found = metrics(api)
    for country in countries.values():
        # The CTR is clicks ÷ impressions where both are known.
        assert found[("laufschuhe", country)] == {
            "clicks": 1412, "impressions": 11743, "ctr": round(1412 / 11743, 6),
            "position": 7.2}
        assert found[("trail schuhe", country)] == {
            "clicks": 0, "impressions": 88, "ctr": 0, "position": 54.1}


def test_a_ctr_column_alone_is_kept_as_the_file_gives_it(api, world, flask_cli, tmp_path):
    path = tmp_path / "ctr.csv"
    path.write_bytes(table([["Keyword", "CTR", "Position"], ["boots", "4.5%", "3"],
                            ["shoes", "", "-"]]))
    done = flask_cli("import-queries", world.project_id, path, "--language", "en",
                     "--country", "US")
    assert done.exit_code == 0, done.output
    assert metrics(api) == {("boots", "US"): {"ctr": 0.045, "position": 3},
                            ("shoes", "US"): {}}


def test_keyword_planner_volumes_ranges_and_the_bids_midpoint(api, world, flask_cli, tmp_path):
    path = tmp_path / "Keyword Stats.csv"
    path.write_bytes(BY_NAME["keyword-planner"].content())
    checked = flask_cli("import-queries", world.project_id, path, "--language", "en",
                        "--country", "US", "--dry-run")
    assert checked.exit_code == 0, checked.output
    assert ("Numbers: volume from “Avg. monthly searches”, CPC from the midpoint of “Top of "
            "page bid (low range)” and “Top of page bid (high range)”, CPC in EUR."
            ) in checked.output
    assert ("1 value of the Volume column “Avg. monthly searches” is a range (such as “1K – "
            "10K” or “<10”), kept as the range's lower bound (0 for “<10”).") in checked.output
    assert metrics(api) == {}
    done = flask_cli("import-queries", world.project_id, path, "--language", "en",
                     "--country", "US")
    assert done.exit_code == 0, done.output
    # Its Currency column says the project's CPC currency, which it had not said.
    assert "The project's CPC is in EUR, as the file says." in done.output
    assert currency(world) == "EUR"
    assert metrics(api) == {
        ("running shoes", "US"): {"volume": 49500, "cpc": 1.19},
        ("trail running shoes", "US"): {"volume": 12100, "cpc": 0.905},
        ("running shoes, women's", "US"): {"volume": 880},
        ("laufschuhe größe 46", "US"): {"volume": 10},
    }


@pytest.mark.parametrize("shape", ["semrush-organic-european", "semrush-magic-xlsx",
                                   "ahrefs-utf16", "search-console-xlsx"])
def test_workbooks_semrush_and_ahrefs_keep_their_numbers(api, world, flask_cli, tmp_path,
                                                          shape):
    expected = {
        "search-console-xlsx": {"laufschuhe herren": {
            "clicks": 412, "impressions": 11743, "ctr": round(412 / 11743, 6),
            "position": 7.2}},
        "semrush-organic-european": {"laufschuhe": {"position": 3, "volume": 74000,
                                                    "cpc": 0.89, "difficulty": 67}},
        "semrush-magic-xlsx": {"nike air max": {"volume": 135000, "cpc": 0.78,
                                                "difficulty": 92}},
        "ahrefs-utf16": {"running shoes": {"volume": 92000, "cpc": 1.4, "difficulty": 87}},
    }[shape]
    export = BY_NAME[shape]
    path = tmp_path / export.file_name
    path.write_bytes(export.content())
    flags = ["--language", "en"] + ([] if export.country_column else ["--country", "US"])
    done = flask_cli("import-queries", world.project_id, path, *flags)
    assert done.exit_code == 0, done.output
    by_query = {query: numbers for (query, _country), numbers in metrics(api).items()}
    assert {query: by_query[query] for query in expected} == expected
    assert len(by_query) == len(export.rows)


def test_unreadable_cells_reject_nothing_and_are_counted(api, world, flask_cli, tmp_path):
    rows = [["Keyword", "Volume", "KD", "Position"]]
    rows += [[f"kw {n}", "1,000" if n % 4 else "lots", "140" if n == 3 else "40",
              "0" if n == 5 else "2"] for n in range(1, 13)]
    path = tmp_path / "list.csv"
    path.write_bytes(table(rows))
    done = flask_cli("import-queries", world.project_id, path, "--language", "en",
                     "--country", "US")
    assert done.exit_code == 0, done.output
    assert "12 added, 0 already present, 0 rejected." in done.output
    assert ("3 cells of the Volume column “Volume” could not be read as a number (lines 5, "
            "9, 13): left unknown, the rows imported.") in done.output
    assert ("1 cell of the Difficulty column “KD” could not be read as a number (line 4): "
            "left unknown, the rows imported.") in done.output
    assert ("1 cell of the Position column “Position” could not be read as a number (line "
            "6): left unknown, the rows imported.") in done.output
    found = metrics(api)
    assert found[("kw 4", "US")] == {"difficulty": 40, "position": 2}
    assert found[("kw 3", "US")] == {"volume": 1000, "position": 2}
    assert found[("kw 5", "US")] == {"volume": 1000, "difficulty": 40}


def test_columns_named_on_the_command_line_or_none(api, world, flask_cli, tmp_path):
    path = tmp_path / "list.csv"
    path.write_bytes(table([["Keyword", "Searches", "Volume", "Clicks"], ["boots", "900", "5",
                                                                          "7"]]))
    done = flask_cli("import-queries", world.project_id, path, "--language", "en",
                     "--country", "US", "--volume-column", "Searches", "--clicks-column", "")
    assert done.exit_code == 0, done.output
    assert metrics(api) == {("boots", "US"): {"volume": 900}}
    missing = flask_cli("import-queries", world.project_id, path, "--language", "en",
                        "--country", "US", "--cpc-column", "Bid")
    assert missing.exit_code != 0
    assert "The file has no column “Bid” for the CPC column" in missing.output


def test_reimporting_updates_the_numbers_of_present_queries_and_keeps_their_tags(
        api, world, flask_cli, tmp_path):
    tag = world.tags["brand"]
    path = tmp_path / "first.csv"
    path.write_bytes(table([["query", "language", "country", "tags", "clicks", "volume"],
                            ["boots", "en", "US", "brand", "10", "100"],
                            ["shoes", "en", "US", "", "", "200"]]))
    assert flask_cli("import-queries", world.project_id, path).exit_code == 0
    again = tmp_path / "again.csv"
    again.write_bytes(table([["Keyword", "Clicks", "Position"],
                             ["boots", "12", "3.5"], ["shoes", "0", ""], ["socks", "1", "9"]]))
    flags = ["--language", "en", "--country", "US"]
    checked = flask_cli("import-queries", world.project_id, again, *flags, "--dry-run")
    assert ("Checked, nothing changed: 1 to add, 2 already present (2 with their numbers to "
            "update), 0 rejected.") in checked.output
    kept = flask_cli("import-queries", world.project_id, again, *flags, "--keep-numbers",
                     "--dry-run")
    assert "1 to add, 2 already present, 0 rejected." in kept.output
    done = flask_cli("import-queries", world.project_id, again, *flags)
    assert done.exit_code == 0, done.output
    assert "1 added, 2 already present (2 with their numbers updated), 0 rejected." \
        in done.output
    # The numbers the file names are replaced; the others stay; the tags too.
    assert metrics(api) == {("boots", "US"): {"clicks": 12, "position": 3.5, "volume": 100},
                            ("shoes", "US"): {"clicks": 0, "volume": 200},
                            ("socks", "US"): {"clicks": 1, "position": 9}}
    assert tags_of(api)["boots"] == [tag]
    # Imported again, nothing changes: no present query would.
    checked = flask_cli("import-queries", world.project_id, again, *flags, "--dry-run")
    assert "0 to add, 3 already present, 0 rejected." in checked.output
    # --keep-numbers leaves present queries' numbers alone.
    later = tmp_path / "later.csv"
    later.write_bytes(table([["Keyword", "Clicks"], ["boots", "99"]]))
    done = flask_cli("import-queries", world.project_id, later, *flags, "--keep-numbers")
    assert done.exit_code == 0, done.output
    assert metrics(api)[("boots", "US")]["clicks"] == 12


# --- the Columns page ---------------------------------------------------------------------------


def columns_page(administrator, world, content: bytes, name: str) -> tuple[str, dict]:
    columns = administrator.upload(world.project_id, content, name=name)
    return columns, {"csrf_token": administrator.csrf(columns)}


def test_the_columns_page_guesses_offers_and_previews_each_number(administrator, world):
    header, rows = SEARCH_CONSOLE["de"]
    columns, _ = columns_page(administrator, world, table([header, *rows]), "Queries.csv")
    page = administrator.get(columns).text
    for label, chosen in (("Clicks", "Klicks"), ("Impressions", "Impressionen"),
                          ("CTR", "CTR"), ("Position", "Position"), ("Volume", None),
                          ("CPC", None), ("Difficulty", None)):
        name = label.lower()
        assert f'<label for="{name}-column">{label} column</label>' in page
        select = page.split(f'name="{name}_column">', 1)[1].split("</select>", 1)[0]
        if chosen:
            assert f'<option value="{chosen}" selected>{chosen}</option>' in select
        else:
            assert '<option value="" selected>None</option>' in select
    assert ('<input type="checkbox" id="update-numbers" name="update_numbers" value="1" '
            'checked>') in page
    assert "<label for=\"update-numbers\">Update the numbers of queries already present" \
        "</label>" in page
    # The preview shows them as they will be stored.
    assert '<th scope="col" class="col-count">Clicks</th>' in page
    assert '<th scope="col" class="col-count">Position</th>' in page
    assert ">Volume</th>" not in page
    assert '<td class="col-count">1,412</td><td class="col-count">11,743</td>' \
           '<td class="col-count">12.02%</td><td class="col-count">7.2</td>' in page


def test_a_check_counts_unreadable_cells_ranges_and_present_queries_to_update(
        administrator, world, api, flask_cli, tmp_path):
    path = tmp_path / "first.csv"
    path.write_bytes(table([["query", "language", "country", "volume"],
                            ["kw 1", "en", "US", "10"], ["kw 2", "en", "US", "20"]]))
    assert flask_cli("import-queries", world.project_id, path).exit_code == 0
    rows = [["Keyword", "Avg. monthly searches", "Competition"],
            ["kw 1", "10", "Low"], ["kw 2", "1K – 10K", "High"], ["kw 3", "<10", "Low"],
            ["kw 4", "many", "Low"], ["kw 5", "", ""]]
    columns, form = columns_page(administrator, world, table(rows), "planner.csv")
    form.update(query_column="Keyword", language="en", country="US")
    page = administrator.check(columns, form).text
    assert ("Checked, nothing changed: 3 will be added, 2 already present (1 with its numbers "
            "to update), 0 rejected.") in page
    assert ("2 values of the Volume column “Avg. monthly searches” are ranges (such as “1K – "
            "10K” or “&lt;10”), kept as the range&#39;s lower bound (0 for “&lt;10”).") in page
    assert ("1 cell of the Volume column “Avg. monthly searches” could not be read as a "
            "number (line 5): left unknown, the rows imported.") in page
    # Unticked, present queries keep their numbers: the check says none would change.
    page = administrator.check(columns, {**form, "update_numbers_offered": "1"}).text
    assert "3 will be added, 2 already present, 0 rejected." in page
    assert '<input type="checkbox" id="update-numbers" name="update_numbers" value="1">' in page
    # Imported so, kw 2 keeps its volume; the new queries have theirs.
    started = administrator.post(columns, data={**form, "update_numbers_offered": "1",
                                                "action": "import"})
    assert administrator.finished(started.headers["Location"])["added"] == 3
    found = metrics(api)
    assert found[("kw 2", "US")] == {"volume": 20}
    assert found[("kw 3", "US")] == {"volume": 0}
    assert found[("kw 4", "US")] == {} and found[("kw 5", "US")] == {}


def test_a_number_chosen_or_set_to_none_on_the_columns_page_is_imported_so(
        administrator, world, api, flask_cli, tmp_path):
    content = BY_NAME["semrush-magic-xlsx"].content()
    columns, form = columns_page(administrator, world, content, "magic.xlsx")
    form.update(query_column="Keyword", language="en", country="US",
                volume_column="Number of Results", difficulty_column="",
                update_numbers_offered="1", update_numbers="1")
    started = administrator.post(columns, data={**form, "action": "import"})
    assert administrator.finished(started.headers["Location"])["added"] == 3
    assert metrics(api)[("nike air max", "US")] == {"volume": 410000000, "cpc": 0.78}
    # Imported again with its Volume column, the report says the numbers updated.
    again, _ = columns_page(administrator, world, content, "magic-again.xlsx")
    started = administrator.post(again, data={**form, "volume_column": "Volume",
                                              "action": "import"})
    report = started.headers["Location"]
    assert administrator.finished(report)["present"] == 3
    assert "3 queries already present had their numbers updated." in \
        administrator.get(report).text
    assert metrics(api)[("nike air max", "US")] == {"volume": 135000, "cpc": 0.78}
    assert currency(world) == "USD"  # its column "CPC (USD)"
    # Said once, the currency stays: a Keyword Planner file in euros does not change it.
    planner = tmp_path / "planner.csv"
    planner.write_bytes(BY_NAME["keyword-planner"].content())
    done = flask_cli("import-queries", world.project_id, planner, "--language", "en",
                     "--country", "US")
    assert done.exit_code == 0 and "CPC is in" not in done.output, done.output
    assert currency(world) == "USD"
    # The page remembers the choice for the next file of this shape.
    again, _ = columns_page(administrator, world, content, "magic-2.xlsx")
    page = administrator.get(again).text
    select = page.split('name="difficulty_column">', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected>None</option>' in select
    select = page.split('name="volume_column">', 1)[1].split("</select>", 1)[0]
    assert '<option value="Volume" selected>' in select
