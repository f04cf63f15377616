"""The settings activity log never shows an API caller's label (X-Tagdesk-Actor) as if it
were a person signed in: a change through the API names its key first, and the label as the
caller's, even when the label looks like an administrator's email. Over real HTTP on a live
service, SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from service.org import accounts, admin
from tests.support.api import Api
from tests.support.security import SETTINGS_PASSWORD, Visitor

EMAIL = "ann.admin@example.com"


def who_cells(page: str) -> list[str]:
    """The activity table's "Who" cells, newest first, as text."""
    cells = re.findall(r'class="col-who">(.*?)</td>', page, re.S)
    return [html.unescape(re.sub(r"<br>", " | ", re.sub(r"<(?!br>)[^>]+>", "", cell)))
            for cell in cells]


def test_a_label_is_shown_as_the_callers_beside_the_key_never_as_a_person(
        live_service, world):
    key = world.run(lambda s: admin.create_key(s, world.org_id, "tdk", name="Staff laptops"))
    world.run(lambda s: accounts.create_user(s, world.org_id, EMAIL, SETTINGS_PASSWORD))
    api = Api(live_service.url, key, world.project_id)
    # A label that reads like the administrator's email, then one like a person's name.
    for name, label in [("Brand it", EMAIL), ("Sale it", "Ana Núñez")]:
        made = api.post("/api/rules/create",
                        {"name": name, "condition": {}, "tagIds": [world.tags["brand"]]},
                        **{"X-Tagdesk-Actor": quote(label, safe="")})
        assert made.status_code == 201, made.text
    settings = Visitor(live_service.url)
    assert settings.settings_sign_in(EMAIL).status_code == 303
    renamed = settings.post(f"/settings/projects/{world.project_id}/rename", data={
        "csrf_token": settings.token(f"/settings/projects/{world.project_id}"),
        "name": "Shop search (EU)"})
    assert renamed.status_code == 303, renamed.text[:300]

    cells = who_cells(settings.get("/settings/activity").text)
    masked = f"…{key[-4:]}"
    assert cells[0] == EMAIL  # the person signed in: the email alone
    ana, ann = cells[1], cells[2]
    assert ana.startswith("Key “Staff laptops” ") and masked in ana, ana
    assert ana.endswith(" | Caller's label: Ana Núñez"), ana
    assert ann.startswith("Key “Staff laptops” ") and ann.endswith(f"Caller's label: {EMAIL}")
    assert ann != EMAIL and not ann.startswith(EMAIL)
