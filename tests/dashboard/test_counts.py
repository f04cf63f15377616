"""Query counts beside projects and tags against a deployment without facets (the reference
alone): the page makes no extra API call, each request of the lazy loader at most one, and
counts the session knows cost nothing. With facets: tests/dashboard/test_work_queue.py."""

from __future__ import annotations

import re

import pytest

from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import api_of
from tests.support.dashboard import ServiceRequests

LOADER = re.compile(r'class="count-loader" hx-target="this" hx-get="([^"]+)"')
COUNT = re.compile(r'<span id="count-([^"]+)" class="query-count" hx-swap-oob="true">'
                   r'([^<]*)</span>')


@pytest.fixture
def app(external):
    return external


@pytest.fixture
def api_calls(service_app) -> ServiceRequests:
    return ServiceRequests(service_app)


@pytest.fixture(autouse=True)
def unpaced(app):
    """These tests follow the loader at once: no pacing, except where a test sets one."""
    app.config["COUNT_INTERVAL"] = 0


def load_counts(client, html: str, api_calls) -> tuple[dict[str, str], int]:
    """Follow the loader as htmx would: {key: text}, and how many requests it took."""
    counts, requests = {}, 0
    match = LOADER.search(html)
    while match:
        api_calls.reset()
        body = client.get(match.group(1).replace("&amp;", "&"),
                          headers={"HX-Request": "true"}).get_data(as_text=True)
        requests += 1
        assert api_calls.paths.get("/api/queries/list", 0) <= 1
        # (What the deployment offers is asked once per session, by the first of them.)
        calls = {p: n for p, n in api_calls.paths.items() if p != "/api/openapi.json"}
        assert sum(calls.values()) <= 1, dict(api_calls.paths)
        counts.update(COUNT.findall(body))
        match = LOADER.search(body)
        assert requests < 100
    return counts, requests


def test_project_cards_show_their_query_counts_one_call_at_a_time(app, signed_in, shop,
                                                                  api_calls):
    api_calls.reset()
    html = signed_in.get("/projects").get_data(as_text=True)
    assert "/api/queries/list" not in api_calls.paths  # the page itself counts nothing
    counts, requests = load_counts(signed_in, html, api_calls)
    with api_of(app, shop) as api:
        projects = api.all_projects()
        expected = {f"p-{project.id}": api.list_queries(project.id, limit=1).page.total_records
                    for project in projects}
    assert {key: text for key, text in counts.items()} == {
        key: f"{number:,} {'query' if number == 1 else 'queries'}"
        for key, number in expected.items()}
    assert requests == len(projects)
    for project in projects:
        assert f'id="count-p-{project.id}"' in html
    # Known counts cost nothing the next time.
    api_calls.reset()
    html = signed_in.get("/projects").get_data(as_text=True)
    again, requests = load_counts(signed_in, html, api_calls)
    assert again == counts and requests == 1
    assert "/api/queries/list" not in api_calls.paths


def test_tags_show_their_query_counts(app, signed_in, shop, api_calls):
    url = f"/projects/{shop.project_id}/tags"
    html = signed_in.get(url).get_data(as_text=True)
    counts, _ = load_counts(signed_in, html, api_calls)
    with api_of(app, shop) as api:
        for name, tag_id in shop.tags.items():
            total = api.list_queries(shop.project_id, QueryFilters(tag_ids=(tag_id,)),
                                     limit=1).page.total_records
            assert counts[f"t-{tag_id}"].startswith(f"{total:,} "), name
            assert f'id="count-t-{tag_id}"' in html
    # A filtered list asks only for its own tags' counts.
    filtered = signed_in.get(f"{url}?name=bra", headers={"HX-Request": "true"})
    loader = LOADER.search(filtered.get_data(as_text=True))
    assert loader and "name=bra" in loader.group(1)


def test_a_session_reads_three_counts_at_once_then_one_a_second(app, signed_in, shop,
                                                                api_calls):
    """40 tags cost 3 calls at once, then one a second: the loader that comes sooner reads
    nothing and is told when to come back."""
    app.config.update(COUNT_BURST=3, COUNT_INTERVAL=60.0)  # the next read a minute away
    html = signed_in.get(f"/projects/{shop.project_id}/tags").get_data(as_text=True)
    loader = LOADER.search(html)
    counts, reads = {}, []
    for _ in range(5):
        api_calls.reset()
        body = signed_in.get(loader.group(1).replace("&amp;", "&"),
                             headers={"HX-Request": "true"}).get_data(as_text=True)
        reads.append(api_calls.paths.get("/api/queries/list", 0))
        counts.update(COUNT.findall(body))
        loader = LOADER.search(body)
        assert loader, "the counts stop before every tag is counted"
    assert reads == [1, 1, 1, 0, 0] and len(counts) == 3
    # The burst spent: the loader comes back when the next read is allowed (a minute later),
    # not every 250 ms.
    delay = re.search(r'hx-trigger="load delay:(\d+)ms"', body)
    assert delay and 59_000 <= int(delay.group(1)) <= 60_000
    # A second tab of the same session shares the pace.
    api_calls.reset()
    signed_in.get(f"/projects/{shop.project_id}/tags/counts", headers={"HX-Request": "true"})
    assert "/api/queries/list" not in api_calls.paths
