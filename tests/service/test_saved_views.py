"""Saved views — POST /api/views/list, create, update, delete, an extension of the reference
API — over real HTTP, on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL: kept and listed with
live counts (the same as queries/list's), renamed, refiltered and deleted; bad bodies, folded
duplicate names, the limit per project, other organizations and projects, scoped keys, the
OpenAPI document; and migration 0027 forward and back."""

from __future__ import annotations

import uuid

import pytest
import requests
from sqlalchemy import inspect, select, text

from service.api import saved_views
from service.store.models import SavedView
from tests.service.migrating import (
    P1,
    engine_of_its_own,
    ids_after_a_delete,
    migrate,
    model_differences_after,
)
from tests.support.answers import assert_an_extension, assert_bad_request, assert_theirs_not_found
from tests.support.api import Api, racing_statuses

LIST, CREATE, UPDATE, DELETE = ("/api/views/list", "/api/views/create", "/api/views/update",
                                "/api/views/delete")


def views(api: Api) -> list[dict]:
    response = api.post(LIST, {})
    assert response.status_code == 200, response.text
    return response.json()["results"]


def create(api: Api, name: str, filters: dict, sort=None):
    body = {"name": name, "filters": filters}
    if sort is not None:
        body["sort"] = sort
    return api.post(CREATE, body)


def total(api: Api, filters: dict) -> int:
    return api.queries(**filters).json()["page"]["totalRecords"]


def stored(world) -> list[tuple[str, str]]:
    return world.run(lambda session: session.execute(
        select(SavedView.name, SavedView.project_id).order_by(SavedView.id)).all())


# --- kept, listed and counted ---------------------------------------------------------------


def test_a_view_is_created_listed_by_name_and_counted_as_queries_list_counts(api, seeded):
    filters = {"languages": ["de"], "excludeTagNames": ["brand"], "tagIds": [], "query": None,
               "untagged": False, "tagMatch": "any"}
    response = create(api, "DE unbranded", filters, [{"field": "query"}])
    assert response.status_code == 201, response.text
    view = response.json()
    assert view == {
        "id": view["id"], "project": seeded.project_id, "name": "DE unbranded",
        # Stored as validated, without the fields that filter nothing.
        "filters": {"languages": ["de"], "excludeTagNames": ["brand"]},
        "sort": [{"field": "query", "direction": "ASC"}], "columns": None, "totalRecords": 1,
        "createdAt": view["createdAt"], "updatedAt": view["createdAt"]}
    assert isinstance(view["id"], int) and view["createdAt"].endswith("Z")
    assert create(api, "all", {}).status_code == 201
    assert create(api, "Brand and sale", {"tagNames": ["BRAND", "sale"], "tagMatch": "all"},
                  ).status_code == 201
    assert create(api, "three parts", {"query": "SCHUH", "languages": ["DE"],
                                       "tagNames": ["brand"]}).status_code == 201
    listed = views(api)
    assert [v["name"] for v in listed] == ["all", "Brand and sale", "DE unbranded",
                                           "three parts"]
    assert listed[2] == view
    for each in listed:
        assert each["totalRecords"] == total(api, each["filters"])
    assert [v["totalRecords"] for v in listed] == [4, 1, 1, 1]
    assert listed[0]["sort"] is None and listed[0]["filters"] == {}


def test_counts_are_live_they_follow_set_tags_and_new_queries(api, seeded):
    untagged = create(api, "untagged", {"untagged": True}).json()
    branded = create(api, "branded", {"tagNames": ["brand"]}).json()
    assert (untagged["totalRecords"], branded["totalRecords"]) == (2, 2)
    tagged = api.set_tags([{"query": "laufschuhe", "language": "de", "country": "DE",
                            "tagIds": [seeded.tags["brand"]]}])
    assert tagged.status_code == 200, tagged.text
    assert {v["name"]: v["totalRecords"] for v in views(api)} == {"branded": 3, "untagged": 1}
    seeded.add_queries([("boots", "en", "US", [])])
    assert {v["name"]: v["totalRecords"] for v in views(api)} == {"branded": 3, "untagged": 2}


def test_a_tag_deleted_since_is_an_unknown_tag_as_queries_list_has_it(api, seeded):
    from service.engine.deleting import delete_tag

    create(api, "sale by name", {"tagNames": ["sale"]})
    create(api, "sale by id", {"tagIds": [seeded.tags["sale"]]})
    create(api, "not sale", {"excludeTagNames": ["sale"]})
    seeded.run(lambda session: delete_tag(session, seeded.project_id, seeded.tags["sale"]))
    counted = {v["name"]: (v["totalRecords"], total(api, v["filters"])) for v in views(api)}
    assert counted == {"sale by name": (0, 0), "sale by id": (0, 0), "not sale": (4, 4)}
    # A new tag of that name is the name's tag; the old id names nothing, ever.
    made = api.post("/api/tags/create", {"name": "sale"}).json()
    assert made["id"] != seeded.tags["sale"]
    api.set_tags([{"query": "shoe store", "language": "en", "country": "GB",
                   "tagIds": [made["id"]]}])
    counts = {v["name"]: v["totalRecords"] for v in views(api)}
    assert counts == {"sale by name": 1, "sale by id": 0, "not sale": 3}


def test_one_list_counts_every_view_in_one_read_of_the_project(api, seeded, statements):
    shapes = [{"untagged": True}, {"tagNames": ["brand"]}, {"languages": ["de", "en"]},
              {"tagIds": [seeded.tags["sale"]], "excludeTagNames": ["local"]}, {}]
    for index, filters in enumerate(shapes):
        assert create(api, f"v{index}", filters).status_code == 201
    views(api)
    statements.clear()
    few = views(api)
    statements_for_few = len(statements)
    for index in range(len(shapes), 40):
        create(api, f"v{index:02d}", shapes[index % len(shapes)])
    statements.clear()
    many = views(api)
    assert len(many) == 40
    assert len(statements) == statements_for_few  # not one more per view
    assert [v["totalRecords"] for v in few] == [2, 2, 4, 1, 4]
    assert all(v["totalRecords"] == few[int(v["name"][1:]) % len(shapes)]["totalRecords"]
               for v in many)


def test_creators_racing_for_one_name_get_one_view_and_409s(api, world):
    callers = 6
    statuses = racing_statuses(
        api, callers, lambda caller, index: create(caller, "Race" if index % 2 else "RACE", {}))
    assert statuses == [201] + [409] * (callers - 1)
    assert len(stored(world)) == 1


def test_a_view_is_renamed_refiltered_and_resorted(api, seeded):
    view = create(api, "first", {"languages": ["de"]}, [{"field": "id", "direction": "desc"}])
    view = view.json()
    renamed = api.post(UPDATE, {"id": view["id"], "name": "  Deutsch  "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json() == {**view, "name": "Deutsch", "updatedAt": renamed.json()["updatedAt"]}
    assert renamed.json()["updatedAt"] >= view["updatedAt"]
    refiltered = api.post(UPDATE, {"id": view["id"], "filters": {"countries": ["us", "GB"]},
                                   "sort": None}).json()
    assert refiltered["filters"] == {"countries": ["us", "GB"]}
    assert (refiltered["totalRecords"], refiltered["sort"]) == (2, None)
    assert refiltered["name"] == "Deutsch" and refiltered["createdAt"] == view["createdAt"]
    # Its own name in another case is no conflict.
    assert api.post(UPDATE, {"id": view["id"], "name": "DEUTSCH"}).json()["name"] == "DEUTSCH"
    assert views(api) == [api.post(UPDATE, {"id": view["id"]}).json()]


def test_a_view_is_deleted_and_its_id_is_not_found_afterwards(api, seeded):
    view = create(api, "gone", {}).json()
    kept = create(api, "kept", {}).json()
    deleted = api.post(DELETE, {"id": view["id"]})
    assert deleted.status_code == 200 and deleted.json() == {"deleted": view["id"]}
    assert [v["id"] for v in views(api)] == [kept["id"]]
    for path, body in ((DELETE, {"id": view["id"]}), (UPDATE, {"id": view["id"], "name": "x"})):
        again = api.post(path, body)
        assert again.status_code == 404
        assert again.json() == {"statusCode": 404, "message": "Saved view not found.",
                                "error": "Not Found"}
    # Ids are never given twice.
    assert create(api, "gone", {}).json()["id"] > kept["id"]


def test_an_empty_project_lists_no_views_and_an_empty_body_is_fine(api, world):
    response = api.call("POST", LIST)
    assert response.status_code == 200 and response.json() == {"results": []}


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "message"), [
    ({}, ["'name' is required.", "'filters' is required."]),
    ({"name": "x"}, ["'filters' is required."]),
    ({"name": "x", "filters": {}, "colour": 1}, ["Unknown field 'colour'."]),
    ({"name": 5, "filters": {}}, ["'name': Input should be a valid string."]),
    ({"name": "x" * 101, "filters": {}}, ["'name': must be at most 100 characters."]),
    ({"name": "ß" * 51, "filters": {}},
     ["'name': must be at most 100 characters when compared without regard to case."]),
    ({"name": "  ", "filters": {}}, ["'name': must not be empty or only spaces."]),
    ({"name": "a\tb", "filters": {}},
     ["'name': must not contain control characters or unpaired surrogates."]),
    ({"name": "x", "filters": []},
     ["'filters': Input should be a valid dictionary or instance of QueryFilterBody."]),
    ({"name": "x", "filters": {"page": 2}}, ["Unknown field 'filters.page'."]),
    ({"name": "x", "filters": {"tagMatch": "ALL"}},
     ["'filters.tagMatch': Input should be 'any' or 'all'."]),
    ({"name": "x", "filters": {"excludeTagIds": ["3"]}},
     ["'filters.excludeTagIds.0': Input should be a valid integer."]),
    ({"name": "x", "filters": {"untagged": True, "tagNames": ["brand"]}},
     ["'untagged': queries with no tag cannot also have one of 'tagIds' or 'tagNames'; send "
      "one or the other."]),
    ({"name": "x", "filters": {}, "sort": [{"field": "color"}]},
     ["'sort.0.field': 'color' is not a sort field; use one of query, language, country, "
      "updatedAt, id, clicks, impressions, ctr, position, volume, cpc, difficulty."]),
    ({"name": "x", "filters": {}, "sort": [{"field": "id", "direction": "up"}]},
     ["'sort.0.direction': use ASC or DESC."]),
    ([{"name": "x"}], ["Request body must be a JSON object."]),
])
def test_bodies_that_are_not_a_view_are_400_sentences(api, world, body, message):
    assert_bad_request(api.post(CREATE, body), message)
    assert stored(world) == []


def test_a_filter_is_refused_as_queries_list_refuses_it(api, world):
    bad = {"languages": "de"}
    listed = api.queries(**bad)
    created = create(api, "x", bad)
    assert listed.status_code == created.status_code == 400
    assert created.json()["message"] == [
        "'filters." + listed.json()["message"][0].removeprefix("'")]


def test_bad_json_and_other_media_types(api, world):
    broken = api.call("POST", CREATE, data=b'{"name": "x", "filters": {',
                      headers={"Content-Type": "application/json"})
    assert broken.status_code == 400
    assert broken.json()["message"] == "Request body is not valid JSON."
    form = api.call("POST", CREATE, data="name=x",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415
    assert api.post(LIST, {"page": 1}).json()["message"] == ["Unknown field 'page'."]
    assert stored(world) == []


@pytest.mark.parametrize(("body", "message"), [
    ({}, ["'id' is required."]),
    ({"id": "1"}, ["'id': Input should be a valid integer."]),
    ({"id": True}, ["'id': Input should be a valid integer."]),
    ({"id": 1, "name": None}, ["'name': Input should be a valid string."]),
    ({"id": 1, "filters": None},
     ["'filters': Input should be a valid dictionary or instance of QueryFilterBody."]),
    ({"id": 1, "project": "x"}, ["Unknown field 'project'."]),
])
def test_updates_that_are_not_one_are_400(api, world, body, message):
    response = api.post(UPDATE, body)
    assert response.status_code == 400
    assert response.json()["message"] == message


# Past a 32-bit integer an id is a 400 (tests/service/test_integer_ranges.py).
@pytest.mark.parametrize("view_id", [0, -1, -(2**31), 2**31 - 1])
def test_ids_that_name_no_row_are_not_found(api, world, view_id):
    for path in (UPDATE, DELETE):
        response = api.post(path, {"id": view_id})
        assert response.status_code == 404, response.text
        assert response.json()["message"] == "Saved view not found."


@pytest.mark.parametrize("name", ["de untagged", "DE UNTAGGED", " De Untagged ",
                                  "de\u200b untagged", "\uff44\uff45 untagged"])
def test_a_name_the_project_has_folded_as_tag_names_are_is_a_409(api, world, name):
    assert create(api, "DE untagged", {"untagged": True}).status_code == 201
    response = create(api, name, {})
    assert response.status_code == 409
    assert response.json() == {
        "statusCode": 409, "error": "Conflict",
        "message": 'A saved view named "DE untagged" already exists in this project.'}
    other = create(api, "other", {}).json()
    renamed = api.post(UPDATE, {"id": other["id"], "name": name})
    assert renamed.status_code == 409
    assert [v["name"] for v in views(api)] == ["DE untagged", "other"]


def test_the_same_name_in_another_project_is_another_view(api, world):
    other = Api(api.base_url, world.key, world.other_project_id)
    assert create(api, "mine", {}).status_code == 201
    assert create(other, "mine", {}).status_code == 201


def test_a_project_holds_at_most_200_views(api, world, monkeypatch):
    # Saved up to the limit in the database itself (200 calls would be slow); the last by API.
    def fill(session):
        session.add_all(SavedView(project_id=world.project_id, name=f"v{i}",
                                  name_folded=f"v{i}", filters="{}")
                        for i in range(saved_views.MAX_VIEWS - 1))

    world.run(fill)
    assert create(api, "the 200th", {}).status_code == 201
    refused = create(api, "the 201st", {})
    assert refused.status_code == 409
    assert refused.json()["message"] == (
        "This project has 200 saved views, as many as a project may have; delete one before "
        "saving another.")
    listed = views(api)
    assert len(listed) == 200 and all(v["totalRecords"] == 0 for v in listed)
    api.post(DELETE, {"id": listed[0]["id"]})
    assert create(api, "the 201st", {}).status_code == 201


# --- who sees what --------------------------------------------------------------------------


def test_another_organizations_view_is_not_found_like_a_missing_one(api, world):
    _org, their_key, their_project = world.new_org("Rival")
    theirs = Api(api.base_url, their_key, their_project)
    their_view = create(theirs, "theirs", {}).json()
    for path, body in ((UPDATE, {"id": their_view["id"], "name": "ours now"}),
                       (DELETE, {"id": their_view["id"]})):
        assert_theirs_not_found(api, path, body, "Saved view not found.", their_project)
    assert views(api) == []
    assert [v["name"] for v in views(theirs)] == ["theirs"]
    absent = api.post(LIST, {}, **{"x-project-id": str(uuid.uuid4())})
    assert absent.status_code == 404 and absent.json()["message"] == "Project not found."


def test_a_view_of_another_project_of_the_organization_is_not_found_there(api, world):
    other = Api(api.base_url, world.key, world.other_project_id)
    view = create(other, "help", {}).json()
    assert api.post(DELETE, {"id": view["id"]}).status_code == 404
    assert [v["id"] for v in views(other)] == [view["id"]]


def test_a_project_scoped_key_sees_only_its_projects_views(api, world):
    create(api, "shop view", {})
    create(Api(api.base_url, world.key, world.other_project_id), "help view", {})
    scoped = Api(api.base_url, world.new_key(project_id=world.project_id), world.project_id)
    assert [v["name"] for v in views(scoped)] == ["shop view"]
    elsewhere = scoped.post(LIST, {}, **{"x-project-id": world.other_project_id})
    assert elsewhere.status_code == 404
    assert elsewhere.json()["message"] == "Project not found."
    refused = scoped.post(CREATE, {"name": "x", "filters": {}},
                  **{"x-project-id": world.other_project_id})
    assert refused.status_code == 404
    assert [name for name, _project in stored(world)] == ["shop view", "help view"]


@pytest.mark.parametrize(("headers", "status"), [
    ({"x-api-key": ""}, 401), ({"x-project-id": "not-a-uuid"}, 400)])
def test_keys_and_project_headers_are_checked(api, world, headers, status):
    assert api.post(LIST, {}, **headers).status_code == status
    assert api.post(CREATE, {"name": "x", "filters": {}}, **headers).status_code == status
    assert stored(world) == []


def test_views_count_against_the_rate_limit(api, world):
    world.set_limits(1000, 2, 100_000)
    answers = [api.post(LIST, {}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[0].headers["X-RateLimit-Remaining"].isdigit()


# --- the document ---------------------------------------------------------------------------


def test_the_document_marks_the_views_as_extensions(live_service):
    served = requests.get(live_service.url + "/api/openapi.json", timeout=10).json()
    for path, operation_id, status in ((LIST, "listViews", "200"),
                                       (CREATE, "createView", "201"),
                                       (UPDATE, "updateView", "200"),
                                       (DELETE, "deleteView", "200")):
        assert_an_extension(served, path, operation_id, status, "404")
    assert set(served["paths"][CREATE]["post"]["responses"]) >= {"409"}


# --- migration 0027 -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0027_adds_the_table_and_takes_it_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_views_") as engine:
        differences = model_differences_after(engine, "0026", "0027")
        # The table as made then, without the column 0038 adds (`columns`).
        assert [d for d in differences if "saved_views" in repr(d)
                and "Column('columns'" not in repr(d)] == []
        insert = text("INSERT INTO saved_views (project_id, name, name_folded, filters, "
                      "created_at, updated_at) VALUES (:project, :name, :name, '{}', "
                      "'2026-01-01', '2026-01-01')")
        assert ids_after_a_delete(engine, "saved_views", insert) == [1, 3]  # 2 is never given again
        with engine.begin() as connection, pytest.raises(Exception, match="(?i)unique"):
            connection.execute(insert, {"project": P1, "name": "a"})
        migrate(engine, "0026", down=True)
        assert "saved_views" not in inspect(engine).get_table_names()
        migrate(engine, "head")
        assert "saved_views" in inspect(engine).get_table_names()
