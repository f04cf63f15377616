"""The queries view as tests that only read it see it: filters and chips, sorts, pages, the
partial and the whole page, the form without JavaScript, hostile addresses, tag colours. None
of them writes, so they share one dashboard and its signed-in client, made once for the module
(tests/support/dashboard.py's dashboard_to_read): the `shop` and `signed_in` they ask for are
those of tests/dashboard/conftest.py, made the same way. A test that writes, or needs a view
of its own (a cold cache, a time "just now"), belongs in test_queries.py."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.support.dashboard import TOTAL, dashboard_to_read, project_url, row_queries


@pytest.fixture(scope="module")
def reading(tmp_path_factory, sqlite_template, jobs_template):
    with dashboard_to_read(tmp_path_factory.mktemp("reading"), sqlite_template,
                           jobs_template) as made:
        yield made


@pytest.fixture
def shop(reading):
    return reading.world


@pytest.fixture
def signed_in(reading):
    return reading.client


def get(client, world, query="", **kwargs):
    return client.get(project_url(world, query=query), **kwargs)


def html_of(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def test_full_page_has_the_named_controls_and_rows(signed_in, shop):
    html = html_of(get(signed_in, shop))
    assert "<!doctype html>" in html
    assert '<label for="search" class="filters__label">Search queries</label>' in html
    assert 'aria-label="Select all on this page"' in html
    assert f'aria-label="Select {row_queries(html)[0]}"' in html
    assert f"1–50 of {TOTAL} queries" in html
    assert len(row_queries(html)) == 50
    assert 'id="bulk-toolbar"' in html  # where bulk editing goes
    assert "German (de)" in html and "Germany (DE)" in html


def test_filters_combine_and_show_as_removable_chips(signed_in, shop):
    html = html_of(get(signed_in, shop, "q=schuhe&lang=de&country=AT&country=DE&tag=sale"))
    assert row_queries(html) == ["laufschuhe herren"]
    assert "1–1 of 1 query" in html
    chips = re.findall(r'aria-label="Remove filter ([^"]+)"', html)
    assert chips == ["Search: “schuhe”", "Language: German (de)", "Country: Austria (AT)",
                     "Country: Germany (DE)", "Tag: sale"]
    # Removing one filter keeps all the others (and goes back to page 1).
    removal = re.search(r'href="([^"]+)"[^>]*\s+aria-label="Remove filter Country: Austria',
                        html)
    assert removal
    assert "country=AT" not in removal.group(1) and "country=DE" in removal.group(1)
    assert ">Clear all</a>" in html


def test_several_languages_at_once(signed_in, shop):
    html = html_of(get(signed_in, shop, "lang=de&lang=fr"))
    assert sorted(row_queries(html)) == ["chaussures de course", "laufschuhe damen",
                                         "laufschuhe herren"]


def test_tag_filter_by_name_with_coloured_chips(signed_in, shop):
    html = html_of(get(signed_in, shop, "tag=question&sort=query"))
    assert row_queries(html) == ["chaussures de course", "where to buy running shoes"]
    # The chip of the active filter has the tag's colour and readable text.
    assert re.search(r'class="chip chip--small" style="background-color:#2ca02c;'
                     r'color:#000000">question</span>', html)


def test_sort_by_each_column_both_ways(signed_in, shop):
    ascending = row_queries(html_of(get(signed_in, shop, "sort=query&size=100")))
    assert ascending == sorted(ascending)
    descending = row_queries(html_of(get(signed_in, shop, "sort=-query&size=100")))
    assert descending == sorted(ascending, reverse=True)
    html = html_of(get(signed_in, shop, "sort=country&lang=de"))
    assert row_queries(html) == ["laufschuhe damen", "laufschuhe herren"]  # AT before DE
    assert re.search(r'<th scope="col" class="col-country" aria-sort="ascending">', html)
    # The header link toggles the direction.
    assert re.search(r'href="[^"]*sort=-country[^"]*"', html)


def test_pages_and_page_sizes(signed_in, shop):
    html = html_of(get(signed_in, shop, "size=25&page=2"))
    assert f"26–50 of {TOTAL} queries" in html
    assert "Page 2 of 3" in html
    assert 'rel="next"' in html and 'rel="prev"' in html
    last = html_of(get(signed_in, shop, "size=25&page=3"))
    assert f"51–{TOTAL} of {TOTAL} queries" in last
    everything = html_of(get(signed_in, shop, "size=100"))
    assert len(row_queries(everything)) == TOTAL
    assert 'class="pagination"' not in everything


def test_page_past_the_end_goes_to_the_last_page(signed_in, shop):
    response = get(signed_in, shop, "page=9")
    assert response.status_code == 302
    assert response.headers["Location"] == project_url(shop, query="page=2")


def test_empty_state_offers_to_reset(signed_in, shop):
    html = html_of(get(signed_in, shop, "q=nothing-like-this&size=25"))
    assert "No queries match" in html
    reset = re.search(r'href="([^"]+)"[^>]*>Reset filters</a>', html)
    assert reset and reset.group(1).endswith("/queries?size=25")


def test_htmx_request_gets_only_the_results_and_the_canonical_url(signed_in, shop):
    response = get(signed_in, shop, "q=schuhe&size=50&sort=-updated&lang=de",
                   headers={"HX-Request": "true"})
    html = html_of(response)
    assert "<!doctype html>" not in html and 'id="filters"' not in html
    assert html.lstrip().startswith("<title>")
    assert '<section id="results"' in html
    assert 'hx-swap-oob="innerHTML"' in html  # stale notices are cleared
    assert response.headers["HX-Push-Url"] == project_url(shop, query="q=schuhe&lang=de")
    assert "HX-Request" in response.headers["Vary"]


@pytest.mark.parametrize("headers", [
    {},
    {"HX-Request": "true", "HX-History-Restore-Request": "true"},
    {"HX-History-Restore-Request": "true"},
    {"HX-Request": "true", "HX-Boosted": "true"},
])
def test_pages_loaded_directly_or_restored_from_history_are_whole(signed_in, shop, headers):
    response = get(signed_in, shop, "q=schuhe", headers=headers)
    html = html_of(response)
    assert "<!doctype html>" in html and 'id="filters"' in html
    assert "HX-Push-Url" not in response.headers
    assert "HX-Request" in response.headers["Vary"]
    assert response.headers["Cache-Control"] == "no-store"


def test_the_filter_form_works_without_javascript(signed_in, shop):
    html = html_of(get(signed_in, shop))
    form = re.search(r'<form id="filters".*?</form>', html, re.S).group(0)
    assert 'method="get"' in form
    assert 'name="q"' in form and 'name="lang"' in form and 'name="country"' in form
    assert 'name="tag"' in form and 'name="size"' in form
    assert 'type="submit"' in form
    # What a browser sends when the form is submitted as it stands (empty fields included):
    submitted = html_of(get(signed_in, shop, "q=&tag=brand&size=50&sort=-updated"))
    assert sorted(row_queries(submitted)) == ["cheap running shoes", "running shoes"]


def test_the_view_survives_a_round_trip_through_its_url(signed_in, shop):
    first = html_of(get(signed_in, shop, "q=running&lang=en&sort=query&size=25"))
    link = re.search(r'href="([^"]+)" hx-get="[^"]+"[^>]*>Query<', first)
    assert link  # the sort link carries every filter
    toggled = signed_in.get(link.group(1).replace("&amp;", "&"))
    assert row_queries(html_of(toggled)) == sorted(row_queries(first), reverse=True)


HOSTILE = [
    "page=-1", "page=0", "page=abc", "page=99999999999999999999", "page=1e9", "page=%00",
    "size=0", "size=-5", "size=1000000", "size=twelve", "sort=evil", "sort=--query",
    "sort=query;drop", "sort=", "lang=%3Cscript%3E", "lang=" + "x" * 300, "country=..%2F..",
    "tag=" + quote("<img src=x onerror=alert(1)>"), "q=" + "a" * 5000, "q=%00%01%02",
    "q=%ED%A0%80", "q=%FF%FE", "q=%27%22%3E%3Cscript%3Ealert(1)%3C/script%3E",
    "lang=de&" * 200, "tag=" + "t" * 1000, "q=\u202e\u0000", "unknown=1&page[]=2",
    "q=" + quote("%"), "q=" + quote("_"), "q=" + quote('"'), "tag=&tag=&lang=",
]


def test_hostile_query_strings_never_fail(signed_in, shop):
    """Every string of HOSTILE, as a whole page and as htmx's partial: one app for them all
    (they only read), every failing one named."""
    failing = []
    for query in HOSTILE:
        for headers in ({}, {"HX-Request": "true"}):
            response = get(signed_in, shop, query, headers=headers)
            html = response.get_data(as_text=True)
            if (response.status_code != 200 or "<script>alert" in html
                    or "<img src=x" in html):
                failing.append((query[:80], headers, response.status_code))
    assert not failing


def test_unknown_pages_are_friendly(signed_in):
    response = signed_in.get("/no/such/page")
    assert response.status_code == 404
    assert "We can&#39;t find that page." in response.get_data(as_text=True)
    htmx = signed_in.get("/no/such/page", headers={"HX-Request": "true"})
    assert htmx.status_code == 404
    assert htmx.headers["HX-Retarget"] == "#notices"


def test_row_chips_have_the_tag_colours(signed_in, shop):
    html = html_of(get(signed_in, shop, "q=cheap"))
    assert '<span class="chip chip--small" style="background-color:#ff7f0e;color:#000000">' \
           'sale</span>' in html
    assert '<span class="chip chip--small" style="background-color:#1f77b4;color:#ffffff">' \
           'brand</span>' in html

