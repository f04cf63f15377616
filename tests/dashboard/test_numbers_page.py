"""The numbers of queries on the queries page, through the embedded service over HTTP: the
project's numbers as columns (chosen by cols=, right-aligned, in the person's locale), a sort
by each header, the Numbers picker's ranges (volume_min=…), Biggest first, progress by value,
and none of it against a deployment without numbers. The tests that only read pages and files
share one dashboard made once for the module (`numbered_to_read`)."""

from __future__ import annotations

import csv
import html as htmllib
import io
import re
from pathlib import Path

import pytest
from sqlalchemy import text

from app import create_app
from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import api_of
from tests.dashboard.test_url_values import ignored
from tests.support.dashboard import (
    TOTAL,
    AuthActions,
    close_app,
    dashboard_to_read,
    project_url,
    row_queries,
)
from tests.support.numbered import add_numbered_queries

ROOT = Path(__file__).resolve().parents[2]

# Queries with numbers, beside the shop's (which know none).
NUMBERED = [
    ("blue boots", "en", "US", [], {"clicks": 1200, "impressions": 40000, "ctr": 0.03,
                                    "position": 2.5, "volume": 12345, "cpc": 1.2}),
    ("red boots", "en", "US", ["sale"], {"clicks": 300, "impressions": 2000, "ctr": 0.15,
                                         "position": 7.25, "volume": 800, "cpc": 0.4}),
    ("green boots", "en", "GB", [], {"clicks": 45, "volume": 5000}),
    ("grey boots", "en", "GB", ["brand"], {"volume": 150}),
]
CLICKS_TOTAL = 1200 + 300 + 45
UNTAGGED_CLICKS = 1200 + 45  # blue and green boots have no tag


def add_numbered(shop):
    add_numbered_queries(shop, NUMBERED)
    shop.run(lambda s: s.execute(text("UPDATE projects SET currency = 'EUR' WHERE id = :p"),
                                 {"p": shop.project_id}))
    return shop


@pytest.fixture
def numbered(shop):
    return add_numbered(shop)


@pytest.fixture(scope="module")
def numbered_to_read(tmp_path_factory, sqlite_template, jobs_template):
    """`signed_in` and `numbered` made once (tests/support/dashboard.py), for the tests that
    only read pages and files (not the counts, which a session asks at a measured pace)."""
    with dashboard_to_read(tmp_path_factory.mktemp("numbered"), sqlite_template,
                           jobs_template) as made:
        add_numbered(made.world)
        yield made


def page(client, world, query="", **headers):
    response = client.get(project_url(world, query=query), headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def counts(client, world, query=""):
    response = client.get(project_url(world, suffix="queries/counts", query=query))
    assert response.status_code == 200
    return response.get_json()


def headers(html: str) -> list[str]:
    """The number columns' headers, in order."""
    return re.findall(r'<th scope="col" class="col-\w+ col-number"[^>]*>\s*<a class="sort-link"'
                      r'[^>]*>([^<]+)<', html)


def cells(html: str, query: str) -> dict[str, str]:
    """The number cells of the row of `query`, by number."""
    row = re.search(rf'<td class="col-query">{re.escape(query)}</td>(.*?)</tr>', html, re.S)
    assert row, query
    shown = re.compile(r'<span class="muted" aria-hidden="true">[^<]*</span>|<[^>]+>')
    return {name: htmllib.unescape(shown.sub("", value)).strip()
            for name, value in re.findall(r'data-number="(\w+)"[^>]*>(.*?)</td>', row.group(1))}


# --- columns ---------------------------------------------------------------------------------


def test_the_projects_numbers_are_columns_right_aligned_in_the_persons_locale(
        numbered_to_read):
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    html = page(signed_in, numbered, "q=boots&sort=query")
    # The default: up to four the project has, volume, clicks, impressions, position first.
    assert headers(html) == ["Volume", "Clicks", "Impressions", "Position"]
    assert cells(html, "blue boots") == {"volume": "12,345", "clicks": "1,200",
                                         "impressions": "40,000", "position": "2.5"}
    assert cells(html, "grey boots")["clicks"] == "Not known"
    german = page(signed_in, numbered, "q=boots&sort=query&cols=volume,ctr,cpc",
                  **{"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    assert headers(german) == ["Volume", "CTR", "CPC"]
    assert cells(german, "blue boots") == {"volume": "12.345", "ctr": "3,0\xa0%",
                                           "cpc": "1,20\xa0€"}
    # The first locale the browser names that Babel knows; else English.
    swiss = page(signed_in, numbered, "q=boots&sort=query&cols=volume",
                 **{"Accept-Language": "xx-QQ, de-CH;q=0.8, en;q=0.5"})
    assert cells(swiss, "blue boots") == {"volume": "12’345"}
    unknown = page(signed_in, numbered, "q=boots&sort=query&cols=volume",
                   **{"Accept-Language": "xx, *;q=0.1"})
    assert cells(unknown, "blue boots") == {"volume": "12,345"}
    english = page(signed_in, numbered, "q=boots&sort=query&cols=ctr,cpc")
    assert cells(english, "red boots") == {"ctr": "15.0%", "cpc": "€0.40"}
    css = (ROOT / "static" / "app.css").read_text(encoding="utf-8")
    rule = re.search(r"\n\.queries-table \.col-number \{([^}]*)\}", css)
    assert rule and "text-align: right" in rule.group(1) \
        and "font-variant-numeric: tabular-nums" in rule.group(1)


def choices_of(html: str) -> dict[str, str]:
    """The Columns choice's links, by their text."""
    return {label: htmllib.unescape(href) for href, label in re.findall(
        r'class="columns-choice__link[^"]*" href="([^"]+)"[^>]*>([^<]+)</a>', html)}


def test_the_columns_choice_is_kept_in_the_address(numbered_to_read):
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    choices = choices_of(page(signed_in, numbered, "q=boots"))
    assert set(choices) == {"Hide Volume", "Hide Clicks", "Hide Impressions", "Hide Position",
                            "Show CTR", "Show CPC"}
    assert choices["Show CPC"].endswith("?q=boots&cols=volume,clicks,impressions,position,cpc")
    assert choices["Hide Clicks"].endswith("?q=boots&cols=volume,impressions,position")
    shown = page(signed_in, numbered, "q=boots&cols=clicks,volume")
    assert headers(shown) == ["Clicks", "Volume"]
    # Every link of the view keeps the choice; the default is no cols= at all.
    assert "sort=-clicks&amp;cols=clicks,volume" in shown
    assert "cols=" not in page(signed_in, numbered,
                               "q=boots&cols=volume,clicks,impressions,position").split(
        'class="columns-choice"')[0].split("<main")[1]
    none = page(signed_in, numbered, "q=boots&cols=none")
    assert headers(none) == [] and "data-number=" not in none
    assert choices_of(none)["Show Volume"].endswith("?q=boots&cols=volume")
    # The view form keeps the choice for the next search (an empty cols= is the default).
    assert '<input type="hidden" name="cols" value="clicks,volume" data-default="">' in shown
    assert headers(page(signed_in, numbered, "q=boots&cols=")) == [
        "Volume", "Clicks", "Impressions", "Position"]


# --- sorting ---------------------------------------------------------------------------------


def test_each_number_header_sorts_and_says_so(numbered_to_read):
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    html = page(signed_in, numbered, "q=boots")
    assert f'href="/projects/{numbered.project_id}/queries?q=boots&amp;sort=-clicks"' in html
    assert f'href="/projects/{numbered.project_id}/queries?q=boots&amp;sort=position"' in html
    biggest = page(signed_in, numbered, "q=boots&sort=-clicks")
    assert re.search(r'<th scope="col" class="col-clicks col-number" aria-sort="descending">',
                     biggest)
    # Without the number last, in either direction; ties by id.
    assert row_queries(biggest) == ["blue boots", "red boots", "green boots", "grey boots"]
    assert "Biggest clicks first" in biggest
    assert "Queries, biggest clicks first" in biggest  # the table's caption
    smallest = page(signed_in, numbered, "q=boots&sort=clicks")
    assert row_queries(smallest) == ["green boots", "red boots", "blue boots", "grey boots"]
    assert 'aria-sort="ascending"' in smallest and "Smallest clicks first" in smallest
    best = page(signed_in, numbered, "q=boots&sort=position")
    assert "Best position first" in best and row_queries(best)[:2] == ["blue boots", "red boots"]
    assert "Worst position first" in page(signed_in, numbered, "q=boots&sort=-position")
    assert "Biggest CPC first" in page(signed_in, numbered, "q=boots&sort=-cpc")


# --- the Numbers picker ---------------------------------------------------------------------


def test_the_numbers_picker_filters_by_ranges_with_counts(signed_in, numbered):
    html = page(signed_in, numbered)
    for label in ("Volume at least", "Volume at most", "Clicks at least", "CPC at most"):
        assert re.search(rf"<label [^>]*>{label}\s*<input ", html), label
    assert 'name="volume_min"' in html and 'name="difficulty_min"' not in html  # none has it
    ranged = page(signed_in, numbered, "q=boots&volume_min=500&volume_max=5,000&sort=query")
    assert row_queries(ranged) == ["green boots", "red boots"]
    chips = re.findall(r'aria-label="Remove filter ([^"]+)"', ranged)
    assert chips == ["Search: “boots”", "Volume: 500 to 5,000"]
    assert 'name="volume_min" value="500"' in ranged and 'name="volume_max" value="5000"' in ranged
    known = counts(signed_in, numbered, "q=boots&volume_min=500")["known"]
    # Queries of the view with each number known, the ranges left out.
    assert known["volume"] == "4" and known["clicks"] == "3" and known["cpc"] == "2"
    assert counts(signed_in, numbered, "q=boots&volume_min=500")["total"] == "3"
    assert chip_of(page(signed_in, numbered, "clicks_min=100")) == "Clicks: at least 100"
    assert chip_of(page(signed_in, numbered, "position_max=3")) == "Position: at most 3"


def chip_of(html: str) -> str:
    return re.findall(r'aria-label="Remove filter ([^"]+)"', html)[0]


@pytest.mark.parametrize("bound", ["10%", "10 %", "10%25", "0.1"])
def test_a_ctr_is_typed_as_the_table_writes_it(numbered_to_read, bound):
    """The table writes a CTR as "15.0%": "10%" in CTR at least is ten per cent, as 0.1 is
    (it was "not a number", and the view unfiltered)."""
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    html = page(signed_in, numbered, f"q=boots&ctr_min={bound}&sort=query")
    assert row_queries(html) == ["red boots"]
    assert chip_of(html) == "Search: “boots”"
    assert re.findall(r'aria-label="Remove filter ([^"]+)"', html)[1] == "CTR: at least 10%"
    assert not ignored(html)
    assert 'name="ctr_min" value="10%"' in html  # as the table writes it, whichever was typed


@pytest.mark.parametrize(("bound", "named"), [
    ("ctr_min=5", "CTR at least “5” (a CTR is at most 100 %: write 5% for 5 per cent)"),
    ("ctr_max=150%25", "CTR at most “150%” (a CTR is at most 100 %)"),
    ("ctr_min=10%25&ctr_max=0.05", "CTR at least 10% and at most 5% (nothing is both: give "
                                   "the smaller number first)"),
    ("volume_min=5%25", "Volume at least “5%” (not a number)"),
])
def test_a_ctr_over_100_percent_is_a_sentence(numbered_to_read, bound, named):
    """"5" in CTR at least was taken as 500 %: no query matched, with no word why."""
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    html = page(signed_in, numbered, bound)
    assert ignored(html) == f"Ignored from the address: {named}."
    assert f"of {TOTAL + len(NUMBERED)} queries" in html


@pytest.mark.parametrize(("query", "named"), [
    ("volume_min=abc", "Volume at least “abc” (not a number)"),
    ("clicks_max=1e999", "Clicks at most “1e999” (not a number)"),
    ("volume_min=500&volume_max=100", "Volume at least 500 and at most 100 (nothing is both: "
                                      "give the smaller number first)"),
    ("cols=volume,bogus", "column “bogus” (show clicks, impressions, ctr, position, volume, "
                          "cpc or difficulty)"),
])
def test_bad_ranges_are_a_sentence_and_the_rest_of_the_view_stays(numbered_to_read, query,
                                                                  named):
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    html = page(signed_in, numbered, query)
    assert ignored(html) == f"Ignored from the address: {named}."
    assert f"of {TOTAL + len(NUMBERED)} queries" in html


# --- Biggest first and progress by value ---------------------------------------------------


def test_biggest_first_and_progress_by_value(signed_in, numbered):
    progress = counts(signed_in, numbered)["progress"]
    untagged, total = progress["untagged"], progress["total"]
    share = UNTAGGED_CLICKS * 100 // CLICKS_TOTAL
    assert progress["text"] == (f"{untagged} of {total} queries untagged "
                                f"({untagged * 100 // total}\xa0%) · {share}\xa0% of clicks")
    link = re.search(r'<a class="progress__link" href="([^"]+)">Biggest first</a>',
                     progress["html"])
    assert link and link.group(1) == (f"/projects/{numbered.project_id}/queries"
                                      "?untagged=1&amp;sort=-volume")
    # The same beside a filtered view (the project's progress).
    assert "Biggest first" in counts(signed_in, numbered, "lang=de")["progress"]["html"]
    biggest = page(signed_in, numbered, "untagged=1&sort=-volume")
    assert row_queries(biggest)[:2] == ["blue boots", "green boots"]


def test_without_volume_biggest_first_sorts_by_clicks_and_without_numbers_is_absent(
        signed_in, shop):
    plain = counts(signed_in, shop)["progress"]
    assert "Biggest first" not in plain["html"] and "% of" not in plain["text"]
    add_numbered_queries(shop, [("teal boots", "en", "US", [], {"clicks": 5})])
    fresh = signed_in.get(project_url(shop, suffix="queries/counts"),
                          headers={"X-Tagdesk-Refresh": "1"}).get_json()["progress"]
    assert "?untagged=1&amp;sort=-clicks" in fresh["html"]
    assert fresh["text"].endswith(" · 100\xa0% of clicks")


# --- export ----------------------------------------------------------------------------------


def test_the_export_of_a_view_has_its_numbers(numbered_to_read):
    signed_in, numbered = numbered_to_read.client, numbered_to_read.world
    response = signed_in.get(project_url(numbered, suffix="export.csv",
                                         query="q=boots&volume_min=500"))
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == ["query", "language", "country", "tags", "updated", "clicks",
                       "impressions", "ctr", "position", "volume", "cpc", "difficulty"]
    by_query = {row[0]: row[5:] for row in rows[1:]}
    assert by_query == {"blue boots": ["1200", "40000", "0.03", "2.5", "12345", "1.2", ""],
                        "green boots": ["45", "", "", "", "5000", "", ""],
                        "red boots": ["300", "2000", "0.15", "7.25", "800", "0.4", ""]}


# --- a deployment without numbers ----------------------------------------------------------


def test_a_deployment_without_numbers_shows_none_of_it(dashboard_config, reference_only,
                                                        numbered):
    app = create_app({**dashboard_config, "API_URL": reference_only.url})
    try:
        client = app.test_client()
        AuthActions(client, numbered).sign_in()
        html = page(client, numbered, "volume_min=100&sort=-clicks&cols=volume")
        assert "data-number=" not in html and "data-number-columns" not in html
        assert 'class="columns-choice"' not in html
        assert 'name="volume_min"' not in html and "Biggest first" not in html
        assert ignored(html) == (
            "Ignored from the address: number ranges (this service keeps no numbers per "
            "query); sort “-clicks” (this service keeps no numbers per query).")
        assert f"of {TOTAL + len(NUMBERED)} queries" in html
    finally:
        close_app(app)


# --- saved views, rules and bulk edits carry the ranges -----------------------------------


def test_a_saved_view_and_a_rule_keep_the_range(signed_in, numbered, app):
    html = page(signed_in, numbered, "volume_min=1000")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', html).group(1)
    response = signed_in.post(f"/projects/{numbered.project_id}/views",
                              data={"csrf_token": token, "name": "big ones",
                                    "view": "?volume_min=1000&sort=-volume"})
    assert response.status_code == 302, response.get_data(as_text=True)[:300]
    with api_of(app, numbered) as api:
        saved = {view.name: view for view in api.list_views(numbered.project_id)}
        assert saved["big ones"].filters == QueryFilters(metric_ranges={"volume": (1000, None)})
        assert saved["big ones"].total_records == 2
    listed = page(signed_in, numbered)
    assert re.search(r'href="[^"]*\?volume_min=1000&amp;sort=-volume"><span '
                     r'class="saved-view__name">big ones<', listed)


def test_a_saved_view_keeps_its_number_columns(signed_in, numbered, app):
    html = page(signed_in, numbered, "cols=cpc,clicks")
    token = re.search(r'<meta name="csrf-token" content="([^"]+)"', html).group(1)
    for name, address in (("cpc and clicks", "?cols=cpc,clicks"), ("no numbers", "?cols=none"),
                          ("the default", "?q=boots")):
        response = signed_in.post(f"/projects/{numbered.project_id}/views",
                                  data={"csrf_token": token, "name": name, "view": address})
        assert response.status_code == 302, response.get_data(as_text=True)[:300]
    with api_of(app, numbered) as api:
        saved = {view.name: view for view in api.list_views(numbered.project_id)}
    assert saved["cpc and clicks"].columns == ("cpc", "clicks")
    assert saved["no numbers"].columns == ()
    assert saved["the default"].columns is None
    listed = page(signed_in, numbered)
    link = re.search(r'href="([^"]*)"><span class="saved-view__name">cpc and clicks<',
                     listed).group(1)
    assert "cols=cpc%2Cclicks" in link or "cols=cpc,clicks" in link, link
    opened = page(signed_in, numbered, htmllib.unescape(link).split("?", 1)[1])
    assert headers(opened) == ["CPC", "Clicks"]



# --- the cells' text -----------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["en", "de", "de_CH", "fr", "en_IN", "hi", "ar", "ja", "pt_BR",
                                 "sv", "pl"])
def test_a_cell_reads_as_babel_writes_it(tag):
    """The quick path for whole counts gives Babel's own text (or leaves it to Babel)."""
    from babel import Locale
    from babel.numbers import format_currency, format_decimal, format_percent

    from dashboard.figures import number_text

    locale = Locale.parse(tag)
    for value in (0, 7, 999, 1000, 12345, 100000, 1234567, 10 ** 12 + 7):
        assert number_text("volume", value, locale=locale) == format_decimal(value,
                                                                            locale=locale)
    for value in (1.0, 2.345, 7.25, 99.999):
        assert number_text("position", value, locale=locale) == format_decimal(
            value, "#,##0.0#", locale=locale)
        assert number_text("cpc", value, "EUR", locale=locale) == format_currency(
            value, "EUR", locale=locale)
    pattern = locale.percent_formats[None].pattern.replace("#,##0", "#,##0.0", 1)
    assert number_text("ctr", 0.0345, locale=locale) == format_percent(0.0345, pattern,
                                                                       locale=locale)
