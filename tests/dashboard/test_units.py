"""The small pure parts: URL state, chip colours, human names, relative times, safe `next`."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import MultiDict

from dashboard import filter_fields, names
from dashboard.chips import AA_NORMAL_TEXT, NEUTRAL, chip_style, contrast_ratio
from dashboard.rows import chip_html, exact_time, relative_time
from dashboard.viewstate import PAGE_SIZES, SORT_COLUMNS, QueryView
from queryapi import QueryFilters

# --- the URL is the view -------------------------------------------------------------------------

codes = st.from_regex(r"[a-z]{2}", fullmatch=True)
countries = st.from_regex(r"[A-Z]{2}", fullmatch=True)
printable = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\x85"),
                    max_size=40).map(str.strip)
views = st.builds(
    QueryView,
    filters=st.builds(
        QueryFilters,
        text=printable,
        languages=st.lists(codes, unique=True, max_size=4).map(tuple),
        countries=st.lists(countries, unique=True, max_size=4).map(tuple),
        tag_names=st.lists(printable.filter(bool), unique_by=str.casefold,
                           max_size=4).map(tuple)),
    sort=st.sampled_from([p + c for c in SORT_COLUMNS for p in ("", "-")]),
    page=st.integers(1, 1_000_000),
    size=st.sampled_from(PAGE_SIZES),
)


@given(views)
@settings(max_examples=200, deadline=None)
def test_a_view_survives_its_own_url(view):
    assert QueryView.from_args(MultiDict(view.params())) == view


@given(st.lists(st.tuples(st.sampled_from(["q", "lang", "country", "tag", "sort", "page", "size",
                                           "x"]), st.text(max_size=60)), max_size=12))
@settings(max_examples=300, deadline=None)
def test_any_query_string_gives_a_valid_view(pairs):
    view = QueryView.from_args(MultiDict(pairs))
    assert 1 <= view.page <= 1_000_000 and view.size in PAGE_SIZES
    assert view.sort.lstrip("-") in SORT_COLUMNS
    assert all(len(code) <= 35 for code in view.filters.languages + view.filters.countries)
    assert QueryView.from_args(MultiDict(view.params())) == view


def test_every_filter_field_survives_the_address_and_names_its_own_parameters():
    chosen = QueryFilters(text="shoe", languages=("de",), countries=("AT",),
                          tag_names=("sale", "brand"), tag_match="all",
                          exclude_tag_names=("local",))
    for filters in (chosen, QueryFilters(untagged=True, exclude_tag_names=("local",))):
        view = QueryView(filters, sort="query", size=25)
        assert QueryView.from_args(MultiDict(view.params())) == view
    names = [name for field in filter_fields.FIELDS for name in field.address]
    assert len(names) == len(set(names)) and not {"sort", "page", "size"} & set(names)
    # Every field of the API's filter is one dashboard field's.
    bodies = [name for field in filter_fields.FIELDS for name in field.body]
    assert sorted(bodies) == sorted(f.name for f in dataclasses.fields(QueryFilters))
    # Each chip's link is the view without that one filter.
    view = QueryView(chosen)
    links = {chip.kind: chip.remove_qs for chip in view.chips({})}
    assert links["Tags"] == "?q=shoe&lang=de&country=AT&nottag=local"
    assert links["Not tag"] == "?q=shoe&lang=de&country=AT&tag=sale&tag=brand&tagmatch=all"


def test_changing_a_filter_goes_back_to_page_one():
    view = QueryView(QueryFilters(text="shoe"), page=4, size=25)
    assert view.filtered(QueryFilters(text="boot")).page == 1
    assert view.at_page(5).page == 5
    (chip,) = view.chips({})
    assert chip.remove_qs == "?size=25"
    assert view.cleared() == QueryView(size=25)


def test_column_clicks_toggle_the_direction():
    view = QueryView()
    assert view.sorted_by("query").sort == "query"
    assert view.sorted_by("query").sorted_by("query").sort == "-query"
    assert view.sorted_by("updated").sort == "updated"  # default is newest first
    assert QueryView(sort="query").sorted_by("updated").sort == "-updated"
    assert view.api_sort() == [("updatedAt", "DESC")]


# --- chips ---------------------------------------------------------------------------------------


@given(st.from_regex(r"#[0-9a-fA-F]{6}", fullmatch=True))
@settings(max_examples=500, deadline=None)
def test_every_rrggbb_colour_gets_text_with_aa_contrast(color):
    style = chip_style(color)
    assert style.background == color.lower()
    assert contrast_ratio(style.background, style.text) >= AA_NORMAL_TEXT


@pytest.mark.parametrize("color", [
    None, "", "red", "#fff", "#12345", "#1234567", "#gggggg", " #123456", "#123456 ",
    "#123456;x", "rgb(1,2,3)", "#123456\n", 123456, ["#123456"], {"c": 1},
])
def test_anything_else_is_a_neutral_chip(color):
    assert chip_style(color) is NEUTRAL
    html = chip_html("brand", color)
    assert "style=" not in html and "chip--neutral" in html


def test_chip_names_are_escaped():
    html = chip_html('<b>"x"</b>', "#000000", href='/q?tag="x"')
    assert "<b>" not in html and "&lt;b&gt;" in html and 'href="/q?tag=&#34;x&#34;"' in html


def test_contrast_ratio_matches_wcag_examples():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("code, label", [
    ("de", "German (de)"), ("pt", "Portuguese (pt)"), ("pt-BR", "Portuguese (Brazil) (pt-BR)"),
    ("xx", "xx"), ("", ""),
])
def test_language_labels(code, label):
    assert names.language_label(code) == label


@pytest.mark.parametrize("code, label", [
    ("DE", "Germany (DE)"), ("GB", "United Kingdom (GB)"), ("QQ", "QQ")])
def test_country_labels(code, label):
    assert names.country_label(code) == label


def test_option_lists_are_real_codes_sorted_by_name():
    languages = names.all_languages()
    assert ("de", "German (de)") in languages and len(languages) > 150
    assert [label for _, label in languages] == sorted((label for _, label in languages),
                                                       key=str.casefold)
    countries = dict(names.all_countries())
    assert countries["DE"] == "Germany (DE)" and "ZZ" not in countries and "EU" not in countries


# --- times ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ago, text", [
    (timedelta(seconds=10), "just now"), (timedelta(minutes=2), "2 minutes ago"),
    (timedelta(hours=5), "5 hours ago"), (timedelta(days=3), "3 days ago"),
    (timedelta(days=9), "1 week ago"), (timedelta(days=300), "10 months ago"),
    (timedelta(days=800), "2 years ago"), (timedelta(days=-2), "in 2 days"),
])
def test_relative_times(ago, text):
    now = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
    assert relative_time(now - ago, now) == text


@given(st.datetimes(timezones=st.just(UTC)))
@settings(max_examples=300, deadline=None)
def test_exact_times_read_like_strftime(moment):
    assert exact_time(moment) == f"{moment.day} {moment:%b %Y, %H:%M:%S} UTC"
