"""The language of each query of a file with no language column, detected among the languages
ticked (service/imports/language_detection.py): hand-labelled short queries told right, a query that
cannot be told falling back to the language for every row, and the counts said by the
command line's check and the settings' Check of a Search Console export, its queries stored
each with its language; on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import pytest

from service.imports import language_detection
from service.imports.language_detection import Detection
from tests.service.test_import_sources import queries
from tests.service.test_tool_exports import administrator, form_of  # noqa: F401 — a fixture

# Hand-labelled, told with confidence among the six languages.
TOLD = {
    "de": ["laufschuhe herren günstig", "waschmaschine läuft nicht ab",
           "rezept apfelkuchen einfach"],
    "fr": ["meilleur aspirateur sans fil", "location voiture pas cher",
           "chaussures de randonnée femme"],
    "en": ["how to boil an egg", "cheap flights to london", "washing machine reviews"],
    "es": ["zapatillas trail mujer", "vuelos baratos a madrid", "receta tortilla de patatas"],
    "it": ["scarpe da corsa uomo", "voli economici per roma", "ricetta tiramisù classico"],
    "nl": ["goedkope vluchten naar barcelona", "zelf brood bakken",
           "verduisterende gordijnen slaapkamer"],
}
AMBIGUOUS = "nike air max 90"  # a brand and a number: no language to tell

# Search Console's Queries.csv, French and German queries (and one of no language).
SEARCH_CONSOLE = ("Top queries,Clicks,Impressions,CTR,Position\n"
                  "laufschuhe herren günstig,120,3400,3.5%,4.2\n"
                  "meilleur aspirateur sans fil,80,2000,4%,6.1\n"
                  "waschmaschine läuft nicht ab,10,300,3.3%,8\n"
                  "location voiture pas cher,9,250,3.6%,9.5\n"
                  f"{AMBIGUOUS},5,90,5.5%,12\n")
STORED = {("laufschuhe herren günstig", "de", "FR", ()),
          ("meilleur aspirateur sans fil", "fr", "FR", ()),
          ("waschmaschine läuft nicht ab", "de", "FR", ()),
          ("location voiture pas cher", "fr", "FR", ()),
          (AMBIGUOUS, "de", "FR", ())}
COUNTED = "Language detected for 4 queries (de 2, fr 2); 1 could not be told and has de."


def test_short_queries_are_told_in_each_language():
    texts = [text for language in TOLD for text in TOLD[language]]
    expected = [language for language in TOLD for _text in TOLD[language]]
    assert language_detection.detect(texts, sorted(TOLD)) == expected


def test_among_two_languages_a_brand_name_is_not_told():
    """Among two languages a probability says less: a brand name and a number weigh 0.81
    French or 0.94 German among German and French, and are not told."""
    assert language_detection.detect(
        ["iphone 15", "samsung galaxy s24", "location voiture pas cher",
         "waschmaschine läuft nicht ab"], ["de", "fr"]) == [None, None, "fr", "de"]
    assert language_detection.least_probability(2) > 0.95
    assert language_detection.least_probability(6) == language_detection.MIN_CONFIDENCE


def test_a_query_with_no_language_falls_back_and_is_counted():
    detection = Detection(["de", "fr"], "de")
    rows = [["meilleur aspirateur sans fil", "de", "FR", ""], None,
            [AMBIGUOUS, "de", "FR", ""], ["laufschuhe herren günstig", "de", "FR", ""],
            ["x" * 2000, "", "", ""]]  # too long: the import rejects it, not looked at
    relabelled = list(detection.relabel(rows, batch=2))
    assert [row and row[1] for row in relabelled] == ["fr", None, "de", "de", ""]
    assert detection.tally.detected == {"fr": 1, "de": 1}
    assert detection.tally.fell_back == 1
    assert detection.tally.sentence() == (
        "Language detected for 2 queries (fr 1, de 1); 1 could not be told and has de.")


def test_languages_the_detector_does_not_know_or_one_alone_are_refused():
    assert language_detection.problems(["de", "fr"]) == []
    assert "cannot be detected as xx" in language_detection.problems(["de", "xx"])[0]
    assert language_detection.problems(["de"]) == [
        "Choose two languages or more to detect the language of each query among."]
    assert language_detection.default_codes(["de", "EN", "de-at"], "fr") == ("de", "en", "fr")


def test_the_command_line_detects_each_querys_language(api, world, flask_cli, tmp_path):
    path = tmp_path / "Queries.csv"
    path.write_text(SEARCH_CONSOLE, encoding="utf-8")
    flags = ("--language", "de", "--country", "FR", "--detect-language",
             "--detect-languages", "de,fr")
    # --detect-languages alone implies --detect-language.
    checked = flask_cli("import-queries", world.project_id, path, *flags[:4], *flags[5:],
                        "--dry-run")
    assert checked.exit_code == 0, checked.output
    assert "the language of each query detected among de, fr (de where it cannot be told)" \
        in checked.output
    assert COUNTED in checked.output
    assert "5 to add, 0 already present, 0 rejected" in checked.output
    done = flask_cli("import-queries", world.project_id, path, *flags)
    assert done.exit_code == 0, done.output
    assert queries(api) == STORED
    refused = flask_cli("import-queries", world.project_id, path, "--language", "de",
                        "--country", "FR", "--detect-language", "--detect-languages", "de")
    assert refused.exit_code == 1
    assert "Choose two languages or more" in refused.output


def test_the_command_line_detects_among_the_projects_languages_by_default(
        api, world, flask_cli, tmp_path):
    """None given: the project's languages so far (and the one for every row)."""
    path = tmp_path / "Queries.csv"
    path.write_text("Top queries,Clicks\nmeilleur aspirateur sans fil,3\n"
                    "how to boil an egg,2\n", encoding="utf-8")
    world.add_queries([("cheap flights to london", "en", "GB", [])])
    done = flask_cli("import-queries", world.project_id, path, "--language", "fr",
                     "--country", "FR", "--detect-language")
    assert done.exit_code == 0, done.output
    assert "detected among en, fr" in done.output
    assert {("meilleur aspirateur sans fil", "fr", "FR", ()),
            ("how to boil an egg", "en", "FR", ())} <= queries(api)


def test_the_settings_check_counts_and_the_import_stores_each_language(
        api, world, administrator):  # noqa: F811
    columns = administrator.upload(world.project_id, SEARCH_CONSOLE.encode(),
                                   name="Queries.csv")
    page = administrator.get(columns).text
    assert "Detect the language of each query" in page
    form = form_of(page)
    form.update(language=["de"], country=["FR"], detect_language=["1"],
                detect_languages=["de", "fr"])
    checked = administrator.check(columns, form)
    assert checked.status_code == 200, checked.text[:3000]
    assert "5 will be added, 0 already present, 0 rejected." in checked.text
    assert COUNTED in checked.text
    assert queries(api) == set()
    started = administrator.post(columns, data={**form, "action": "import"})
    assert started.status_code == 303, started.text[:3000]
    assert administrator.finished(started.headers["Location"])["state"] == "finished"
    assert queries(api) == STORED
    # Remembered for the project's next file, its languages ticked.
    again = administrator.upload(world.project_id, SEARCH_CONSOLE.encode(), name="Q2.csv")
    remembered = form_of(administrator.get(again).text)
    assert remembered["detect_language"] == ["1"]
    assert sorted(remembered["detect_languages"]) == ["de", "fr"]


def test_a_language_column_wins_over_detection(administrator, world):  # noqa: F811
    columns = administrator.upload(
        world.project_id, b"Keyword,Language,Country\nlaufschuhe herren,fr,DE\n",
        name="k.csv")
    form = form_of(administrator.get(columns).text)
    assert form["language_column"] == ["Language"]
    form.update(detect_language=["1"], detect_languages=["de", "fr"])
    checked = administrator.check(columns, form)
    assert "1 will be added" in checked.text
    assert "Language detected" not in checked.text


@pytest.fixture(autouse=True)
def _languages_known():
    assert {"de", "fr", "en", "es", "it", "nl"} <= set(language_detection.detectable())
