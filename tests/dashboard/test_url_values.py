"""Values of the address the queries view cannot use are named on the page, in one sentence,
not silently dropped; a page past the end leads to the last page."""

from __future__ import annotations

import html as htmllib
import re

from tests.support.dashboard import FILLER, TOTAL, project_url, row_queries


def page_of(client, world, query, **kwargs) -> str:
    response = client.get(project_url(world, query=query), **kwargs)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return response.get_data(as_text=True)


def ignored(html: str) -> str:
    """The sentence naming what the address asked for and the page did without ('' if none)."""
    found = re.search(r'<div class="notice notice--warning ignored-values"><p>(.*?)</p>', html,
                      re.S)
    return htmllib.unescape(found.group(1)) if found else ""


UNUSABLE = [
    ("lang=zz", "language “zz” (no such language code)"),
    ("country=QQ", "country “QQ” (no such country code)"),
    ("lang=%3Cde%3E", "language “<de>” (not a language code)"),
    ("tag=nosuchtag", "tag “nosuchtag” (no such tag in this project)"),
    ("size=7", "page size 7 (choose 25, 50, 100 or 200)"),
    ("size=many", "page size “many” (choose 25, 50, 100 or 200)"),
    ("sort=bogus", "sort “bogus” (sort by query, language, country or updated, "
                   "with a leading - for descending)"),
    ("page=abc", "page “abc” (not a page number)"),
    ("page=0", "page 0 (pages start at 1)"),
]


def test_each_unusable_value_is_named(signed_in, shop):
    """Each value of UNUSABLE alone is named, and the view is the one without it (every query,
    the first page): one app for them all (they only read), every failing one named."""
    failing = []
    for query, named in UNUSABLE:
        html = page_of(signed_in, shop, query)
        if (ignored(html) != f"Ignored from the address: {named}."
                or f"1–50 of {TOTAL} queries" not in html):
            failing.append((query, ignored(html)))
    assert not failing


def test_several_are_named_in_one_sentence_and_the_rest_of_the_view_is_kept(signed_in, shop):
    html = page_of(signed_in, shop,
                   "lang=zz&lang=de&tag=nosuchtag&tag=sale&size=7&sort=bogus&page=abc")
    assert ignored(html) == (
        "Ignored from the address: sort “bogus” (sort by query, language, country or updated, "
        "with a leading - for descending); page size 7 (choose 25, 50, 100 or 200); "
        "page “abc” (not a page number); language “zz” (no such language code); "
        "tag “nosuchtag” (no such tag in this project).")
    assert row_queries(html) == ["laufschuhe herren"]  # German and tagged 'sale'
    chips = re.findall(r'aria-label="Remove filter ([^"]+)"', html)
    assert chips == ["Language: German (de)", "Tag: sale"]


def test_usable_values_name_nothing(signed_in, shop):
    for query in ("", "lang=de&country=AT&tag=SALE&size=25&sort=-query&page=2",
                  "lang=&tag=&size=&sort=&page="):
        assert ignored(page_of(signed_in, shop, query)) == "", query


def test_a_code_no_standard_has_is_kept_when_the_project_uses_it(signed_in, shop):
    shop.add_queries([("made-up language query", "xx", "QQ", [])])
    html = page_of(signed_in, shop, "lang=xx&country=QQ")
    assert ignored(html) == ""
    assert row_queries(html) == ["made-up language query"]


def test_a_tag_created_since_the_list_was_read_is_not_called_unknown(signed_in, shop):
    from service.org import admin

    page_of(signed_in, shop, "")  # the tag list is cached
    shop.run(lambda s: admin.create_tag(s, shop.project_id, "brand-new", "#123456"))
    html = page_of(signed_in, shop, "tag=brand-new")
    assert ignored(html) == ""
    assert "No queries match" in html


def test_a_tag_and_a_text_holding_a_c1_control_are_found_from_the_address(signed_in, shop):
    """The API stores C1 controls (U+0080–U+009F) in names and texts; the address keeps them
    too (weblib.text_rules), so the view finds what they name."""
    from service.org import admin

    shop.tags["c1\x9btag"] = shop.run(
        lambda s: admin.create_tag(s, shop.project_id, "c1\x9btag", "#123456"))
    shop.add_queries([("c1\x80 query", "en", "US", ["c1\x9btag"])])
    for query in ("tag=c1%C2%9Btag", "q=c1%C2%80"):
        html = page_of(signed_in, shop, query)
        assert ignored(html) == ""
        assert row_queries(html) == ["c1\x80 query"], query


def test_the_sentence_quotes_values_short_and_escaped(signed_in, shop):
    html = page_of(signed_in, shop, "tag=%3Cimg%20src=x%3E" + "y" * 100)
    assert "<img src=x>" not in html
    assert ignored(html) == ("Ignored from the address: tag “<img src=x>" + "y" * 29
                             + "…” (no such tag in this project).")


def test_the_sentence_goes_once_the_view_is_changed(signed_in, shop):
    html = page_of(signed_in, shop, "size=7")
    assert ignored(html)
    partial = page_of(signed_in, shop, "size=25", headers={"HX-Request": "true"})
    assert ignored(partial) == ""


def test_a_page_past_the_end_redirects_to_the_last_page(signed_in, shop):
    last_page = -(-TOTAL // 25)
    response = signed_in.get(project_url(shop, query="size=25&page=99999"))
    assert response.status_code == 302
    assert response.headers["Location"] == project_url(shop, query=f"size=25&page={last_page}")
    html = page_of(signed_in, shop, f"size=25&page={last_page}")
    assert (f"There is no page 99,999 of this view: here is its last page, {last_page}."
            in html)
    assert f"Page {last_page} of {last_page}" in html
    assert len(row_queries(html)) == TOTAL - 25 * (last_page - 1)
    assert 'rel="next"' not in html
    prev = re.search(r'href="([^"]+)" hx-get="[^"]+" rel="prev"', html)
    assert prev and prev.group(1).replace("&amp;", "&").endswith(
        f"size=25&page={last_page - 1}")
    assert FILLER  # the shop has several pages


def test_a_page_past_the_end_in_an_htmx_request_loads_the_last_page(signed_in, shop):
    response = signed_in.get(project_url(shop, query="page=50"), headers={"HX-Request": "true"})
    assert response.headers["HX-Redirect"] == project_url(shop, query="page=2")


def test_ignored_values_are_named_after_the_redirect_too(signed_in, shop):
    response = signed_in.get(project_url(shop, query="page=99999&sort=bogus"))
    assert response.status_code == 302
    html = page_of(signed_in, shop, "page=2")
    assert "Ignored from the address: sort “bogus”" in htmllib.unescape(html)
