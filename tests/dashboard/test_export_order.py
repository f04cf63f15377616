"""The queries view's Export CSV: a plain download link for small views, whose CSV lists the
queries in the order shown on screen; when the view's order cannot be kept (by "updated") the
button says which order the file has. The tests that only read share one dashboard made once
for the module (`reading`)."""

from __future__ import annotations

import csv
import html as htmllib
import io
import re

import pytest

from tests.support.dashboard import TOTAL, dashboard_to_read, project_url, row_queries

EXPORT = re.compile(r'<a class="button button--quiet results__export" href="([^"]+)"'
                    r'( download)?[^>]*>(.*?)</a>', re.S)


def export_link(html: str) -> tuple[str, bool, str]:
    """(href, is a plain download, the control's words)."""
    found = EXPORT.search(html)
    assert found, "no Export CSV control"
    words = re.sub(r"<[^>]+>", "", found.group(3))
    return htmllib.unescape(found.group(1)), bool(found.group(2)), " ".join(words.split())


@pytest.fixture(scope="module")
def reading(tmp_path_factory, sqlite_template, jobs_template):
    """The `app`, `shop` and `signed_in` of tests/dashboard/conftest.py, made once for the
    tests that only read (tests/support/dashboard.py)."""
    with dashboard_to_read(tmp_path_factory.mktemp("reading"), sqlite_template,
                           jobs_template) as made:
        yield made


def csv_queries(client, href: str) -> list[str]:
    response = client.get(href)
    assert response.status_code == 200
    return [line["query"] for line in csv.DictReader(io.StringIO(response.get_data(as_text=True)))]


@pytest.mark.parametrize("sort", ["query", "-query", "language", "-language", "country",
                                  "-country"])
def test_the_csv_has_the_order_on_screen(reading, sort):
    signed_in, shop = reading.client, reading.world
    assert TOTAL <= 100
    html = signed_in.get(project_url(shop, query=f"sort={sort}&size=100")).get_data(as_text=True)
    href, plain, words = export_link(html)
    assert plain and words == "Export CSV"
    assert f"sort={sort}" in href
    assert csv_queries(signed_in, href) == row_queries(html)


@pytest.mark.parametrize(("sort", "query"), [("-updated", ""), ("updated", "sort=updated")])
def test_a_view_by_updated_says_the_csv_is_by_query(reading, sort, query):
    signed_in, shop = reading.client, reading.world
    html = signed_in.get(project_url(shop, query=query)).get_data(as_text=True)
    href, plain, words = export_link(html)
    assert words == "Export CSV sorted by Query, A to Z"
    exported = csv_queries(signed_in, href)
    assert len(exported) == TOTAL and exported == sorted(exported)


def test_a_large_view_starts_a_job_instead(app, signed_in, shop):
    app.config["EXPORT_STREAM_LIMIT"] = 10
    html = signed_in.get(project_url(shop, query="sort=query")).get_data(as_text=True)
    href, plain, words = export_link(html)
    assert not plain and words == "Export CSV"
    assert f'hx-post="/projects/{shop.project_id}/export"' in html
