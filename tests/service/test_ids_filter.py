"""The `ids` filter of queries/list (an extension) over real HTTP: which of some queries a
filter matches now (a job asks it of the queries it has just written)."""

import pytest

from queryapi import Client, QueryFilters

ROWS = [
    ("laufschuhe damen", "de", "DE", ["brand"]),
    ("laufschuhe herren", "de", "AT", ["sale"]),
    ("running shoes", "en", "US", ["brand", "sale"]),
    ("trail shoes", "en", "GB", []),
]


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def ids_of(api) -> dict[str, str]:
    return {row["query"]: row["id"] for row in api.queries().json()["results"]}


def texts(response) -> list[str]:
    assert response.status_code == 200, response.text
    return sorted(row["query"] for row in response.json()["results"])


def test_ids_keep_the_queries_of_those_ids_that_the_rest_of_the_filter_matches(api, seeded):
    ids = ids_of(api)
    asked = [ids["laufschuhe damen"], ids["laufschuhe herren"], ids["running shoes"]]
    assert texts(api.queries(ids=asked)) == ["laufschuhe damen", "laufschuhe herren",
                                             "running shoes"]
    assert texts(api.queries(ids=asked, tagNames=["brand"])) == ["laufschuhe damen",
                                                                 "running shoes"]
    answer = api.queries(ids=asked, languages=["de"], excludeTagNames=["sale"], limit=1)
    assert answer.json()["page"]["totalRecords"] == 1
    assert texts(api.queries(ids=asked, query="trail")) == []


def test_ids_of_no_query_of_the_project_match_nothing_and_none_is_no_filter(api, seeded):
    ids = ids_of(api)
    seeded.add_queries([("hilfe", "de", "DE", [])], project_id=seeded.other_project_id)
    elsewhere = api.call("POST", "/api/queries/list", json={},
                         headers={"x-project-id": seeded.other_project_id}).json()["results"]
    foreign = [row["id"] for row in elsewhere]
    assert len(foreign) == 1
    assert texts(api.queries(ids=[*foreign, "not an id", "42"])) == []
    assert texts(api.queries(ids=[*foreign, ids["trail shoes"]])) == ["trail shoes"]
    assert len(texts(api.queries(ids=[]))) == len(texts(api.queries(ids=None))) == len(ROWS)


def test_ids_are_at_most_a_thousand_texts_and_only_queries_list_takes_them(api, seeded):
    too_many = api.queries(ids=[f"id {i}" for i in range(1001)])
    assert too_many.status_code == 400
    assert "'ids'" in too_many.json()["message"][0]
    assert api.queries(ids=[3]).status_code == 400
    assert api.post("/api/queries/facets", {"ids": [ids_of(api)["trail shoes"]]}
                    ).status_code == 400


def test_the_client_finds_the_extension_and_sends_the_ids(api, seeded, live_service):
    ids = ids_of(api)
    with Client(live_service.url, seeded.key) as client:
        assert client.capabilities().ids_filter
        page = client.list_queries(seeded.project_id, QueryFilters(
            ids=(ids["running shoes"], ids["trail shoes"]), tag_names=("sale",)))
    assert [query.query for query in page.results] == ["running shoes"]
