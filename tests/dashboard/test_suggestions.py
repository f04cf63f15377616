"""Suggested tags on the queries page, through the real service: the Tags picker's Suggested
group and `suggested=<tag>` in the address, the status line, the chips with Accept and
Reject, and an accepted suggestion's origin; none of it against a service without them."""

from __future__ import annotations

import dataclasses
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
    group = page[page.index('<legend class="picker__group-label">Suggested</legend>'):]
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
    assert "suggested tags (this service suggests no tags)" in page
    plain = page_of(client, shop)
    assert "Refresh suggestions" not in plain and "data-suggestion-accept" not in plain
    assert client.post(f"/projects/{shop.project_id}/queries/suggestions/refresh",
                       headers=csrf(client, shop)).status_code == 404


def csrf(client, shop) -> dict:
    page = page_of(client, shop)
    token = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    return {"X-CSRFToken": token, "HX-Request": "true"}


def first_suggestion(page: str) -> tuple[str, str, str]:
    """(query id, tag id, query) of the first row's first suggestion."""
    row = re.search(r'hx-vals=\'\{"query_id": "([^"]+)"\}\'>\s*<li class="suggestion" '
                    r'hx-vals=\'\{"tag_id": (\d+)\}\'', page)
    assert row, "no suggested tag on the page"
    query = re.search(r'aria-label="Accept \w+ for ([^"]+)"', page[row.end():]).group(1)
    return row.group(1), row.group(2), query


def test_rows_show_their_suggestions_with_accept_and_reject_and_the_status(signed_in,
                                                                           learned):
    page = page_of(signed_in, learned, "?untagged=1&q=shoes")
    assert re.search(r'aria-label="Accept brand for \w[^"]* shoes[^"]*"', page)
    assert re.search(r'aria-label="Reject brand for \w[^"]* shoes[^"]*"', page)
    assert re.search(r'class="suggestion__words" id="[^"]+">Suggested: '
                     r'(very likely|likely|possible), \d+ % confident</span>', page)
    assert re.search(r"Suggestions learned from [\d,]+ tagged queries (just now|\d+ \w+ ago)",
                     page)
    assert "Refresh suggestions</button>" in page
    assert "<kbd>Shift</kbd><kbd>A</kbd>" in page


def test_accept_tags_the_query_and_its_chip_says_it_was_a_suggestion(auth, learned):
    auth.sign_in(display_name="Ana")
    signed_in = auth.client
    page = page_of(signed_in, learned, "?untagged=1&q=shoes")
    query_id, tag_id, query = first_suggestion(page)
    answer = signed_in.post(f"/projects/{learned.project_id}/queries/suggestions/accept",
                            data={"query_id": query_id, "tag_id": tag_id},
                            headers=csrf(signed_in, learned))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert f"Accepted ‘brand’ for “{query}”." in answer.get_data(as_text=True)
    assert "tagdesk:resultsStale" in answer.headers["HX-Trigger"]
    shown = page_of(signed_in, learned, f"?q={query}&tag=brand")
    assert re.search(r'title="Suggested, accepted by Ana on \d+ \w+ \d{4}, [\d:]+ UTC"', shown)


def test_reject_takes_the_suggestion_away_for_good(signed_in, learned):
    page = page_of(signed_in, learned, "?untagged=1&q=shoes")
    query_id, tag_id, query = first_suggestion(page)
    answer = signed_in.post(f"/projects/{learned.project_id}/queries/suggestions/reject",
                            data={"query_id": query_id, "tag_id": tag_id},
                            headers=csrf(signed_in, learned))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert "will not be suggested for that query again" in answer.get_data(as_text=True)
    again = page_of(signed_in, learned, f"?q={query}")
    assert f'aria-label="Accept brand for {query}"' not in again


def test_refresh_answers_the_status_line(signed_in, learned):
    answer = signed_in.post(f"/projects/{learned.project_id}/queries/suggestions/refresh",
                            headers=csrf(signed_in, learned))
    assert answer.status_code == 200
    assert 'id="suggestions-status"' in answer.get_data(as_text=True)


def test_accept_all_is_a_job_with_undo_and_activity_says_it(signed_in, learned, app):
    from tests.dashboard.bulk_helpers import latest, wait_for

    page = page_of(signed_in, learned, "?suggested=brand")
    found = re.search(r"Accept all ([\d,]+) suggestions of “brand”", page)
    assert found, "no Accept all"
    total = int(found.group(1).replace(",", ""))
    suggested = set(re.findall(r'aria-label="Select ([^"]+)"', page)) - {"all on this page"}
    answer = signed_in.post(f"/projects/{learned.project_id}/queries/suggestions/accept-all",
                            data={"suggested": "brand", "tag_id": str(learned.tags["brand"])},
                            headers=csrf(signed_in, learned))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert "Accept all" in answer.get_data(as_text=True)
    edit = wait_for(app, latest(app, learned).id)
    assert edit.state == "done" and edit.changed == total
    # Nothing is suggested 'brand' any more: the view is empty, and offers no Accept all.
    assert "suggestions of “brand”" not in page_of(signed_in, learned, "?suggested=brand")
    tagged = page_of(signed_in, learned, "?tag=brand&q=shoes")
    assert all(f'aria-label="Select {query}"' in tagged for query in suggested)
    activity = signed_in.get(f"/projects/{learned.project_id}/activity").get_data(as_text=True)
    assert f"Accepted {total:,} suggestions of ‘brand’" in activity

    undone = signed_in.post(f"/projects/{learned.project_id}/edits/{edit.id}/undo",
                            headers=csrf(signed_in, learned))
    assert undone.status_code in (200, 202), undone.get_data(as_text=True)
    undo = wait_for(app, latest(app, learned).id)
    assert undo.kind == "undo" and undo.state == "done" and undo.changed == total
    after = page_of(signed_in, learned, "?tag=brand&q=shoes")
    assert not any(f'aria-label="Select {query}"' in after for query in suggested)


def test_the_status_line_says_what_stands_in_the_way():
    from datetime import UTC, datetime, timedelta

    from dashboard.suggestions import status_sentence
    from queryapi import SuggestionStatus

    few = SuggestionStatus("too few tags", None, None, None, None, (), needed=7)
    assert status_sentence(few) == ("No suggestions yet: a tag needs 7 more tagged queries "
                                    "before it is suggested.")
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    ready = SuggestionStatus("ready", now - timedelta(minutes=2), 4512, 0.962, 0.97, ((1, 3),))
    assert status_sentence(ready, now) == ("Suggestions learned from 4,512 tagged queries "
                                           "2 minutes ago · 96 % right on queries held back")
    # Learned, but no confidence was right often enough on the queries held back: no tag is
    # suggested, and the line said only "learned from 298 tagged queries".
    unsure = SuggestionStatus("ready", now - timedelta(minutes=2), 298, None, None,
                              ((1, 0), (2, 0)))
    assert status_sentence(unsure, now) == (
        "Suggestions learned from 298 tagged queries 2 minutes ago · none shown yet: on "
        "queries held back they were not right often enough; tagging more queries helps")
    broken = "Something went wrong on our side while learning. It has been noted."
    failed = SuggestionStatus("learning", None, None, None, None, (), problem=broken)
    assert status_sentence(failed) == f"No suggestions yet. {broken}"
    assert status_sentence(dataclasses.replace(ready, problem=broken), now) == (
        "Suggestions learned from 4,512 tagged queries 2 minutes ago · 96 % right on queries "
        f"held back. {broken}")


def test_one_accepted_suggestion_has_undo_and_activity_says_it(auth, learned):
    auth.sign_in(display_name="Ana")
    signed_in = auth.client
    page = page_of(signed_in, learned, "?untagged=1&q=shoes")
    query_id, tag_id, query = first_suggestion(page)
    answer = signed_in.post(f"/projects/{learned.project_id}/queries/suggestions/accept",
                            data={"query_id": query_id, "tag_id": tag_id},
                            headers=csrf(signed_in, learned))
    said = answer.get_data(as_text=True)
    assert f"Accepted ‘brand’ for “{query}”." in said
    undo_url = re.search(r'hx-post="([^"]+/undo)"', said)
    assert undo_url, said
    # The keys stay on the rows (a a a): this sentence does not take the focus to its Undo.
    assert "data-keep-focus" in said
    activity = signed_in.get(f"/projects/{learned.project_id}/activity").get_data(as_text=True)
    assert f"Accepted ‘brand’ for “{query}”" in activity
    assert f'aria-label="Select {query}"' in page_of(signed_in, learned, f"?q={query}&tag=brand")

    undone = signed_in.post(undo_url.group(1), data={"context": "notice"},
                            headers=csrf(signed_in, learned))
    assert undone.status_code == 200, undone.get_data(as_text=True)
    assert f'aria-label="Select {query}"' not in page_of(signed_in, learned,
                                                          f"?q={query}&tag=brand")
