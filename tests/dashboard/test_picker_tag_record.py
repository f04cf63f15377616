"""A tag created from the dashboard's picker is on the organization's record (the settings'
Activity): "Tag created", through the API, with the key and the name the person gave at
sign-in as the caller's label. The picker's route runs against the embedded service; the
settings' Activity page is read over real HTTP on the same app."""

from __future__ import annotations

import re

from tests.dashboard.bulk_helpers import page, post
from tests.support.imports import Administrator
from tests.support.servers import LiveServer

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


def test_a_tag_made_in_the_picker_is_on_the_record(app, auth, shop):
    auth.sign_in(display_name="Ana Lima")
    html = page(auth.client, shop, "sort=query")
    made = post(auth.client, f"/projects/{shop.project_id}/bulk/tags",
                {"action": "add", "name": "Winter Sale"}, html)
    assert made.status_code == 200, made.get_data(as_text=True)[:500]
    shop.with_administrator(EMAIL, PASSWORD)
    server = LiveServer(app).start()
    try:
        activity = Administrator(server.url, EMAIL, PASSWORD).get("/settings/activity").text
    finally:
        server.stop()
    row = re.search(r'<tr role="row">.*?Tag created.*?</tr>', activity, re.S)
    assert row, activity
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(0)))
    assert "Winter Sale" in text and "Through the API." in text, text
    assert f"…{shop.key[-4:]}" in text and "Caller's label: Ana Lima" in text, text
