"""X-Tagdesk-Actor, the label a caller gives to the change it makes (an extension), follows
the rule of characters names follow (weblib/tag_names.py): a label that reorders the text
shown around it, or shows nothing, is a 400 with a sentence, and nothing is changed or
recorded. Over real HTTP on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from sqlalchemy import select

from service.store.db import session_scope
from service.store.models import OrgEvent
from tests.support.api import Api

ROW = ("running shoes", "en", "US")
# An override that shows "Ann" then "exe.png" reversed: the log would read "Annexe.png".
OVERRIDE = "Ann\u202egnp.exe"
REFUSED = [OVERRIDE, "Ann\u2066x\u2069", "\u202aAnn", "\u200b\u200d"]


def tags_only(api: Api, actor: str):
    item = {"query": ROW[0], "language": ROW[1], "country": ROW[2], "tagIds": []}
    return api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [item]},
                    headers={"X-Tagdesk-Actor": quote(actor, safe="")})


def sources(api: Api) -> dict:
    found = api.queries(limit=10).json()["results"]
    return {record["query"]: record.get("tagSources", {}) for record in found}


@pytest.mark.parametrize("actor", REFUSED)
def test_an_actor_with_bidi_controls_or_nothing_visible_is_a_400_and_tags_nothing(
        api, world, actor):
    world.add_queries([(*ROW, [])])
    item = {"query": ROW[0], "language": ROW[1], "country": ROW[2],
            "tagIds": [world.tags["sale"]]}
    refused = api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [item]},
                       headers={"X-Tagdesk-Actor": quote(actor, safe="")})
    assert refused.status_code == 400, refused.text
    error = refused.json()
    assert error["message"][0].startswith("'X-Tagdesk-Actor' must"), error
    assert sources(api) == {ROW[0]: {}}
    assert api.queries(limit=1).json()["results"][0]["tags"] == []


def test_the_actor_is_refused_where_a_view_name_is_and_in_the_same_words(api, world):
    world.add_queries([(*ROW, [])])
    view = api.post("/api/views/create", {"name": OVERRIDE, "filters": {}})
    actor = tags_only(api, OVERRIDE)
    assert view.status_code == actor.status_code == 400
    view_words = view.json()["message"][0].split(": ", 1)[1]
    assert actor.json()["message"] == [f"'X-Tagdesk-Actor' {view_words}"]


def test_a_rule_made_with_such_an_actor_records_no_label(api, world, service_app):
    """The activity log's label of a change through the API is left out when it breaks the
    rule (the change is made: the key that sent it is what the log names)."""
    made = api.post("/api/rules/create", {"name": "Brand it", "condition": {},
                                          "tagIds": [world.tags["brand"]]},
                    **{"X-Tagdesk-Actor": quote(OVERRIDE, safe="")})
    assert made.status_code == 201, made.text
    with session_scope(service_app) as session:
        labels = session.scalars(select(OrgEvent.actor_name).where(
            OrgEvent.action == "rule.created")).all()
    assert labels == [None]


def test_an_actor_of_letters_marks_and_spaces_is_kept_trimmed(api, world):
    world.add_queries([(*ROW, [])])
    item = {"query": ROW[0], "language": ROW[1], "country": ROW[2],
            "tagIds": [world.tags["sale"]]}
    actor = "  Jürgen Müller-Lüdenscheidt (عربي) "
    done = api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [item]},
                    headers={"X-Tagdesk-Actor": quote(actor, safe="")})
    assert done.status_code == 200, done.text
    assert sources(api)[ROW[0]][str(world.tags["sale"])]["addedBy"] == actor.strip()
