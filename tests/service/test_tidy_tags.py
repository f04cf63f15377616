"""A tag edited (name, colour, description), merged into another and the merge undone — POST
/api/tags/update, merge and unmerge, extensions — over real HTTP on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL: validation, scopes, other organizations' ids, counts
exact by facets after the merge and after its undo, rules renamed and put back, updatedAt;
migration 0031 forward and back."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from sqlalchemy import inspect, select

from service.engine import merging
from service.engine.tables import tag_merges
from service.org import admin
from service.store.models import OrgEvent
from tests.service.counters import assert_counters_exact
from tests.service.migrating import (
    engine_of_its_own,
    migrate,
    model_differences_after,
)
from tests.service.test_settings_projects import EMAIL, PASSWORD, Settings
from tests.support.api import Api

UPDATE, MERGE, UNMERGE = (f"/api/tags/{name}" for name in ("update", "merge", "unmerge"))
ROWS = [("red shoes", "en", "US", ["brand", "sale"]), ("blue shoes", "en", "GB", ["brand"]),
        ("laufschuhe", "de", "DE", ["sale"]), ("schuhe", "de", "AT", ["question", "sale"]),
        ("boots", "en", "US", [])]


def records(api: Api) -> dict[str, dict]:
    return {r["query"]: r for r in api.queries(limit=100).json()["results"]}


def facets(api: Api, **body) -> dict:
    response = api.post("/api/queries/facets", body)
    assert response.status_code == 200, response.text
    return response.json()


def tag_count(api: Api, tag_id: int) -> int:
    return dict((t["id"], t["count"]) for t in facets(api)["tags"]).get(tag_id, -1)


def listed_tags(api: Api) -> dict[str, dict]:
    return {t["name"]: t for t in api.tags().json()["results"]}


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


# --- update -----------------------------------------------------------------------------------


def test_update_renames_recolours_and_describes_a_tag(api, seeded):
    brand = seeded.tags["brand"]
    before = records(api)
    response = api.post(UPDATE, {"id": brand, "name": "Brand name", "color": "#0B5394",
                                 "description": "  Queries that name a brand of ours. "})
    assert response.status_code == 200, response.text
    assert response.json() == {"id": brand, "project": seeded.project_id, "name": "Brand name",
                               "color": "#0b5394",
                               "description": "Queries that name a brand of ours."}
    # tags/list shows the description only where a tag has one: the reference's record else.
    listed = listed_tags(api)
    assert listed["Brand name"]["description"] == "Queries that name a brand of ours."
    assert set(listed["sale"]) == {"id", "project", "name", "color"}
    assert records(api)["red shoes"]["updatedAt"] == before["red shoes"]["updatedAt"]
    # Fields left out are kept; a null description takes it away.
    kept = api.post(UPDATE, {"id": brand, "color": "#112233"}).json()
    assert (kept["name"], kept["description"]) == ("Brand name",
                                                   "Queries that name a brand of ours.")
    assert api.post(UPDATE, {"id": brand, "description": None}).json()["description"] is None
    assert "description" not in listed_tags(api)["Brand name"]
    events = seeded.run(lambda s: [(e.action, e.subject) for e in s.scalars(
        select(OrgEvent).where(OrgEvent.org_id == seeded.org_id).order_by(OrgEvent.id))])
    assert events.count(("tag.edited", "Brand name")) == 3


@pytest.mark.parametrize("body, message", [
    ({"description": "x" * 301},
     "'description': A description can be at most 300 characters; this one has 301."),
    ({"description": "one\nline"},
     "'description': must not contain control characters or unpaired surrogates."),
    ({"name": None}, "'name': Input should be a valid string."),
    ({"name": "  "}, "'name': must not be empty or only spaces."),
    ({"color": "red"},
     "'color': must be # followed by six hexadecimal digits, such as #1f77b4."),
    ({"colour": "#112233"}, "Unknown field 'colour'."),
])
def test_update_refuses_bad_fields_with_sentences(api, seeded, body, message):
    response = api.post(UPDATE, {"id": seeded.tags["brand"], **body})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [message]
    assert listed_tags(api)["brand"] == {"id": seeded.tags["brand"], "project":
                                         seeded.project_id, "name": "brand",
                                         "color": "#1f77b4"}


def test_a_name_another_tag_has_is_a_409_but_a_tag_may_change_its_own_case(api, seeded):
    brand = seeded.tags["brand"]
    response = api.post(UPDATE, {"id": brand, "name": "SA\u200bLE"})
    assert response.status_code == 409
    assert response.json()["message"] == 'A tag named "sale" already exists in this project.'
    assert api.post(UPDATE, {"id": brand, "name": "BRAND"}).json()["name"] == "BRAND"


def test_other_projects_and_organizations_tags_are_404(api, seeded, live_service):
    _org, other_key, other_project = seeded.new_org()
    theirs = Api(api.base_url, other_key, other_project)
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    for path, body in ((UPDATE, {"id": brand, "name": "mine"}),
                       (MERGE, {"id": brand, "intoId": sale})):
        response = theirs.post(path, body)
        assert response.status_code == 404, response.text
        assert response.json()["message"] == f"Tag {brand} not found."
    # A key scoped to the other project of the same organization reaches its project only.
    scoped = Api(api.base_url, seeded.new_key(project_id=seeded.other_project_id),
                 seeded.other_project_id)
    assert scoped.post(UPDATE, {"id": brand, "name": "mine"}).status_code == 404
    own_key = seeded.new_key(project_id=seeded.project_id)
    own = Api(api.base_url, own_key, seeded.project_id)
    assert own.post(UPDATE, {"id": brand, "description": "ours"}).status_code == 200
    wrong_project = Api(api.base_url, own_key, seeded.other_project_id)
    assert wrong_project.post(UPDATE, {"id": brand}).json()["message"] == "Project not found."
    assert listed_tags(api)["brand"]["description"] == "ours"


# --- merge and its undo -----------------------------------------------------------------------


def test_merge_moves_the_queries_and_undo_puts_everything_back_exactly(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    api.post(UPDATE, {"id": brand, "description": "A brand of ours."})
    rule = api.post("/api/rules/create", {
        "name": "Shoes", "condition": {"query": "shoes", "tagIds": [brand]},
        "tagIds": [brand, sale]}).json()
    view = api.post("/api/views/create", {"name": "Brands", "filters": {
        "tagIds": [str(brand)], "excludeTagNames": ["BRAND", "question"]}}).json()
    assert view["totalRecords"] == 0
    facets_before, before = facets(api), records(api)
    assert tag_count(api, brand) == 2 and tag_count(api, sale) == 3
    time.sleep(0.01)

    response = api.post(MERGE, {"id": brand, "intoId": sale})
    assert response.status_code == 200, response.text
    merged = response.json()
    assert merged["merged"] == {"id": brand, "project": seeded.project_id, "name": "brand",
                                "color": "#1f77b4", "description": "A brand of ours."}
    assert merged["into"]["id"] == sale and merged["queries"] == 2
    assert len(merged["operation"]) == 32
    after = records(api)
    assert sorted(after["blue shoes"]["tags"]) == [sale]
    assert sorted(after["red shoes"]["tags"]) == [sale]
    for query in ("blue shoes", "red shoes"):
        assert after[query]["updatedAt"] > before[query]["updatedAt"]
    for query in ("laufschuhe", "schuhe", "boots"):
        assert after[query] == before[query]
    assert "brand" not in listed_tags(api)
    assert_counters_exact(seeded)  # every piece as the rows give it; nothing went around it
    counted = facets(api)
    assert brand not in {t["id"] for t in counted["tags"]}
    assert dict((t["id"], t["count"]) for t in counted["tags"])[sale] == 4
    assert facets(api, tagIds=[sale])["totalRecords"] == 4
    assert api.queries(tagIds=[brand]).json()["page"]["totalRecords"] == 0
    shoes = next(r for r in api.post("/api/rules/list", {}).json()["results"]
                 if r["id"] == rule["id"])
    assert shoes["tagIds"] == [sale]  # named once
    assert shoes["condition"] == {"query": "shoes", "tagIds": [sale]}
    views = api.post("/api/views/list", {}).json()["results"]
    assert views[0]["filters"] == {"tagIds": [sale], "excludeTagNames": ["sale", "question"]}

    undone = api.post(UNMERGE, {"operation": merged["operation"]})
    assert undone.status_code == 200, undone.text
    assert undone.json() == {"restored": merged["merged"], "operation": merged["operation"],
                             "queries": 2}
    assert facets(api) == facets_before
    assert_counters_exact(seeded)
    restored = records(api)
    assert {q: sorted(r["tags"]) for q, r in restored.items()} == {
        q: sorted(r["tags"]) for q, r in before.items()}
    assert restored["blue shoes"]["updatedAt"] > after["blue shoes"]["updatedAt"]
    assert listed_tags(api)["brand"]["id"] == brand
    shoes = next(r for r in api.post("/api/rules/list", {}).json()["results"]
                 if r["id"] == rule["id"])
    assert shoes["tagIds"] == [brand, sale]
    assert shoes["condition"] == {"query": "shoes", "tagIds": [brand]}
    assert api.post("/api/views/list", {}).json()["results"][0]["filters"] == view["filters"]
    # An operation is undone once.
    again = api.post(UNMERGE, {"operation": merged["operation"]})
    assert again.status_code == 404 and "Merge not found" in again.json()["message"]
    events = seeded.run(lambda s: [e.action for e in s.scalars(
        select(OrgEvent).where(OrgEvent.org_id == seeded.org_id).order_by(OrgEvent.id))])
    assert events[-2:] == ["tag.merged", "tag.unmerged"]


def test_undo_keeps_where_each_link_came_from(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    response = api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [
        {"query": "boots", "language": "en", "country": "US", "tagIds": [brand]}]},
        headers={"X-Tagdesk-Actor": "Ann"})
    assert response.status_code == 200
    before = records(api)
    operation = api.post(MERGE, {"id": brand, "intoId": sale}).json()["operation"]
    # The link the merge made keeps who added the tag it replaces.
    assert records(api)["boots"]["tagSources"][str(sale)]["addedBy"] == "Ann"
    api.post(UNMERGE, {"operation": operation})
    after = records(api)
    assert after["boots"]["tagSources"] == before["boots"]["tagSources"]
    assert after["boots"]["tags"] == [brand]


def test_a_name_taken_since_the_merge_keeps_the_merge(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    operation = api.post(MERGE, {"id": brand, "intoId": sale}).json()["operation"]
    made = api.post("/api/tags/create", {"name": "Brand"}).json()
    assert made["id"] > brand  # never the merged tag's id
    response = api.post(UNMERGE, {"operation": operation})
    assert response.status_code == 409
    assert "a tag named \"Brand\" has been made since" in response.json()["message"]
    assert api.post(UPDATE, {"id": made["id"], "name": "Brand new"}).status_code == 200
    assert api.post(UNMERGE, {"operation": operation}).status_code == 200
    assert listed_tags(api)["brand"]["id"] == brand


@pytest.mark.parametrize("body, status, message", [
    ({"id": 1, "intoId": 1}, 400,
     ["'intoId': a tag cannot be merged into itself; choose another tag."]),
    ({"id": 1}, 400, ["'intoId' is required."]),
    ({"id": 1, "intoId": "2"}, 400, ["'intoId': Input should be a valid integer."]),
])
def test_bad_merges_are_sentences(api, seeded, body, status, message):
    response = api.post(MERGE, body)
    assert (response.status_code, response.json()["message"]) == (status, message)


def test_merging_into_itself_or_another_projects_tag_changes_nothing(api, seeded):
    brand = seeded.tags["brand"]
    before = facets(api)
    response = api.post(MERGE, {"id": brand, "intoId": brand})
    assert response.status_code == 400
    other = seeded.run(lambda s: admin.create_tag(s, seeded.other_project_id, "theirs",
                                                  "#123456"))
    response = api.post(MERGE, {"id": brand, "intoId": other})
    assert response.status_code == 404
    assert response.json()["message"] == f"Tag {other} ('intoId') not found."
    assert facets(api) == before


def test_unmerge_of_another_project_or_a_bad_operation(api, seeded):
    operation = api.post(MERGE, {"id": seeded.tags["brand"],
                                 "intoId": seeded.tags["sale"]}).json()["operation"]
    other = Api(api.base_url, api.headers["x-api-key"], seeded.other_project_id)
    assert other.post(UNMERGE, {"operation": operation}).status_code == 404
    bad = api.post(UNMERGE, {"operation": "../x"})
    assert bad.status_code == 400 and "operation" in bad.json()["message"][0]
    assert api.post(UNMERGE, {"operation": operation}).status_code == 200


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0031_adds_descriptions_and_merges_and_takes_them_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_tag_merges_") as engine:
        differences = model_differences_after(engine, "0030", "0031")
        assert [d for d in differences if ("tag_merge" in repr(d) or "description" in repr(d))
                and "linked_from" not in repr(d)  # linked_from: 0036
                and "linked_suggested" not in repr(d)] == []  # 0042
        assert "description" in {c["name"] for c in inspect(engine).get_columns("tags")}
        migrate(engine, "0030", down=True)
        assert not {"tag_merges", "tag_merge_links"} & set(inspect(engine).get_table_names())
        assert "description" not in {c["name"] for c in inspect(engine).get_columns("tags")}
        migrate(engine, "head")


# --- the settings area's tag editing ------------------------------------------------------------


@pytest.fixture
def administrator(service_app, seeded):
    settings = Settings(service_app, seeded.with_administrator(EMAIL, PASSWORD))
    assert settings.sign_in().status_code == 303
    return settings


def test_the_settings_edit_page_describes_a_tag_on_record(api, administrator, seeded):
    brand = seeded.tags["brand"]
    path = f"/settings/projects/{seeded.project_id}/tags/{brand}/edit"
    assert ">Description</label>" in administrator.html(path)
    saved = administrator.post(path, {"name": "brand", "color": "#1f77b4",
                                      "description": " Our brands. "}, csrf_from=path)
    assert saved.status_code == 303
    assert listed_tags(api)["brand"]["description"] == "Our brands."
    assert "Our brands.</textarea>" in administrator.html(path)
    refused = administrator.post(path, {"name": "brand", "color": "#1f77b4",
                                        "description": "two\nlines"}, csrf_from=path)
    assert refused.status_code == 400
    assert ("The description cannot contain control characters, such as line breaks or "
            "tabs.") in refused.get_data(as_text=True)
    too_long = administrator.post(path, {"name": "brand", "color": "#1f77b4",
                                         "description": "x" * 301}, csrf_from=path)
    assert "The description can be at most 300 characters long." in \
        too_long.get_data(as_text=True)
    assert listed_tags(api)["brand"]["description"] == "Our brands."
    events = seeded.run(lambda s: [e.detail for e in s.scalars(
        select(OrgEvent).where(OrgEvent.org_id == seeded.org_id, OrgEvent.action ==
                               "tag.edited"))])
    assert events == ["In “Shop search”: description changed."]


def test_the_settings_area_merges_a_tag_and_undoes_it_on_record(api, administrator, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    before, counted = records(api), facets(api)
    project = f"/settings/projects/{seeded.project_id}"
    assert f'href="{project}/tags/{brand}/merge">Merge<span class="visually-hidden"> brand' \
        in administrator.html(project)
    path = f"{project}/tags/{brand}/merge"
    page = administrator.html(path)
    assert "<legend>Merge into</legend>" in page and f'value="{brand}"' not in page
    refused = administrator.post(path, {}, csrf_from=path)
    assert refused.status_code == 400 and "Choose the tag to merge it into." in refused.text
    merged = administrator.post(path, {"into": str(sale)}, csrf_from=path)
    assert merged.status_code == 303
    assert "brand" not in listed_tags(api)
    assert dict((t["id"], t["count"]) for t in facets(api)["tags"])[sale] == 4
    landing = administrator.html(merged.headers["Location"])
    assert "The tag “brand” is merged. In “Shop search”, into “sale”: 2 queries changed." in \
        landing
    operation = re.search(r'name="operation" value="([0-9a-f]{32})"', landing).group(1)
    assert ">Undo the merge</button>" in landing
    undone = administrator.post(f"{project}/tags/unmerge", {"operation": operation},
                                csrf_from=project)
    assert undone.status_code == 303
    assert "The merge of “brand” is undone: it is back." in administrator.html(
        undone.headers["Location"])
    assert facets(api) == counted
    assert {q: sorted(r["tags"]) for q, r in records(api).items()} == {
        q: sorted(r["tags"]) for q, r in before.items()}
    again = administrator.post(f"{project}/tags/unmerge", {"operation": operation},
                               csrf_from=project)
    assert again.status_code == 404
    events = seeded.run(lambda s: [(e.action, e.user_id) for e in s.scalars(
        select(OrgEvent).where(OrgEvent.org_id == seeded.org_id).order_by(OrgEvent.id))])
    assert events[-2:] == [("tag.merged", seeded.user_id), ("tag.unmerged", seeded.user_id)]


def test_a_merge_older_than_a_week_cannot_be_undone(api, seeded, monkeypatch):
    operation = api.post(MERGE, {"id": seeded.tags["brand"],
                                 "intoId": seeded.tags["sale"]}).json()["operation"]
    monkeypatch.setattr(merging, "KEPT", timedelta(0))  # the server runs in this process
    response = api.post(UNMERGE, {"operation": operation})
    assert response.status_code == 404 and "Merge not found" in response.json()["message"]
    # The next merge forgets it.
    api.post(MERGE, {"id": seeded.tags["question"], "intoId": seeded.tags["sale"]})
    remaining = seeded.run(lambda s: s.execute(select(tag_merges.c.operation)).scalars().all())
    assert operation not in remaining
