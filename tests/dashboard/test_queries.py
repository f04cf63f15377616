"""The queries view: the URL is the view; page and partial from one template; failures are
sentences; one API call per view. What tests that only read the view prove is in
test_queries_read.py."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import text

from queryapi import Client, RateLimited, TransportError, Unavailable
from tests.support.dashboard import (
    AuthActions,
    ServiceRequests,
    close_app,
    project_url,
)


def get(client, world, query="", **kwargs):
    return client.get(project_url(world, query=query), **kwargs)


def html_of(response) -> str:
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def test_updated_time_is_relative_with_the_exact_time_on_hover(signed_in, shop):
    html = html_of(get(signed_in, shop))
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z" '
                     r'title="\d{1,2} \w{3} \d{4}, \d\d:\d\d:\d\d UTC">just now</time>', html)


# --- projects that are not there, and errors ------------------------------------------------------


def test_unknown_or_foreign_projects_are_404_pages(signed_in, shop):
    _, _, foreign = shop.new_org()
    for project_id in ("00000000-0000-4000-8000-000000000000", foreign, "not-a-uuid",
                       "x" * 200, "%00"):
        response = signed_in.get(f"/projects/{project_id}/queries")
        assert response.status_code == 404, project_id
        html = response.get_data(as_text=True)
        assert "Page not found" in html
        assert "Traceback" not in html


def test_an_unexpected_error_is_a_friendly_500(signed_in, shop, monkeypatch, caplog):
    def boom(*_args, **_kwargs):
        raise RuntimeError("internal detail that must not be shown")

    monkeypatch.setattr(Client, "list_queries", boom)
    response = get(signed_in, shop)
    html = response.get_data(as_text=True)
    assert response.status_code == 500
    assert "Something went wrong" in html
    assert "internal detail" not in html and "Traceback" not in html
    assert "internal detail" in caplog.text  # logged for whoever runs the dashboard


# --- the service says wait, or is not there ------------------------------------------------------


def test_rate_limited_views_show_a_banner_that_retries_by_itself(signed_in, shop):
    shop.set_limits(1000, 2, 10000)  # the organization has used its minute already
    get(signed_in, shop)
    response = get(signed_in, shop, "q=shoes")
    html = response.get_data(as_text=True)
    assert response.status_code == 429
    wait = int(response.headers["Retry-After"])
    assert 1 <= wait <= 60
    assert f'data-retry-after="{wait}"' in html
    assert f'data-retry-url="{project_url(shop, query="q=shoes")}"' in html
    assert f'<meta http-equiv="refresh" content="{wait}">' in html  # without JavaScript too

    partial = get(signed_in, shop, "q=shoes", headers={"HX-Request": "true"})
    assert partial.status_code == 429
    assert partial.headers["HX-Retarget"] == "#notices"
    assert partial.headers["HX-Push-Url"] == "false"
    assert "data-retry-after" in partial.get_data(as_text=True)


def test_a_busy_banner_over_a_part_of_the_page_retries_the_page_on_screen(signed_in, shop):
    """The saved views drawn again after an edit are a part of the queries page: when the
    service is busy, the banner's retry loads the page on screen, never the part's address
    (a whole page of the part alone, seen in a browser under tight limits)."""
    page = project_url(shop, query="q=shoes")
    views = f"/projects/{shop.project_id}/views?view="
    get(signed_in, shop)
    shop.set_limits(1000, 1, 10000)
    response = signed_in.get(views, headers={"HX-Request": "true",
                                             "HX-Current-URL": "http://localhost" + page})
    assert response.status_code == 429
    assert f'data-retry-url="{page}"' in response.get_data(as_text=True)
    other_site = signed_in.get(views, headers={"HX-Request": "true",
                                               "HX-Current-URL": "http://evil.example/x"})
    assert 'data-retry-url="http' not in other_site.get_data(as_text=True)


@pytest.mark.parametrize("error, status, sentence", [
    (Unavailable(retry_after=30, status=503), 503, "temporarily unavailable"),
    (RateLimited(retry_after=12, status=429), 429, "wait a moment"),
    (TransportError(), 502, "cannot be reached"),
])
def test_service_trouble_is_a_sentence(signed_in, shop, monkeypatch, error, status, sentence):
    get(signed_in, shop)

    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr(Client, "list_queries", fail)
    for headers in ({}, {"HX-Request": "true"}):
        response = get(signed_in, shop, headers=headers)
        assert response.status_code == status
        assert sentence in response.get_data(as_text=True)
        assert "data-retry-after" in response.get_data(as_text=True)


# --- chips ---------------------------------------------------------------------------------------


def test_a_colour_that_is_not_rrggbb_never_reaches_a_style_attribute(signed_in, shop):
    hostile = 'red;background:url(https://evil.example/x)"onmouseover="alert(1)'
    engine = shop.app.extensions["tagdesk_engine"]
    with engine.begin() as connection:
        connection.execute(text("UPDATE tags SET color = :c WHERE name = 'brand'"),
                           {"c": hostile[:7]})
        connection.execute(text("UPDATE tags SET color = 'blue' WHERE name = 'sale'"))
    html = html_of(get(signed_in, shop, "q=cheap"))
    assert "evil" not in html and "red;" not in html and "blue" not in html
    assert '<span class="chip chip--small chip--neutral">brand</span>' in html
    assert '<span class="chip chip--small chip--neutral">sale</span>' in html


# --- one API call per view -----------------------------------------------------------------------


def test_one_api_call_per_page_view_in_steady_state(signed_in, shop, api_calls):
    get(signed_in, shop)  # the first view also reads the tag list and the saved views
    signed_in.get(project_url(shop, suffix="tags"))
    api_calls.reset()
    views = ["", "q=shoes", "lang=de&lang=fr", "tag=sale", "sort=query", "size=25&page=2"]
    for query in views:
        html_of(get(signed_in, shop, query))
        html_of(get(signed_in, shop, query, headers={"HX-Request": "true"}))
    # A view drawn into the page is one call; a whole page also reads the saved views with
    # their counts (never kept: every edit moves them).
    assert api_calls.paths == {"/api/queries/list": 2 * len(views),
                               "/api/views/list": len(views)}
    api_calls.reset()
    signed_in.get("/projects")
    assert api_calls.total == 0  # the project list is cached since sign-in
    signed_in.get(project_url(shop, suffix="tags"))
    # The tag list, read afresh, and every tag's count with it (one facets call).
    assert api_calls.paths == {"/api/tags/list": 1, "/api/queries/facets": 1}


def test_lists_are_read_again_when_the_cache_expires(signed_in, shop, api_calls, app):
    get(signed_in, shop)
    app.config["CACHE_SECONDS"] = 0
    api_calls.reset()
    get(signed_in, shop)
    signed_in.get("/projects")
    # The project's facets say which numbers it has (its columns), kept as the tags are; so
    # is its suggestions' status (the Tags picker's Suggested group).
    assert api_calls.paths == {"/api/queries/list": 1, "/api/tags/list": 1,
                               "/api/views/list": 1, "/api/projects/list": 2,
                               "/api/queries/facets": 1, "/api/suggestions/status": 1}


def test_a_tag_created_since_is_picked_up(signed_in, shop, api_calls):
    from service.org import admin

    get(signed_in, shop)
    tag_id = shop.run(lambda s: admin.create_tag(s, shop.project_id, "fresh", "#123456"))
    shop.run(lambda s: s.execute(text(
        "INSERT INTO query_tags (query_pk, tag_id, updated_at) "
        "SELECT pk, :t, updated_at FROM queries WHERE query = 'running shoes'"), {"t": tag_id}))
    import dashboard.apiclient as apiclient

    apiclient.RECHECK_SECONDS, saved = 0.0, apiclient.RECHECK_SECONDS
    try:
        html = html_of(get(signed_in, shop, "q=running shoes&sort=query"))
    finally:
        apiclient.RECHECK_SECONDS = saved
    assert '">fresh</span>' in html and "chip--neutral\">Tag " not in html


def test_invalidate_refreshes_the_lists_in_every_process(shop, dashboard_config, api_calls):
    # `api_calls` belongs to another app; this test builds its own with a route that edits.
    from flask_login import login_required

    import dashboard.apiclient as apiclient
    from app import create_app
    app = create_app(dashboard_config)

    @app.post("/_test/edited")
    @login_required
    def edited():
        apiclient.invalidate(shop.project_id)
        return "ok"

    try:
        counter = ServiceRequests(app.extensions["tagdesk_embedded"].service_app)
        auth = AuthActions(app.test_client(), shop)
        auth.sign_in()
        client = auth.client
        client.get(project_url(shop))
        counter.reset()
        client.get(project_url(shop))
        assert counter.paths == {"/api/queries/list": 1, "/api/views/list": 1}
        token = auth.token(project_url(shop))
        assert client.post("/_test/edited", headers={"X-CSRFToken": token}).status_code == 200
        counter.reset()
        client.get(project_url(shop))
        client.get("/projects")
        assert counter.paths == {"/api/queries/list": 1, "/api/tags/list": 1,
                                 "/api/views/list": 1, "/api/projects/list": 1,
                                 "/api/queries/facets": 1,  # the project's numbers
                                 "/api/suggestions/status": 1}
    finally:
        close_app(app)


def test_a_project_without_queries_or_tags_draws_its_pickers_counts_and_report(signed_in,
                                                                               world):
    base = f"/projects/{world.other_project_id}"
    html = html_of(signed_in.get(f"{base}/queries?lang=de&country=ZZ&tag=gone&volume_min=5"))
    assert "tag “gone” (no such tag in this project)" in html
    assert "country “ZZ” (no such country code)" in html
    assert 'name="lang" value="de" checked' in html  # a standard code stays chosen
    assert 'name="volume_min" value="5"' in html  # a range on a number no query has yet
    counts = signed_in.get(f"{base}/queries/counts?lang=de")
    assert counts.status_code == 200 and counts.get_json()["lang"] == {}
    report = html_of(signed_in.get(f"{base}/report?tag=gone"))
    assert "nothing to report" in report and "no such tag in this project" in report
