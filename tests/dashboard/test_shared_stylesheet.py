"""The base stylesheet both web UIs share (weblib/static/base.css): linked before each UI's own
stylesheet, served like a static file of each app — under /static for the dashboard, under
/settings/static for the settings area, which embedded mode routes to the service."""

from __future__ import annotations

import re

import pytest

STYLESHEETS = re.compile(r'<link rel="stylesheet" href="([^"]+)">')


@pytest.mark.parametrize("page,own", [("/signin", "/static/app.css?v="),
                                      ("/settings/signin", "/settings/static/settings.css?v=")])
def test_each_ui_links_the_base_stylesheet_first_and_it_is_served(client, page, own):
    html = client.get(page).get_data(as_text=True)
    base, mine = STYLESHEETS.findall(html)
    prefix = "/settings" if page.startswith("/settings") else ""
    assert re.fullmatch(prefix + r"/static/weblib/base\.css\?v=[0-9a-f]{12}", base)
    assert mine.startswith(own)

    css = client.get(base)
    assert css.status_code == 200 and css.mimetype == "text/css"
    assert "--accent:" in css.get_data(as_text=True)
    assert "no-store" not in css.headers.get("Cache-Control", "")
    assert "Set-Cookie" not in css.headers
    assert css.headers["X-Content-Type-Options"] == "nosniff"


def test_the_dashboard_keeps_the_base_stylesheet_long(client):
    html = client.get("/signin").get_data(as_text=True)
    base = STYLESHEETS.findall(html)[0]
    assert "max-age=31536000" in client.get(base).headers["Cache-Control"]
