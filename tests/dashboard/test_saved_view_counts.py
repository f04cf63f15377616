"""A saved view's count is never older than the last change this browser made: after a job
that ended in the background (no page asked for its progress since), after its Undo, after an
in-page edit — each time the queries page is drawn, and each time the page asks for the
views' counts again (on `tagdesk:bulkDone` and `tagdesk:resultsStale`). The count stands
apart from the name, for screen readers too."""

from __future__ import annotations

import re

from tests.dashboard.bulk_helpers import api_of, bulk_url, page, plan_of, post, wait_for
from tests.support.dashboard import FILLER, SAMPLE

VIEW = "untagged=1&lang=en"
UNTAGGED_EN = sum(1 for _q, lang, _c, tags in SAMPLE if lang == "en" and not tags) + FILLER
NAME = "EN – noch offen"


def views_url(world) -> str:
    return f"/projects/{world.project_id}/views"


def shown_count(html: str, name: str = NAME) -> int:
    """The count the page shows beside the view's name (its badge)."""
    link = re.search(r'<a class="saved-view__link"[^>]*>(.*?)</a>', html, re.S)
    assert link, html[:300]
    assert f'<span class="saved-view__name">{name}<span class="visually-hidden">, </span></span>' \
        in link.group(1), link.group(1)
    count = re.search(r'class="saved-view__count"[^>]*>(.*?)</span>\s*$', link.group(1), re.S)
    number = re.sub(r"<span class=\"visually-hidden\">[^<]*</span>", "", count.group(1))
    return int(number.replace(",", "").strip())


def refreshed_counts(client, world, html: str) -> dict[str, int]:
    """What the page gets when it asks for the views' counts again: each view's count,
    swapped into its place by id."""
    url = re.search(r'id="saved-views"[^>]*hx-get="([^"]+)"', html).group(1)
    body = client.get(url, headers={"HX-Request": "true"}).get_data(as_text=True)
    found = {}
    for place, inside in re.findall(r'<span id="(view-count-\d+)"[^>]*hx-swap-oob="true"[^>]*>'
                                    r'(.*?)</span>\s*(?=<span id="view-count|$)', body, re.S):
        number = re.sub(r"<span class=\"visually-hidden\">[^<]*</span>", "", inside)
        found[place] = int(number.replace(",", "").strip())
    return found


def saved(client, world) -> str:
    html = page(client, world, VIEW)
    answer = post(client, views_url(world), {"name": NAME, "view": "?" + VIEW}, html)
    assert answer.status_code == 200
    return page(client, world, VIEW)


def job_over_the_view(app, client, world, html: str):
    """Select all matching, add "local", confirm: a job; waited for in the jobs store, as a
    page that was closed or reloaded would (no progress asked for)."""
    asked = post(client, bulk_url(world), {"action": "add", "apply_tag": str(
        world.tags["local"]), "scope": "all", "untagged": "1", "lang": "en"}, html)
    post(client, f"/projects/{world.project_id}/bulk/confirm",
         {"plan": plan_of(asked.get_data(as_text=True))}, html)
    edit = app.extensions["tagdesk_jobs"].for_project(world.project_id, limit=1)[0]
    edit = wait_for(app, edit.id)
    assert edit.state == "done"
    return edit


def test_a_job_that_ended_in_the_background_shows_in_the_next_page(app, signed_in, shop):
    html = saved(signed_in, shop)
    assert shown_count(html) == UNTAGGED_EN
    job_over_the_view(app, signed_in, shop, html)
    html = page(signed_in, shop, VIEW)
    assert "No queries match" in html
    assert shown_count(html) == 0


def test_the_counts_asked_again_after_a_job_and_its_undo_are_the_apis(app, signed_in, shop):
    html = saved(signed_in, shop)
    edit = job_over_the_view(app, signed_in, shop, html)
    with api_of(app, shop) as api:
        view = next(item for item in api.list_views(shop.project_id) if item.name == NAME)
    assert refreshed_counts(signed_in, shop, html) == {f"view-count-{view.id}": 0}
    # Undo (the job's panel): the view's queries are untagged again.
    undone = post(signed_in, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                  {"context": "panel"}, html)
    assert undone.status_code == 200
    assert refreshed_counts(signed_in, shop, html) == {f"view-count-{view.id}": UNTAGGED_EN}
    assert shown_count(page(signed_in, shop, VIEW)) == UNTAGGED_EN


def test_the_page_asks_for_the_counts_after_every_edit_job_and_undo(signed_in, shop):
    html = saved(signed_in, shop)
    section = re.search(r'<section id="saved-views"[^>]*>', html).group(0)
    trigger = re.search(r'hx-trigger="([^"]+)"', section).group(1)
    # After a refresh (an accept, a job's end), once a run of them pauses for a second.
    assert {part.strip() for part in trigger.split(",")} == {
        "tagdesk:bulkDone from:body", "tagdesk:resultsStale from:body delay:1s"}
    # The counts alone come back: a name being typed in the section stays.
    assert 'hx-swap="none"' in section


def test_the_count_is_apart_from_the_name_for_screen_readers_too(signed_in, shop):
    html = saved(signed_in, shop)
    link = re.search(r'<a class="saved-view__link"[^>]*>(.*?)</a>', html, re.S).group(1)
    # Read out as "EN – noch offen, 1,234 queries"; seen as the name and a badge.
    spoken = re.sub(r"<[^>]+>", "", link)
    assert " ".join(spoken.split()) == f"{NAME}, {UNTAGGED_EN:,} queries"
