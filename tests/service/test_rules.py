"""Rules — POST /api/rules/list, preview, create, update, pause, delete, an extension of the
reference API — over real HTTP, on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL: kept and
listed with live counts (matching, carrying), previewed, changed, paused, deleted; bad bodies,
tags of other projects, folded duplicate names, the limit per project, other organizations and
projects, scoped keys; a deleted tag leaves its rules (the last one pauses the rule); the
activity log; the OpenAPI document; and migration 0028 forward and back."""

from __future__ import annotations

import uuid

import pytest
import requests
from sqlalchemy import inspect, select, text

from service.api import rules
from service.store.models import OrgEvent, Rule
from tests.service.migrating import (
    engine_of_its_own,
    ids_after_a_delete,
    migrate,
    model_differences_after,
)
from tests.support.answers import assert_an_extension, assert_bad_request, assert_theirs_not_found
from tests.support.api import Api, by_rule

LIST, PREVIEW, CREATE, UPDATE, PAUSE, DELETE = (
    f"/api/rules/{name}" for name in ("list", "preview", "create", "update", "pause", "delete"))


def listed(api: Api) -> list[dict]:
    response = api.post(LIST, {})
    assert response.status_code == 200, response.text
    return response.json()["results"]


def create(api: Api, name: str, condition: dict, tag_ids: list):
    return api.post(CREATE, {"name": name, "condition": condition, "tagIds": tag_ids})


def stored(world) -> list[str]:
    return world.run(lambda session: list(session.scalars(select(Rule.name).order_by(Rule.id))))


# --- kept, listed, counted ------------------------------------------------------------------


def test_a_rule_is_created_and_listed_with_its_counts(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    response = create(api, "German shoes", {"languages": ["de"], "query": None,
                                            "tagIds": [], "untagged": False}, [brand])
    assert response.status_code == 201, response.text
    rule = response.json()
    assert rule == {
        "id": rule["id"], "project": seeded.project_id, "name": "German shoes",
        # Kept as validated, without the fields that filter nothing.
        "condition": {"languages": ["de"]}, "tagIds": [brand], "paused": False,
        "pausedReason": None, "matching": 2, "carrying": 1,
        "createdAt": rule["createdAt"], "updatedAt": rule["createdAt"]}
    assert isinstance(rule["id"], int) and rule["createdAt"].endswith("Z")
    both = create(api, "all shoes", {"query": "SCHUH"}, [sale, brand, sale]).json()
    assert both["tagIds"] == [sale, brand]  # each tag once
    assert (both["matching"], both["carrying"]) == (2, 0)
    assert [r["name"] for r in listed(api)] == ["all shoes", "German shoes"]
    assert listed(api)[1] == rule


def test_counts_are_live(api, seeded):
    rule = create(api, "untagged get sale", {"untagged": True}, [seeded.tags["sale"]]).json()
    assert (rule["matching"], rule["carrying"]) == (2, 0)
    api.set_tags([{"query": "laufschuhe", "language": "de", "country": "DE",
                   "tagIds": [seeded.tags["brand"]]}])
    again = listed(api)[0]
    assert (again["matching"], again["carrying"]) == (1, 0)
    # A query that enters untagged gets the rule's tag: it is untagged no more.
    seeded.add_queries([("boots", "en", "US", [])])
    assert (listed(api)[0]["matching"], listed(api)[0]["carrying"]) == (1, 0)
    boots = api.queries(query="boots").json()["results"][0]
    assert boots["tags"] == [seeded.tags["sale"]]
    assert by_rule(boots) == {str(seeded.tags["sale"]): rule["id"]}
    branded = create(api, "branded", {"tagNames": ["brand"]}, [seeded.tags["brand"]]).json()
    assert (branded["matching"], branded["carrying"]) == (3, 3)


def test_a_preview_counts_what_lacks_the_tags_and_shows_a_sample(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    response = api.post(PREVIEW, {"condition": {"query": "s"}, "tagIds": [brand, sale]})
    assert response.status_code == 200, response.text
    preview = response.json()
    assert (preview["matching"], preview["lacking"]) == (4, 3)
    assert sorted(q["query"] for q in preview["sample"]) == [
        "laufschuhe", "schuhe damen", "shoe store"]
    # The records of queries/list, field for field.
    page = {q["id"]: q for q in api.queries(limit=10).json()["results"]}
    for record in preview["sample"]:
        assert record == page[record["id"]]
    nothing = api.post(PREVIEW, {"condition": {"languages": ["fr"]}, "tagIds": [brand]})
    assert nothing.json() == {"matching": 0, "lacking": 0, "sample": []}
    assert stored(seeded) == []  # a preview keeps nothing


def test_a_preview_samples_at_most_twenty(api, world):
    world.add_queries([(f"shoe {i}", "en", "US", []) for i in range(30)])
    preview = api.post(PREVIEW, {"condition": {}, "tagIds": [world.tags["sale"]]}).json()
    assert (preview["matching"], preview["lacking"], len(preview["sample"])) == (30, 30, 20)


def test_a_rule_is_renamed_given_another_condition_and_tags(api, seeded):
    rule = create(api, "a", {"languages": ["de"]}, [seeded.tags["brand"]]).json()
    changed = api.post(UPDATE, {"id": rule["id"], "name": "b", "condition": {"query": "shoe"},
                                "tagIds": [seeded.tags["sale"]]})
    assert changed.status_code == 200, changed.text
    after = changed.json()
    assert (after["name"], after["condition"], after["tagIds"]) == (
        "b", {"query": "shoe"}, [seeded.tags["sale"]])
    assert (after["matching"], after["carrying"]) == (2, 1)
    assert after["createdAt"] == rule["createdAt"]
    assert after["updatedAt"] >= rule["updatedAt"]
    assert listed(api) == [after]
    same = api.post(UPDATE, {"id": rule["id"]}).json()
    assert same == after  # nothing sent, nothing changed


def test_a_rule_is_paused_resumed_and_deleted_for_good(api, seeded):
    rule = create(api, "a", {}, [seeded.tags["brand"]]).json()
    paused = api.post(PAUSE, {"id": rule["id"], "paused": True})
    assert paused.status_code == 200, paused.text
    assert (paused.json()["paused"], paused.json()["pausedReason"]) == (True, None)
    assert api.post(PAUSE, {"id": rule["id"], "paused": False}).json()["paused"] is False
    deleted = api.post(DELETE, {"id": rule["id"]})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": rule["id"]}
    for path, body in ((DELETE, {"id": rule["id"]}), (PAUSE, {"id": rule["id"], "paused": True}),
                       (UPDATE, {"id": rule["id"], "name": "x"})):
        gone = api.post(path, body)
        assert gone.status_code == 404 and gone.json()["message"] == "Rule not found."
    again = create(api, "a", {}, [seeded.tags["brand"]]).json()
    assert again["id"] > rule["id"]  # ids are never given again


def test_every_change_is_in_the_activity_log(api, seeded):
    rule = create(api, "Brand it", {}, [seeded.tags["brand"]]).json()
    api.post(UPDATE, {"id": rule["id"], "name": "Brand them"})
    api.post(PAUSE, {"id": rule["id"], "paused": True})
    api.post(PAUSE, {"id": rule["id"], "paused": True})  # no change, no entry
    api.post(PAUSE, {"id": rule["id"], "paused": False})
    api.post(DELETE, {"id": rule["id"]})
    events = seeded.run(lambda session: session.execute(
        select(OrgEvent.action, OrgEvent.subject, OrgEvent.org_id).where(
            OrgEvent.action.like("rule.%")).order_by(OrgEvent.id)).all())
    assert [(action, subject) for action, subject, _org in events] == [
        ("rule.created", "Brand it"), ("rule.changed", "Brand them"),
        ("rule.paused", "Brand them"), ("rule.resumed", "Brand them"),
        ("rule.deleted", "Brand them")]
    assert {org for _action, _subject, org in events} == {seeded.org_id}
    details = seeded.run(lambda session: set(session.scalars(select(OrgEvent.detail).where(
        OrgEvent.action.like("rule.%")))))
    assert details == {"In “Shop search”, through the API."}


# --- a deleted tag --------------------------------------------------------------------------


def test_a_deleted_tag_leaves_its_rules_and_the_last_one_pauses_the_rule(api, world):
    from service.engine.deleting import delete_tag

    brand, sale = world.tags["brand"], world.tags["sale"]
    both = create(api, "both", {}, [brand, sale]).json()
    only = create(api, "only sale", {}, [sale]).json()
    world.run(lambda session: delete_tag(session, world.project_id, sale))
    after = {r["name"]: r for r in listed(api)}
    assert (after["both"]["tagIds"], after["both"]["paused"]) == ([brand], False)
    assert after["only sale"]["tagIds"] == []
    assert after["only sale"]["paused"] is True
    assert after["only sale"]["pausedReason"] == "Its last tag, “sale”, was deleted."
    assert after["only sale"]["updatedAt"] >= only["updatedAt"]
    refused = api.post(PAUSE, {"id": only["id"], "paused": False})
    assert refused.status_code == 400
    # Given a tag again, it runs again.
    given = api.post(UPDATE, {"id": only["id"], "tagIds": [brand]}).json()
    assert (given["paused"], given["pausedReason"], given["tagIds"]) == (False, None, [brand])
    assert both["id"] != only["id"]


# --- refused --------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "message"), [
    ({}, ["'condition' is required.", "'tagIds' is required.", "'name' is required."]),
    ({"name": "x", "condition": {}, "tagIds": []},
     ["'tagIds': must name at least one tag."]),
    ({"name": "x", "condition": {}, "tagIds": ["1"]},
     ["'tagIds.0': Input should be a valid integer."]),
    ({"name": " ", "condition": {}, "tagIds": [1]},
     ["'name': must not be empty or only spaces."]),
    ({"name": "x" * 101, "condition": {}, "tagIds": [1]},
     ["'name': must be at most 100 characters."]),
    ({"name": "x", "condition": {"languages": "de"}, "tagIds": [1]},
     ["'condition.languages': Input should be a valid list."]),
    ({"name": "x", "condition": {"color": "red"}, "tagIds": [1]},
     ["Unknown field 'condition.color'."]),
    ({"name": "x", "condition": {}, "tagIds": [1], "paused": True},
     ["Unknown field 'paused'."]),
])
def test_bodies_that_are_not_a_rule_are_400_sentences(api, world, body, message):
    assert_bad_request(api.post(CREATE, body), message)
    assert stored(world) == []


def test_a_condition_is_refused_as_queries_facets_refuses_it(api, world):
    bad = {"untagged": True, "tagIds": [world.tags["brand"]]}
    facets = api.post("/api/queries/facets", bad)
    refused = create(api, "x", bad, [world.tags["brand"]])
    assert facets.status_code == refused.status_code == 400
    assert refused.json()["message"] == facets.json()["message"]
    previewed = api.post(PREVIEW, {"condition": bad, "tagIds": [world.tags["brand"]]})
    assert previewed.status_code == 400
    assert previewed.json()["message"] == facets.json()["message"]
    assert stored(world) == []


def test_tags_of_other_projects_are_named_in_the_refusal(api, world):
    other = Api(api.base_url, world.key, world.other_project_id)
    theirs = other.post("/api/tags/create", {"name": "help"}).json()["id"]
    brand = world.tags["brand"]
    one = create(api, "x", {}, [brand, theirs])
    assert one.status_code == 400
    assert one.json()["message"] == [f"'tagIds': {theirs} is not a tag of this project."]
    two = api.post(PREVIEW, {"condition": {}, "tagIds": [theirs, 2**31 - 1]})
    assert two.status_code == 400
    assert two.json()["message"] == [
        f"'tagIds': {theirs}, {2**31 - 1} are not tags of this project."]
    rule = create(api, "ok", {}, [brand]).json()
    three = api.post(UPDATE, {"id": rule["id"], "tagIds": [theirs]})
    assert three.status_code == 400
    assert listed(api)[0]["tagIds"] == [brand]


@pytest.mark.parametrize(("path", "body", "message"), [
    (UPDATE, {}, ["'id' is required."]),
    (UPDATE, {"id": True}, ["'id': Input should be a valid integer."]),
    (UPDATE, {"id": 1, "name": None}, ["'name': Input should be a valid string."]),
    (UPDATE, {"id": 1, "tagIds": []}, ["'tagIds': must name at least one tag."]),
    (PAUSE, {"id": 1}, ["'paused' is required."]),
    (PAUSE, {"id": 1, "paused": "yes"}, ["'paused': Input should be a valid boolean."]),
    (DELETE, {"id": 1, "name": "x"}, ["Unknown field 'name'."]),
    (LIST, {"page": 1}, ["Unknown field 'page'."]),
])
def test_other_bodies_that_are_not_one_are_400(api, world, path, body, message):
    response = api.post(path, body)
    assert response.status_code == 400
    assert response.json()["message"] == message


# Past a 32-bit integer an id is a 400 (tests/service/test_integer_ranges.py).
@pytest.mark.parametrize("rule_id", [0, -1, -(2**31), 2**31 - 1])
def test_ids_that_name_no_row_are_not_found(api, world, rule_id):
    for path, body in ((UPDATE, {"id": rule_id}), (PAUSE, {"id": rule_id, "paused": True}),
                       (DELETE, {"id": rule_id})):
        response = api.post(path, body)
        assert response.status_code == 404, response.text
        assert response.json()["message"] == "Rule not found."


@pytest.mark.parametrize("name", ["brand it", "BRAND IT", " Brand It "])
def test_a_name_the_project_has_folded_as_tag_names_are_is_a_409(api, world, name):
    tag = [world.tags["brand"]]
    assert create(api, "Brand it", {}, tag).status_code == 201
    response = create(api, name, {}, tag)
    assert response.status_code == 409
    assert response.json()["message"] == 'A rule named "Brand it" already exists in this project.'
    other = create(api, "other", {}, tag).json()
    assert api.post(UPDATE, {"id": other["id"], "name": name}).status_code == 409
    assert stored(world) == ["Brand it", "other"]


def test_a_project_holds_at_most_100_rules(api, world):
    def fill(session):
        session.add_all(Rule(project_id=world.project_id, name=f"r{i}", name_folded=f"r{i}",
                             condition="{}", tag_ids=f"[{world.tags['brand']}]")
                        for i in range(rules.MAX_RULES - 1))

    world.run(fill)
    assert create(api, "the 100th", {}, [world.tags["brand"]]).status_code == 201
    refused = create(api, "the 101st", {}, [world.tags["brand"]])
    assert refused.status_code == 409
    assert refused.json()["message"] == (
        "This project has 100 rules, as many as a project may have; delete one before adding "
        "another.")


# --- who sees what --------------------------------------------------------------------------


def test_another_organizations_rule_is_not_found_like_a_missing_one(api, world):
    _org, their_key, their_project = world.new_org("Rival")
    theirs = Api(api.base_url, their_key, their_project)
    their_tag = theirs.post("/api/tags/create", {"name": "rival"}).json()["id"]
    their_rule = create(theirs, "theirs", {}, [their_tag]).json()
    for path, body in ((UPDATE, {"id": their_rule["id"], "name": "ours now"}),
                       (PAUSE, {"id": their_rule["id"], "paused": True}),
                       (DELETE, {"id": their_rule["id"]})):
        assert_theirs_not_found(api, path, body, "Rule not found.", their_project)
    assert listed(api) == []
    assert [r["name"] for r in listed(theirs)] == ["theirs"]
    assert listed(theirs)[0]["paused"] is False
    absent = api.post(LIST, {}, **{"x-project-id": str(uuid.uuid4())})
    assert absent.status_code == 404 and absent.json()["message"] == "Project not found."


def test_a_project_scoped_key_sees_only_its_projects_rules(api, world):
    create(api, "shop rule", {}, [world.tags["brand"]])
    other = Api(api.base_url, world.key, world.other_project_id)
    help_tag = other.post("/api/tags/create", {"name": "help"}).json()["id"]
    create(other, "help rule", {}, [help_tag])
    scoped = Api(api.base_url, world.new_key(project_id=world.project_id), world.project_id)
    assert [r["name"] for r in listed(scoped)] == ["shop rule"]
    for path, body in ((LIST, {}), (CREATE, {"name": "x", "condition": {}, "tagIds": [help_tag]}),
                       (PREVIEW, {"condition": {}, "tagIds": [help_tag]})):
        refused = scoped.post(path, body, **{"x-project-id": world.other_project_id})
        assert refused.status_code == 404
        assert refused.json()["message"] == "Project not found."
    assert stored(world) == ["shop rule", "help rule"]


@pytest.mark.parametrize(("headers", "status"), [
    ({"x-api-key": ""}, 401), ({"x-project-id": "not-a-uuid"}, 400)])
def test_keys_and_project_headers_are_checked(api, world, headers, status):
    assert api.post(LIST, {}, **headers).status_code == status
    assert create(api, "x", {}, [1]).status_code in (201, 400)  # the body's own check
    assert api.post(CREATE, {"name": "y", "condition": {}, "tagIds": [world.tags["brand"]]},
               **headers).status_code == status


# --- the document ---------------------------------------------------------------------------


def test_the_document_marks_the_rules_as_extensions(live_service):
    served = requests.get(live_service.url + "/api/openapi.json", timeout=10).json()
    for path, operation_id, status in ((LIST, "listRules", "200"),
                                       (PREVIEW, "previewRule", "200"),
                                       (CREATE, "createRule", "201"),
                                       (UPDATE, "updateRule", "200"),
                                       (PAUSE, "pauseRule", "200"),
                                       (DELETE, "deleteRule", "200")):
        assert_an_extension(served, path, operation_id, status, "400")


# --- migration 0028 -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0028_adds_rules_and_the_links_rule_and_takes_them_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_rules_") as engine:
        differences = model_differences_after(engine, "0027", "0028")
        assert [d for d in differences if ("rules" in repr(d) or "rule_id" in repr(d)
                or "tagged_by_rules" in repr(d)) and "rule_removals" not in repr(d)
                and "ix_query_tags_rule" not in repr(d)] == []
        insert = text("INSERT INTO rules (project_id, name, name_folded, condition, tag_ids, "
                      "paused, created_at, updated_at) VALUES (:project, :name, :name, '{}', "
                      "'[1]', false, '2026-01-01', '2026-01-01')")
        assert ids_after_a_delete(engine, "rules", insert) == [1, 3]  # 2 is never given again
        columns = {c["name"] for c in inspect(engine).get_columns("query_tags")}
        assert "rule_id" in columns
        migrate(engine, "0027", down=True)
        assert "rules" not in inspect(engine).get_table_names()
        assert "rule_id" not in {c["name"] for c in inspect(engine).get_columns("query_tags")}
        migrate(engine, "head")
