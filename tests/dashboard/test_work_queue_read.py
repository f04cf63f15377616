"""The work queue on the queries page as tests that only read it see it: untagged, all of and
without in the address, the list and its chips, damaged values named, the tag picker, the saved
views' section opened as a page. None of them writes, so they share one dashboard and its
signed-in client, made once for the module (tests/support/dashboard.py's dashboard_to_read);
a test that writes belongs in test_work_queue.py."""

from __future__ import annotations

import html as html_module
import re

import pytest

from tests.dashboard.bulk_helpers import page, text_of
from tests.dashboard.test_work_queue import UNTAGGED, chips, sample_with, views_url
from tests.support.dashboard import FILLER, dashboard_to_read, row_queries


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


def test_untagged_lists_only_queries_without_a_tag(signed_in, shop):
    html = page(signed_in, shop, "untagged=1&size=100")
    shown = set(row_queries(html))
    assert f"1–{UNTAGGED} of {UNTAGGED} queries" in html
    assert shown == sample_with(lambda tags: not tags) | {f"filler query {i:03d}"
                                                           for i in range(FILLER)}
    assert chips(html) == ["Untagged"]
    # The picker shows the choice made; its chip's link leads back to every query.
    assert re.search(r'name="untagged" value="1" checked', html)


@pytest.mark.parametrize("query, chip, expected", [
    ("tag=sale&tag=brand", "Tag: sale or brand",
     lambda tags: bool(tags & {"sale", "brand"})),
    ("tag=sale&tag=brand&tagmatch=all", "Tags: sale and brand",
     lambda tags: {"sale", "brand"} <= tags),
    ("nottag=brand&q=running", "Not tag: brand", lambda tags: "brand" not in tags),
    ("tag=question&nottag=local", None, lambda tags: "question" in tags and "local" not in tags),
])
def test_all_of_and_without_narrow_the_list_and_say_so(signed_in, shop, query, chip, expected):
    html = page(signed_in, shop, query + "&size=100")
    shown = {text for text in row_queries(html) if not text.startswith("filler")}
    wanted = sample_with(expected)
    if "q=running" in query:
        wanted = {text for text in wanted if "running" in text}
    assert shown == wanted
    if chip:
        assert chip in chips(html)
    else:
        assert chips(html) == ["Tag: question", "Not tag: local"]


def test_a_chip_removes_its_filter_and_keeps_the_rest(signed_in, shop):
    html = page(signed_in, shop, "tag=sale&tag=brand&tagmatch=all&nottag=local&lang=en")
    links = dict(re.findall(r'<a class="filter-chip" href="([^"]+)"[^>]*aria-label="Remove '
                            r'filter ([^"]+)"', html))
    by_chip = {html_module.unescape(label): html_module.unescape(href)
               for href, label in links.items()}
    assert by_chip["Tags: sale and brand"].endswith("?lang=en&nottag=local")
    assert by_chip["Not tag: local"].endswith("?lang=en&tag=sale&tag=brand&tagmatch=all")


def test_damaged_values_are_named_and_the_rest_is_shown(signed_in, shop):
    html = page(signed_in, shop, "tagmatch=every&untagged=maybe&nottag=nosuch&tag=sale")
    sentence = text_of(html)
    assert "tag match “every” (choose any or all)" in sentence
    assert "untagged “maybe” (use untagged=1)" in sentence
    assert "tag “nosuch” (no such tag in this project)" in sentence
    assert chips(html) == ["Tag: sale"]
    # Untagged with a chosen tag cannot both hold: the tags win, and the page says so.
    html = page(signed_in, shop, "untagged=1&tag=sale")
    assert "a query with no tag cannot have a chosen tag" in text_of(html)
    assert chips(html) == ["Tag: sale"]


def test_the_tag_picker_offers_untagged_exclude_and_how_tags_combine(signed_in, shop):
    html = page(signed_in, shop, "tag=sale&tag=brand&tagmatch=all&nottag=local")
    # Unticked; ticking it unticks the included tags (static/view-form.js reads data-clears).
    untagged = '<input type="checkbox" name="untagged" value="1" data-clears="[data-include]">'
    assert untagged in html
    for name in ("sale", "brand", "local", "question"):
        assert f'aria-label="Exclude {name}"' in html
    assert re.search(r'name="nottag" value="local" checked aria-label="Exclude local"', html)
    assert "Any of the chosen tags" in html and "All of the chosen tags" in html
    assert re.search(r'name="tagmatch" value="all" checked', html)
    # With fewer than two tags chosen, how they combine is hidden until a second is ticked.
    assert re.search(r'class="picker__match" data-tag-match hidden', page(signed_in, shop))


def test_the_views_section_opened_as_a_page_leads_to_its_queries_view(signed_in, shop):
    """The section's own address is for the page's live updates; opened in a tab (a link
    copied, a middle click) it leads to the queries view it belongs to, not a bare piece."""
    response = signed_in.get(views_url(shop) + "?view=%3Fq%3Dshoes")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/projects/{shop.project_id}/queries?q=shoes")
    piece = signed_in.get(views_url(shop), headers={"HX-Request": "true"})
    assert piece.status_code == 200 and "<html" not in piece.get_data(as_text=True)

