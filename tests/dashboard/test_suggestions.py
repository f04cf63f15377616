"""Suggested tags on the queries page, through the real service: the Tags picker's Suggested
group and `suggested=<tag>` in the address, the status line, the chips with Accept and
Reject, and an accepted suggestion's origin; none of it against a service without them."""

from __future__ import annotations

import re

import pytest

from service.learning.learner import of_app
from tests.support.dashboard import AuthActions

SHOES = ["running", "trail", "leather", "kids", "hiking", "walking", "tennis", "soccer",
         "winter", "summer", "canvas", "suede", "slip on", "lace up"]
BAGS = ["travel", "laptop", "tote", "school", "gym", "beach", "weekend", "shopping",
        "diaper", "camera", "duffel", "messenger", "sports", "evening"]


def rows() -> list[tuple]:
    """Shoes tagged brand and bags tagged sale, twelve of each; the others untagged."""
    found = []
    for n, word in enumerate(SHOES):
        found.append((f"{word} shoes", "en", "US", ["brand"] if n < 12 else []))
        found.append((f"{word} shoes offer", "en", "GB", []))
    for n, word in enumerate(BAGS):
        found.append((f"{word} bag", "en", "US", ["sale"] if n < 12 else []))
        found.append((f"{word} bags deal", "en", "GB", []))
    return found


@pytest.fixture
def learned(app, shop):
    shop.add_queries(rows())
    learner = of_app(app.extensions["tagdesk_embedded"].service_app)
    assert learner.refresh(shop.project_id)
    learner.wait(120)
    return shop


def page_of(client, shop, query="") -> str:
    response = client.get(f"/projects/{shop.project_id}/queries{query}")
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    return response.get_data(as_text=True)


def test_the_tags_picker_has_a_suggested_group_that_filters(signed_in, learned):
    page = page_of(signed_in, learned)
    group = page[page.index('<legend class="picker__group-title">Suggested</legend>'):]
    group = group[:group.index("</fieldset>")]
    assert 'name="suggested" value="brand"' in group
    assert 'aria-label="Suggested brand"' in group
    filtered = page_of(signed_in, learned, "?suggested=brand")
    assert 'class="filter-chip__kind">Suggested</span>' in filtered
    assert 'name="suggested" value="brand" aria-label="Suggested brand" checked' in filtered
    shown = set(re.findall(r'aria-label="Select ([^"]+)"', filtered)) - {"all on this page"}
    assert shown and all("shoe" in text for text in shown)
    counts = signed_in.get(f"/projects/{learned.project_id}/queries/counts?suggested=brand")
    assert counts.status_code == 200
    assert counts.get_json()["suggested"]["brand"] == str(len(shown))


def test_a_suggested_name_of_no_tag_is_named_and_left_out(signed_in, learned):
    page = page_of(signed_in, learned, "?suggested=nosuch")
    assert "suggested tag “nosuch” (no such tag in this project)" in page


def test_without_the_extension_there_is_no_suggested_group(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    page = page_of(client, shop, "?suggested=brand")
    assert 'name="suggested"' not in page
