"""The pages that draw counts with themselves (the Tags page's counts, the queries page's
progress) when the service's facets are busy (503, from a live server in front of the
service): the page comes all the same, and the counts load after it, as without facets."""

from __future__ import annotations

import json

import pytest

from app import create_app
from tests.support.dashboard import close_app
from tests.support.servers import LiveServer

BUSY = json.dumps({"statusCode": 503, "error": "Service Unavailable",
                   "message": "The service is busy."}).encode()


class BusyFacets:
    """The service, whose facets answer 503 while `busy`."""

    def __init__(self, service_app):
        self.service_app = service_app
        self.busy = False
        self.refused = 0

    def __call__(self, environ, start_response):
        if self.busy and environ["PATH_INFO"] == "/api/queries/facets":
            self.refused += 1
            start_response("503 SERVICE UNAVAILABLE", [("Content-Type", "application/json"),
                                                       ("Retry-After", "30")])
            return [BUSY]
        return self.service_app(environ, start_response)


@pytest.fixture
def busy(service_app):
    front = BusyFacets(service_app)
    server = LiveServer(front).start()
    server.front = front
    yield server
    server.stop()


@pytest.fixture
def app(dashboard_config, busy, shop):
    app = create_app({**dashboard_config, "API_URL": busy.url})
    yield app
    close_app(app)


def page_while_busy(client, busy, path: str) -> str:
    """The page drawn while the service refuses facets: it comes all the same."""
    busy.front.busy = True
    response = client.get(path)
    assert response.status_code == 200 and busy.front.refused >= 1
    return response.get_data(as_text=True)


def test_the_tags_page_comes_without_its_counts_and_loads_them_after(signed_in, shop, busy):
    html = page_while_busy(signed_in, busy, f"/projects/{shop.project_id}/tags")
    assert 'class="count-loader"' in html
    for tag_id in shop.tags.values():
        assert f'<span id="count-t-{tag_id}" class="query-count"></span>' in html


def test_the_queries_page_comes_without_its_progress(signed_in, shop, busy):
    html = page_while_busy(signed_in, busy, f"/projects/{shop.project_id}/queries")
    assert '<p class="project-progress" data-progress aria-live="polite"></p>' in html
    busy.front.busy = False
    again = signed_in.get(f"/projects/{shop.project_id}/queries").get_data(as_text=True)
    assert "queries untagged" in again.split('data-progress aria-live="polite">')[1][:400]
