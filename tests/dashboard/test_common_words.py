"""The Common words panel of the queries page: a disclosure whose body the dashboard asks
for when it is opened (queries/words through the real service), each word a link to the view
searching for it; absent against a deployment without the extension."""

from __future__ import annotations

import re
from html import unescape

from tests.support.dashboard import AuthActions


def panel_url(page: str) -> str:
    found = re.search(r'<div class="common-words__body" hx-get="([^"]+)"', page)
    assert found, "no Common words panel"
    return unescape(found.group(1))


def links(fragment: str) -> list[tuple[str, str, str]]:
    """(text, href, count) of each word or phrase."""
    return [(unescape(text), unescape(href), count) for href, text, count in re.findall(
        r'<a class="common-words__link" href="([^"]+)"[^>]*>([^<]+)</a>\s*'
        r'<span class="common-words__count">([^<]+)</span>', fragment)]


def test_the_panel_lists_the_views_words_each_linking_to_the_view_searching_for_it(
        signed_in, shop):
    page = signed_in.get(f"/projects/{shop.project_id}/queries?lang=en").get_data(
        as_text=True)
    assert "<summary" in page and "Common words</summary>" in page
    url = panel_url(page)
    assert url == f"/projects/{shop.project_id}/queries/words?lang=en"
    fragment = signed_in.get(url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "<html" not in fragment
    found = links(fragment)
    # English queries: "running" in three of SAMPLE's four and in none of the fillers.
    assert ("running", f"/projects/{shop.project_id}/queries?q=running&lang=en", "3") in found
    assert ("running shoes", f"/projects/{shop.project_id}/queries?q=running+shoes&lang=en",
            "3") in found
    assert not {text for text, _href, _count in found} & {"to", "where"}  # stop words
    # The link's view counts as many queries as the panel said.
    listed = signed_in.get(f"/projects/{shop.project_id}/queries?q=running&lang=en").get_data(
        as_text=True)
    assert re.search(r"\b3 queries\b", listed), "the link shows another count"


def test_the_panel_says_its_links_replace_the_search_text(signed_in, shop):
    fragment = signed_in.get(f"/projects/{shop.project_id}/queries/words?q=shoes",
                             headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "instead of “shoes”" in fragment
    assert ("cheap", f"/projects/{shop.project_id}/queries?q=cheap", "1") in links(fragment)


def test_without_javascript_the_words_are_a_page_of_their_own(signed_in, shop):
    page = signed_in.get(f"/projects/{shop.project_id}/queries/words?lang=de").get_data(
        as_text=True)
    assert "<h1>Common words</h1>" in page
    assert f'href="/projects/{shop.project_id}/queries?lang=de">Back to the view' in page
    assert ("laufschuhe", f"/projects/{shop.project_id}/queries?q=laufschuhe&lang=de",
            "2") in links(page)


def test_without_the_extension_there_is_no_panel(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    page = client.get(f"/projects/{shop.project_id}/queries").get_data(as_text=True)
    assert "common-words" not in page
    assert client.get(f"/projects/{shop.project_id}/queries/words").status_code == 404
