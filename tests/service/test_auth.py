"""x-api-key and x-project-id: missing, malformed, unknown, revoked, another organization's."""

import pytest

from service.org import admin
from service.store.models import ApiKey
from tests.support.api import Api

PROJECT_ENDPOINTS = [
    ("POST", "/api/queries/list", {}),
    ("PATCH", "/api/queries/many/tags-only", {"queries": []}),
    ("POST", "/api/tags/list", {}),
]
ALL_ENDPOINTS = [("GET", "/api/projects/list", None), *PROJECT_ENDPOINTS]


def error(response):
    return response.status_code, response.json()


@pytest.mark.parametrize("method,path,body", ALL_ENDPOINTS)
def test_missing_key_is_401(live_service, world, method, path, body):
    response = Api(live_service.url, None, world.project_id).call(method, path, json=body)
    assert error(response) == (401, {"statusCode": 401, "message": "Missing x-api-key header.",
                                     "error": "Unauthorized"})


@pytest.mark.parametrize(
    "key", ["nonsense", "tdk_live_" + "x" * 43, "x" * 5000, "tdk_live_<script>"])
def test_unknown_or_malformed_key_is_401(live_service, world, key):
    response = Api(live_service.url, key, world.project_id).queries()
    assert response.status_code == 401
    assert response.json()["error"] == "Unauthorized"


def test_revoked_key_stops_working_at_once(live_service, world):
    api = Api(live_service.url, world.key, world.project_id)
    assert api.queries().status_code == 200
    world.run(lambda s: admin.revoke_key(s, world.key))
    assert error(api.queries()) == (401, {"statusCode": 401, "message": "Invalid API key.",
                                          "error": "Unauthorized"})


def test_keys_are_stored_only_as_sha256(world):
    import hashlib

    stored = world.run(lambda s: s.query(ApiKey).all())
    assert len(stored) == 1
    assert stored[0].key_hash == hashlib.sha256(world.key.encode()).hexdigest()
    assert world.key.startswith("tdk_live_") and len(world.key) >= len("tdk_live_") + 32
    columns = [getattr(stored[0], c.name) for c in ApiKey.__table__.columns]
    assert world.key not in [str(v) for v in columns]


def test_last_use_is_recorded(api, world):
    assert world.run(lambda s: s.query(ApiKey).one().last_used_at) is None
    api.projects()
    assert world.run(lambda s: s.query(ApiKey).one().last_used_at) is not None


@pytest.mark.parametrize("method,path,body", PROJECT_ENDPOINTS)
def test_missing_or_malformed_project_header_is_400(live_service, world, method, path, body):
    api = Api(live_service.url, world.key, None)
    response = api.call(method, path, json=body)
    assert error(response)[0] == 400
    assert response.json()["message"] == ["Missing x-project-id header."]
    for bad in ("42", "not-a-uuid", "' OR 1=1 --", "c28cb1c6-d45e-4985-b155-e8c43144acc"):
        response = api.call(method, path, json=body, headers={"x-project-id": bad})
        assert response.status_code == 400
        assert response.json()["message"] == ["x-project-id must be a project UUID."]


@pytest.mark.parametrize("method,path,body", PROJECT_ENDPOINTS)
def test_another_organizations_project_is_404_like_a_missing_one(
        live_service, world, method, path, body):
    _, _, their_project = world.new_org()
    api = Api(live_service.url, world.key, their_project)
    theirs = api.call(method, path, json=body)
    missing = api.call(method, path, json=body,
                       headers={"x-project-id": "00000000-0000-4000-8000-000000000000"})
    assert error(theirs) == error(missing) == (
        404, {"statusCode": 404, "message": "Project not found.", "error": "Not Found"})


def test_project_header_is_case_insensitive(live_service, world):
    api = Api(live_service.url, world.key, world.project_id.upper())
    assert api.queries().status_code == 200


def test_projects_list_shows_only_the_keys_organization(live_service, world):
    world.new_org()
    body = Api(live_service.url, world.key, None).projects().json()
    assert [p["name"] for p in body["results"]] == ["Help centre", "Shop search"]
    assert body["page"]["totalRecords"] == 2


def test_project_scoped_key_sees_only_its_project(live_service, world):
    key = world.new_key(project_id=world.project_id)
    api = Api(live_service.url, key, world.other_project_id)
    assert [p["id"] for p in api.projects().json()["results"]] == [world.project_id]
    assert api.queries().status_code == 404
    assert api.call("POST", "/api/queries/list", json={},
                    headers={"x-project-id": world.project_id}).status_code == 200


def test_unknown_paths_and_methods_are_json_errors(api):
    assert error(api.call("GET", "/api/nothing")) == (
        404, {"statusCode": 404, "message": "Not found.", "error": "Not Found"})
    response = api.call("DELETE", "/api/queries/list")
    assert response.status_code == 405
    assert response.json()["error"] == "Method Not Allowed"
    assert "POST" in response.headers["Allow"]
