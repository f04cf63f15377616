"""POST /api/imports/list (an extension): a project's imports, newest first, read-only — what
the dashboard's Activity lists. Imports made in the settings over real HTTP on a live
service, SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import pytest

from tests.support.api import Api
from tests.support.imports import Administrator

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def imported(administrator: Administrator, project_id: str, text: str, name: str) -> str:
    """The import's id, once it has ended."""
    report = administrator.upload(project_id, text, name=name)
    administrator.finished(report)
    return report.rsplit("/", 1)[-1]


def test_a_projects_imports_are_listed_newest_first_with_their_counts_and_person(
        live_service, world, administrator):
    first = imported(administrator, world.project_id,
                     "query,language,country,tags\nschuhe,de,DE,brand\nsocken,de,DE,nope\n",
                     "Queries.csv")
    second = imported(administrator, world.project_id,
                      "query,language,country,tags\nschuhe,de,DE,brand\nhut,de,DE,\n",
                      "More queries.csv")
    api = Api(live_service.url, world.key, world.project_id)
    listed = api.post("/api/imports/list", {})
    assert listed.status_code == 200, listed.text
    results = listed.json()["results"]
    assert [(r["id"], r["fileName"], r["state"], r["added"], r["present"], r["rejected"],
             r["by"]) for r in results] == [
        (second, "More queries.csv", "finished", 1, 1, 0, EMAIL),
        (first, "Queries.csv", "finished", 1, 0, 1, EMAIL)]
    assert all(r["taggedByRules"] == 0 and r["createdAt"].endswith("Z")
               and r["finishedAt"].endswith("Z") for r in results)
    assert [r["id"] for r in api.post("/api/imports/list", {"limit": 1}).json()["results"]] \
        == [second]
    # Another project's imports are not this one's.
    other = Api(live_service.url, world.key, world.other_project_id)
    assert other.post("/api/imports/list", {}).json() == {"results": []}


@pytest.mark.parametrize("body, message", [
    ({"limit": 0}, "'limit'"), ({"limit": 101}, "'limit'"),
    ({"since": 1}, "Unknown field 'since'")])
def test_a_bad_body_is_a_clear_400(live_service, world, body, message):
    answer = Api(live_service.url, world.key, world.project_id).post("/api/imports/list", body)
    assert answer.status_code == 400, answer.text
    said = answer.json()["message"]
    assert message in (" ".join(said) if isinstance(said, list) else said), said


def test_another_organizations_project_is_not_found(live_service, world):
    _org, key, _project = world.new_org()
    answer = Api(live_service.url, key, world.project_id).post("/api/imports/list", {})
    assert answer.status_code == 404 and answer.json()["message"] == "Project not found."
