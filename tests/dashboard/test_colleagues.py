"""Rows changed under the person: the queries page polls POST /projects/<id>/queries/changed
with the rows it shows (id@updatedAt); the dashboard asks the service's POST
/api/queries/versions (through queryapi) and answers how many of them changed. Against a
deployment without that extension the page asks nothing and nothing is ever said."""

from __future__ import annotations

import re

from queryapi import TagEdit
from tests.dashboard.bulk_helpers import api_of, page, post
from tests.support.dashboard import AuthActions, project_url

ROW = re.compile(r'<tr id="row-([^"]+)" data-row>.*?<time datetime="([^"]+)"', re.S)


def shown(html: str) -> str:
    """The rows a page shows, as colleagues.js sends them."""
    return ",".join(f"{query_id}@{when}" for query_id, when in ROW.findall(html))


def changed(client, world, html: str, rows: str):
    return post(client, project_url(world, suffix="queries/changed"), {"shown": rows}, html)


def test_the_page_polls_every_ten_seconds_by_default(signed_in, shop):
    html = page(signed_in, shop, "sort=query")
    assert re.search(r'data-colleagues role="status" aria-live="polite"\s+hx-post="/projects/'
                     rf'{shop.project_id}/queries/changed"\s+hx-trigger="every 10s, '
                     r'colleagues:check"', html), html
    assert "colleagues.js" in html


def test_counts_the_shown_rows_another_changed(app, signed_in, shop):
    html = page(signed_in, shop, "sort=query")
    rows = shown(html)
    assert rows.count(",") == 49  # the page's 50 rows
    answer = changed(signed_in, shop, html, rows)
    assert answer.status_code == 200
    assert answer.get_data(as_text=True).strip() == ""

    first, second = ROW.findall(html)[:2]
    with api_of(app, shop) as api:
        records = {q.id: q for q in api.list_queries(shop.project_id, limit=1000).results}
        api.edit_tags(shop.project_id, [
            TagEdit(records[query_id].query, records[query_id].language,
                    records[query_id].country, add=(shop.tags["local"],))
            for query_id, _ in (first, second)])
    text = changed(signed_in, shop, html, rows).get_data(as_text=True)
    assert "2 queries on this page changed — <button" in text
    assert "data-colleagues-show" in text
    # Rows drawn again with their new time (the page's own edit does so) count no more.
    fresh = page(signed_in, shop, "sort=query")
    assert changed(signed_in, shop, fresh, shown(fresh)).get_data(as_text=True).strip() == ""


def test_rows_that_cannot_be_read_are_a_400(signed_in, shop):
    html = page(signed_in, shop)
    answer = changed(signed_in, shop, html, "abc@yesterday")
    assert answer.status_code == 400
    assert "was not understood" in answer.get_data(as_text=True)


def test_without_the_extension_nothing_is_asked_or_said(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    html = page(client, shop)
    assert "data-colleagues" not in html
    rows = shown(html)
    assert rows
    answer = changed(client, shop, html, rows)
    assert answer.status_code == 200
    assert answer.get_data(as_text=True).strip() == ""


def test_a_row_known_to_be_gone_is_not_counted_again(signed_in, shop):
    """After the page's own job, the page sends back what it took in: "id@" for a row the
    service no longer has. Such a row is not a change; one the service has is."""
    html = page(signed_in, shop, "sort=query")
    (query_id, _when), *_ = ROW.findall(html)
    gone = "3c1d5e2f-8a47-4b9c-a0e6-7f2b1d4c9e53@"
    assert changed(signed_in, shop, html, gone).get_data(as_text=True).strip() == ""
    text = changed(signed_in, shop, html, f"{gone},{query_id}@").get_data(as_text=True)
    assert "1 query on this page changed" in text
    assert f'data-changed="{query_id}@20' in text
