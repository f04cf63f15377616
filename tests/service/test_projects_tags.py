"""GET /api/projects/list and POST /api/tags/list."""

import pytest

from service.org import admin


def test_projects_list_pages_by_query_parameters(api, world):
    body = api.projects(limit=1, page=2).json()
    assert body["page"] == {"totalRecords": 2, "limit": 1, "currentPage": 2, "totalPages": 2,
                            "nextPage": None, "prevPage": 1}
    assert body["results"] == [{"id": world.project_id, "name": "Shop search"}]


@pytest.mark.parametrize("params", [{"limit": "1001"}, {"limit": "0"}, {"page": "x"},
                                    {"page": "-1"}, {"unknown": "1"}])
def test_projects_list_rejects_bad_parameters(api, params):
    response = api.projects(**params)
    assert response.status_code == 400
    assert response.json()["error"] == "Bad Request"


def test_tags_list_defaults_to_name_order(api, world):
    body = api.tags().json()
    assert [t["name"] for t in body["results"]] == ["brand", "local", "question", "sale"]
    assert body["results"][0] == {"id": world.tags["brand"], "project": world.project_id,
                                  "name": "brand", "color": "#1f77b4"}
    assert body["page"]["totalRecords"] == 4


def test_tags_name_filter_is_case_insensitive_substring(api, world):
    world.run(lambda s: admin.create_tag(s, world.project_id, "Sale_Items 50%", "#ABCDEF"))
    assert [t["name"] for t in api.tags(name="SAL").json()["results"]] == [
        "sale", "Sale_Items 50%"]
    assert [t["name"] for t in api.tags(name="_").json()["results"]] == ["Sale_Items 50%"]
    assert [t["name"] for t in api.tags(name="0%").json()["results"]] == ["Sale_Items 50%"]
    assert api.tags(name="Sale_Items").json()["results"][0]["color"] == "#abcdef"


@pytest.mark.parametrize("field", ["name", "id"])
def test_tags_sort_both_ways(api, world, field):
    up = [t[field] for t in api.tags(sort=[{"field": field}]).json()["results"]]
    down = [t[field] for t in api.tags(sort=[{"field": field, "direction": "DESC"}]
                                       ).json()["results"]]
    assert up == sorted(up) and down == sorted(up, reverse=True)


def test_tags_bad_sort_and_paging(api):
    assert api.tags(sort=[{"field": "color"}]).status_code == 400
    assert api.tags(limit=1001).status_code == 400
    body = api.tags(limit=1, page=4).json()
    assert body["page"]["nextPage"] is None and body["page"]["prevPage"] == 3


def test_tags_of_other_projects_are_not_listed(api, world):
    world.run(lambda s: admin.create_tag(s, world.other_project_id, "elsewhere", "#000000"))
    assert "elsewhere" not in [t["name"] for t in api.tags().json()["results"]]
