"""The name given at sign-in travels with every change as X-Tagdesk-Actor, which the service
refuses when it holds what a name may not (bidi controls, nothing visible): the dashboard keeps
such a name as a name may hold it, so nobody's edits are stopped by it. Against the dashboard
with its service over HTTP."""

from __future__ import annotations

import pytest

from tests.dashboard.bulk_helpers import keys_in, page, post, tag_names_by_query


@pytest.mark.parametrize("given, kept", [
    ("Ann\u202egnp.exe", "Anngnp.exe"),
    ("\u2066Ana\u2069 Lima", "Ana Lima"),
    ("\u200b\u202e", ""),
])
def test_a_name_with_bidi_controls_or_nothing_visible_still_tags(app, auth, shop, given, kept):
    auth.sign_in(display_name=given)
    client = auth.client
    html = page(client, shop, "q=zapatillas")
    keys = keys_in(html)
    done = post(client, f"/projects/{shop.project_id}/bulk", {
        "action": "add", "apply_tag": shop.tags["question"],
        "selected": [keys["zapatillas running"]]}, html)
    assert done.status_code == 200, done.get_data(as_text=True)[:500]
    assert "question" in tag_names_by_query(app, shop)[("zapatillas running", "es", "ES")]
    html = page(client, shop, "q=zapatillas")
    if kept:
        assert f"Added by “{kept}” (the caller&#39;s label)" in html
    else:
        assert "Added on " in html
    assert "\u202e" not in html and "\u2066" not in html
