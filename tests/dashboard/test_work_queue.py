"""The work queue on the queries page: untagged, all of, without (the address, the list, the
chips, bulk edits over them), a count beside every choice, progress, every tag's count in one
call, saved views — and, against a deployment without the API's extensions, none of it. What
tests that only read the page prove (the list, its chips, the picker) is in
test_work_queue_read.py."""

from __future__ import annotations

import html as html_module
import re

import pytest
from sqlalchemy import text

from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import (
    api_of,
    bulk_url,
    page,
    plan_of,
    post,
    tag_names_by_query,
    text_of,
    wait_for,
)
from tests.support.dashboard import FILLER, SAMPLE, TOTAL

UNTAGGED = sum(1 for *_, tags in SAMPLE if not tags) + FILLER
CHIPS = re.compile(r'aria-label="Remove filter ([^"]+)"')


def chips(html: str) -> list[str]:
    return [html_module.unescape(chip) for chip in CHIPS.findall(html)]


def counts(client, world, query: str = "", **headers):
    response = client.get(f"/projects/{world.project_id}/queries/counts"
                          + (f"?{query}" if query else ""), headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    assert response.headers["Cache-Control"] == "no-store"
    return response.get_json()


def sample_with(predicate) -> set[str]:
    return {query for query, _l, _c, tags in SAMPLE if predicate(set(tags))}


# --- counts beside every choice, progress ------------------------------------------------------


@pytest.mark.parametrize("query, filters", [
    ("", QueryFilters()),
    ("lang=de", QueryFilters(languages=("de",))),
    ("untagged=1&q=shoes", QueryFilters(text="shoes", untagged=True)),
    ("tag=sale&tag=brand&tagmatch=all&country=GB",
     QueryFilters(tag_names=("sale", "brand"), tag_match="all", countries=("GB",))),
    ("nottag=brand&lang=en", QueryFilters(exclude_tag_names=("brand",), languages=("en",))),
])
def test_the_counts_of_a_view_are_the_apis_facets(app, signed_in, shop, api_calls, query,
                                                  filters):
    page(signed_in, shop)  # what the API offers, the tags: known to the session
    api_calls.reset()
    found = counts(signed_in, shop, query)
    # The project's progress was read with the page's numbers (the project's facets).
    assert dict(api_calls.paths) == {"/api/queries/facets": 1}
    with api_of(app, shop) as api:
        expected = api.facets(shop.project_id, filters)
        names = {tag.id: tag.name for tag in api.iter_tags(shop.project_id)}
    assert found["lang"] == {code: f"{n:,}" for code, n in expected.languages}
    assert found["country"] == {code: f"{n:,}" for code, n in expected.countries}
    assert found["tag"] == {names[i]: f"{n:,}" for i, n in expected.tags}
    assert found["untagged"] == {"1": f"{expected.untagged:,}"}
    assert found["total"] == f"{expected.total_records:,}"
    # Progress is the project's, whatever the view.
    assert found["progress"]["untagged"] == UNTAGGED and found["progress"]["total"] == TOTAL
    api_calls.reset()
    counts(signed_in, shop, query)
    assert dict(api_calls.paths) == {"/api/queries/facets": 1}  # progress kept a while


def test_progress_says_how_much_is_left_and_links_to_it(signed_in, shop, api_calls):
    found = counts(signed_in, shop)["progress"]
    percent = UNTAGGED * 100 // TOTAL
    # A no-break space: "(47" never ends a line with "%)" on the next.
    assert found["text"] == f"{UNTAGGED} of {TOTAL} queries untagged ({percent}\u00a0%)"
    progress = found["html"]
    assert f'max="{TOTAL}" value="{TOTAL - UNTAGGED}" aria-label="Queries tagged"' in progress
    link = re.search(r'<a class="progress__link" href="([^"]+)">Show untagged</a>', progress)
    assert link and link.group(1) == f"/projects/{shop.project_id}/queries?untagged=1"


def test_an_edit_shows_in_the_progress_at_once(app, signed_in, shop, api_calls):
    html = page(signed_in, shop, "untagged=1")
    before = counts(signed_in, shop, "lang=en")["progress"]["untagged"]
    key = re.search(r'name="selected" value="([^"]+)"', html).group(1)
    done = post(signed_in, bulk_url(shop), {"action": "add", "apply_tag": str(
        shop.tags["sale"]), "selected": [html_module.unescape(key)], "untagged": "1"}, html)
    assert done.status_code == 200
    assert counts(signed_in, shop, "lang=en")["progress"]["untagged"] == before - 1


def test_a_select_all_job_over_untagged_tags_exactly_those(app, signed_in, shop):
    html = page(signed_in, shop, "untagged=1&lang=en")
    untagged_en = {q for q, tags in ((k[0], v) for k, v in
                                     tag_names_by_query(app, shop).items() if k[1] == "en")
                   if not tags}
    asked = post(signed_in, bulk_url(shop), {"action": "add", "apply_tag": str(
        shop.tags["local"]), "scope": "all", "untagged": "1", "lang": "en"}, html)
    body = asked.get_data(as_text=True)
    assert f"{len(untagged_en)} queries matching language English (en), no tag" in \
        text_of(body)
    post(signed_in, f"/projects/{shop.project_id}/bulk/confirm", {"plan": plan_of(body)}, html)
    edit = wait_for(app, app.extensions["tagdesk_jobs"].for_project(shop.project_id,
                                                                    limit=1)[0].id)
    assert edit.state == "done"
    after = tag_names_by_query(app, shop)
    assert {k[0] for k, tags in after.items() if tags == {"local"} and k[1] == "en"} >= \
        untagged_en
    assert not any(not tags for k, tags in after.items() if k[1] == "en")
    assert edit.changed == len(untagged_en)


def test_project_cards_and_the_tags_page_count_with_facets(app, signed_in, shop, api_calls):
    app.config["COUNT_INTERVAL"] = 0
    html = signed_in.get("/projects").get_data(as_text=True)
    loader = re.search(r'hx-get="([^"]+)" hx-trigger="load"', html)
    cards = ""
    while loader:
        api_calls.reset()
        body = signed_in.get(html_module.unescape(loader.group(1)),
                             headers={"HX-Request": "true"}).get_data(as_text=True)
        # One project a request, each by one facets call (no list call).
        assert set(api_calls.paths) <= {"/api/queries/facets", "/api/openapi.json"}
        assert api_calls.paths["/api/queries/facets"] == 1
        cards += body
        loader = re.search(r'hx-get="([^"]+)" hx-trigger="load[^"]*"', body)
    mine = re.search(rf'id="count-p-{shop.project_id}"[^>]*>(.*?)</span>\n', cards, re.S)
    assert f"{UNTAGGED} of {TOTAL} queries untagged" in text_of(mine.group(1))
    assert 'aria-label="Queries tagged"' in mine.group(1)
    # The tags page: every tag counted with the page by one facets call, no loader to come.
    api_calls.reset()
    page = signed_in.get(f"/projects/{shop.project_id}/tags").get_data(as_text=True)
    assert api_calls.paths["/api/queries/facets"] == 1
    assert "count-loader" not in page
    for name, tag_id in shop.tags.items():
        carriers = sum(1 for *_, tags in SAMPLE if name in tags)
        noun = "query" if carriers == 1 else "queries"
        assert f'<span id="count-t-{tag_id}" class="query-count">{carriers} {noun}</span>' in page
    # Its counts alone (what a page drawn without them loads after it): one call, no loader.
    api_calls.reset()
    body = signed_in.get(f"/projects/{shop.project_id}/tags/counts",
                         headers={"HX-Request": "true"}).get_data(as_text=True)
    assert dict(api_calls.paths) == {"/api/queries/facets": 1}
    assert "count-loader" not in body
    for name, tag_id in shop.tags.items():
        carriers = sum(1 for *_, tags in SAMPLE if name in tags)
        noun = "query" if carriers == 1 else "queries"
        assert f'<span id="count-t-{tag_id}" class="query-count" hx-swap-oob="true">' \
               f"{carriers} {noun}</span>" in body


# --- saved views ---------------------------------------------------------------------------------


def views_url(world) -> str:
    return f"/projects/{world.project_id}/views"


def test_a_view_is_saved_listed_with_its_live_count_renamed_and_deleted(app, signed_in, shop):
    html = page(signed_in, shop)
    assert '<h2 id="saved-views-heading" class="saved-views__title">Saved views</h2>' in html
    assert '<label for="view-name">View name</label>' in html
    section = post(signed_in, views_url(shop), {"name": "DE untagged",
                                                 "view": "?lang=de&untagged=1"}, html)
    body = section.get_data(as_text=True)
    assert "Saved the view “DE untagged”." in text_of(body)
    link = re.search(r'<a class="saved-view__link" href="([^"]+)"><span class="saved-view__name">'
                     r'DE untagged<span class="visually-hidden">, </span></span><span '
                     r'id="view-count-\d+" class="saved-view__count">(\d+)<', body)
    assert html_module.unescape(link.group(1)) == \
        f"/projects/{shop.project_id}/queries?lang=de&untagged=1"
    assert link.group(2) == "0"  # every German sample query has a tag
    # Live: a German query that loses its tag counts at once (the section drawn again).
    with api_of(app, shop) as api:
        record = next(q for q in api.iter_queries(shop.project_id) if q.query == "laufschuhe damen")
        api.set_tags(shop.project_id, [record.assignment(())])
    body = signed_in.get(views_url(shop), headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r'>DE untagged<span class="visually-hidden">, </span></span><span '
                     r'id="view-count-\d+" class="saved-view__count">1<', body)
    # A tag renamed since is still the view's tag (the service keeps its id).
    post(signed_in, views_url(shop), {"name": "Sale", "view": "?tag=sale&sort=query"}, html)
    shop.run(lambda s: s.execute(text("UPDATE tags SET name = 'discount' WHERE id = :id"),
                                 {"id": shop.tags["sale"]}))
    app.config["CACHE_SECONDS"] = 0  # the session's tag list read again, as a minute later
    body = signed_in.get(views_url(shop), headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r'queries\?tag=discount&amp;sort=query"><span class="saved-view__name">Sale<',
                     body)
    # Rename, then a name taken (folded as tag names are) is a sentence, nothing lost.
    view_id = re.search(r'/views/(\d+)/rename"[^>]*>\s*<input[^>]*>\s*<input[^>]*>\s*<label '
                        r'for="rename-view-\d+">New name for DE untagged', body).group(1)
    body = post(signed_in, f"{views_url(shop)}/{view_id}/rename",
                {"name": "German, untagged"}, html).get_data(as_text=True)
    assert "Renamed the view to “German, untagged”." in text_of(body)
    body = post(signed_in, views_url(shop), {"name": "german, UNTAGGED", "view": "?q=x"},
                html).get_data(as_text=True)
    assert "already" in text_of(body) and 'value="german, UNTAGGED"' in body
    # Delete, then Undo brings it back as it was.
    body = post(signed_in, f"{views_url(shop)}/{view_id}/delete", {}, html).get_data(
        as_text=True)
    assert "Deleted the view “German, untagged”." in text_of(body)
    assert 'saved-view__name">German, untagged<' not in body
    undo = re.search(r'<input type="hidden" name="name" value="([^"]+)">\s*<input '
                     r'type="hidden" name="view" value="([^"]+)">\s*<button[^>]*>Undo', body)
    body = post(signed_in, views_url(shop), {"name": html_module.unescape(undo.group(1)),
                                              "view": html_module.unescape(undo.group(2))},
                html).get_data(as_text=True)
    assert re.search(r'queries\?lang=de&amp;untagged=1"><span class="saved-view__name">German, '
                     r'untagged<', body)


def test_a_taken_name_is_said_with_curly_quotes_as_every_other_sentence(signed_in, shop):
    html = page(signed_in, shop)
    post(signed_in, views_url(shop), {"name": "German jackets", "view": "?lang=de"}, html)
    taken = "A saved view named “German jackets” already exists in this project."
    body = post(signed_in, views_url(shop), {"name": "german JACKETS", "view": "?q=x"},
                html).get_data(as_text=True)
    assert taken in text_of(body) and '"German jackets"' not in text_of(body)
    body = post(signed_in, views_url(shop), {"name": "Shoes", "view": "?q=shoes"},
                html).get_data(as_text=True)
    view_id = re.search(r'/views/(\d+)/rename"[^>]*>\s*<input[^>]*>\s*<input[^>]*>\s*<label '
                        r'for="rename-view-\d+">New name for Shoes', body).group(1)
    body = post(signed_in, f"{views_url(shop)}/{view_id}/rename", {"name": "GERMAN jackets"},
                html).get_data(as_text=True)
    assert taken in text_of(body)


def test_saving_without_javascript_comes_back_to_the_view(signed_in, shop):
    html = page(signed_in, shop, "q=shoes")
    response = post(signed_in, views_url(shop), {"name": "Shoes", "view": "?q=shoes"}, html,
                    htmx=False)
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/queries?q=shoes")
    html = page(signed_in, shop, "q=shoes")
    assert "Saved the view “Shoes”." in text_of(html)
    assert re.search(r'>Shoes<span class="visually-hidden">, </span></span><span '
                     r'id="view-count-\d+" class="saved-view__count">\d+<', html)


@pytest.mark.parametrize("name, sentence", [
    ("", "Give the view a name."),
    ("x" * 101, "A view's name can be at most 100 characters."),
])
def test_a_bad_name_is_a_sentence(signed_in, shop, name, sentence):
    html = page(signed_in, shop)
    body = post(signed_in, views_url(shop), {"name": name, "view": "?q=a"}, html).get_data(
        as_text=True)
    assert sentence in text_of(body)


def test_without_the_csrf_token_no_view_is_saved(signed_in, shop):
    response = signed_in.post(views_url(shop), data={"name": "forged", "view": ""},
                              headers={"HX-Request": "true"})
    assert response.status_code == 400
    assert "forged" not in page(signed_in, shop)


# --- a deployment without the extensions -------------------------------------------------------


def test_without_the_extensions_none_of_it_is_offered(external, reference_only, shop):
    from tests.support.dashboard import AuthActions

    client = external.test_client()
    AuthActions(client, shop).sign_in()
    html = page(client, shop, "untagged=1&nottag=sale&tag=brand&tag=local&tagmatch=all")
    for absent in ('name="untagged"', "Exclude ", "All of the chosen tags", "Saved views",
                   "data-counts-url", "data-progress"):
        assert absent not in html, absent
    # The view shows what this service can: the tags, as any of them, and says what it left.
    assert chips(html) == ["Tag: brand or local"]
    assert "all of, without and untagged" in text_of(html)
    assert client.get(f"/projects/{shop.project_id}/queries/counts").status_code == 204
    assert client.get(views_url(shop)).status_code == 404
    hidden = {path for method, path in reference_only.proxy.requests}
    assert "/api/queries/facets" not in hidden and "/api/views/list" not in hidden
