"""The facets' sums where there is little to add: a project with no query, queries that know
no number, and a filter that matches none — counts' sums 0, averages unknown (None), over
HTTP on each database."""

from __future__ import annotations

from service.engine.numbers import BY_NAME, NAMES
from service.org import admin

NOTHING = {name: None if (BY_NAME[name].weight or BY_NAME[name].ratio) else 0
           for name in NAMES}


def facets(api, **body) -> dict:
    answer = api.call("POST", "/api/queries/facets", json={**body, "sums": NAMES})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_project_without_queries_sums_to_nothing(api, world):
    found = facets(api)
    assert found["totalRecords"] == 0
    assert found["sums"] == NOTHING and found["untaggedSums"] == NOTHING
    assert found["languages"] == [] and found["countries"] == []
    assert all(item["sums"] == NOTHING for item in found["tags"])


def test_queries_that_know_no_number_sum_to_nothing(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        (f"plain query {number}", "en", "US", [world.tags["brand"]] if number % 2 else [],
         None, {}) for number in range(10)]))
    found = facets(api)
    assert found["totalRecords"] == 10
    assert found["sums"] == NOTHING and found["untaggedSums"] == NOTHING
    assert [(item["value"], item["count"], item["sums"]) for item in found["languages"]] == [
        ("en", 10, NOTHING)]
    brand = next(item for item in found["tags"] if item["id"] == world.tags["brand"])
    assert brand["count"] == 5 and brand["sums"] == NOTHING


def test_a_filter_that_matches_nothing_sums_to_nothing(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("running shoes", "en", "US", [world.tags["brand"]], None, {"clicks": 5,
                                                                   "impressions": 50})]))
    found = facets(api, query="no such words")
    assert found["totalRecords"] == 0
    assert found["sums"] == NOTHING and found["untaggedSums"] == NOTHING
    brand = next(item for item in found["tags"] if item["id"] == world.tags["brand"])
    assert brand["count"] == 0 and brand["sums"] == NOTHING
