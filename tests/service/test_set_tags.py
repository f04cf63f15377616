"""PATCH /api/queries/many/tags-only: replace semantics, all or nothing, clear errors."""

import threading
import time

import pytest
from sqlalchemy import text

ROWS = [
    ("laufschuhe damen", "de", "DE", ["brand"]),
    ("running shoes", "en", "US", ["brand", "sale"]),
    ("running shoes", "en", "GB", []),
]


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def item(query, language, country, tag_ids):
    return {"query": query, "language": language, "country": country, "tagIds": tag_ids}


def snapshot(api):
    results = api.queries(limit=1000).json()["results"]
    return {(r["query"], r["language"], r["country"]): (r["tags"], r["updatedAt"])
            for r in results}


def test_replaces_the_tag_set_and_returns_records_in_request_order(api, seeded):
    t = seeded.tags
    response = api.set_tags([
        item("running shoes", "en", "GB", [t["local"], t["question"]]),
        item("laufschuhe damen", "de", "DE", [t["sale"]]),
    ])
    assert response.status_code == 200
    records = response.json()
    assert isinstance(records, list)
    assert [(r["query"], r["country"]) for r in records] == [
        ("running shoes", "GB"), ("laufschuhe damen", "DE")]
    assert records[0]["tags"] == sorted([t["local"], t["question"]])
    assert records[1]["tags"] == [t["sale"]]
    assert snapshot(api)[("laufschuhe damen", "de", "DE")][0] == [t["sale"]]


def test_empty_tag_list_removes_all_tags(api, seeded):
    assert api.set_tags([item("running shoes", "en", "US", [])]).json()[0]["tags"] == []
    assert snapshot(api)[("running shoes", "en", "US")][0] == []


def test_matching_ignores_code_case_but_not_text_case(api, seeded):
    assert api.set_tags([item("running shoes", "EN", "us", [])]).status_code == 200
    response = api.set_tags([item("Running Shoes", "en", "US", [])])
    assert response.status_code == 404


def test_updated_at_changes_only_when_tags_change(api, seeded):
    before = snapshot(api)
    time.sleep(0.01)
    same = before[("running shoes", "en", "US")][0]
    records = api.set_tags([
        item("running shoes", "en", "US", list(reversed(same))),
        item("running shoes", "en", "GB", [seeded.tags["local"]]),
    ]).json()
    assert records[0]["updatedAt"] == before[("running shoes", "en", "US")][1]
    assert records[1]["updatedAt"] > before[("running shoes", "en", "GB")][1]
    after = snapshot(api)
    assert after[("running shoes", "en", "US")][1] == before[("running shoes", "en", "US")][1]


def test_repeating_a_request_gives_the_same_result(api, seeded):
    body = [item("running shoes", "en", "GB", [seeded.tags["sale"]])]
    first = api.set_tags(body).json()
    assert api.set_tags(body).json() == first


def test_tag_ids_that_name_no_tag_are_unknown_tags(api, seeded):
    for tag_id in (-1, 0, -(2**31), 2**31 - 1):
        response = api.set_tags([item("running shoes", "en", "GB", [tag_id])])
        assert response.status_code == 400
        assert response.json()["message"] == [f"Tag {tag_id} is not a tag of this project."]
    for tag_ids in ([str(10**30)], [-5], [2**31 - 1], [str(2**40)]):
        assert api.queries(tagIds=tag_ids).json()["results"] == []


def test_tag_ids_past_a_32_bit_integer_are_refused(api, seeded):
    for tag_id, limit in ((10**30, "less than or equal to 2147483647"),
                          (2**31, "less than or equal to 2147483647"),
                          (-(2**31) - 1, "greater than or equal to -2147483648")):
        response = api.set_tags([item("running shoes", "en", "GB", [tag_id])])
        assert response.status_code == 400
        assert response.json()["message"] == [f"'queries.0.tagIds.0': Input should be {limit}."]
        listed = api.queries(tagIds=["brand", tag_id])
        assert listed.status_code == 400
        assert listed.json()["message"] == [f"'tagIds.1': Input should be {limit}."]


def test_whole_number_floats_count_as_integers(api, seeded):
    sale = seeded.tags["sale"]
    assert api.set_tags([item("running shoes", "en", "GB", [float(sale)])]).json()[0][
        "tags"] == [sale]
    assert api.queries(limit=2.0, page=1.0).json()["page"]["limit"] == 2
    assert api.queries(limit=2.5).status_code == 400


def test_duplicate_tag_ids_collapse(api, seeded):
    sale = seeded.tags["sale"]
    assert api.set_tags([item("running shoes", "en", "GB", [sale, sale])]).json()[0]["tags"] == [
        sale]


def test_unmatched_item_is_404_naming_it_and_changes_nothing(api, seeded):
    before = snapshot(api)
    response = api.set_tags([
        item("running shoes", "en", "GB", [seeded.tags["sale"]]),
        item("no such query", "en", "US", []),
    ])
    assert response.status_code == 404
    assert response.json()["message"] == 'No query "no such query" (en, US) in this project.'
    assert snapshot(api) == before


def test_tag_of_another_project_is_400_and_changes_nothing(api, seeded):
    from service.org import admin

    foreign = seeded.run(lambda s: admin.create_tag(s, seeded.other_project_id, "x", "#000000"))
    before = snapshot(api)
    response = api.set_tags([
        item("running shoes", "en", "GB", [seeded.tags["sale"]]),
        item("running shoes", "en", "US", [foreign]),
    ])
    assert response.status_code == 400
    assert response.json()["message"] == [f"Tag {foreign} is not a tag of this project."]
    assert snapshot(api) == before


def test_same_item_twice_is_400(api, seeded):
    response = api.set_tags([item("running shoes", "en", "GB", []),
                             item("running shoes", "EN", "gb", [seeded.tags["sale"]])])
    assert response.status_code == 400
    assert "repeats item 0" in response.json()["message"][0]


def test_at_most_1000_items(api, seeded):
    response = api.set_tags([item(f"q{i}", "en", "US", []) for i in range(1001)])
    assert response.status_code == 400
    assert "at most 1000" in response.json()["message"][0]


def test_empty_list_is_a_no_op(api, seeded):
    response = api.set_tags([])
    assert response.status_code == 200 and response.json() == []


@pytest.mark.parametrize("body", [
    {},
    {"queries": "all"},
    {"queries": [{"query": "running shoes", "language": "en", "country": "GB"}]},
    {"queries": [{"query": "running shoes", "language": "en", "country": "GB",
                  "tagIds": ["1"]}]},
    {"queries": [{"query": "running shoes", "language": "en", "country": "GB",
                  "tagIds": [True]}]},
    {"queries": [{"query": "running shoes", "language": "en", "country": "GB",
                  "tagIds": [], "extra": 1}]},
    {"queries": [], "other": 1},
])
def test_invalid_bodies_are_400_with_messages(api, seeded, body):
    before = snapshot(api)
    response = api.call("PATCH", "/api/queries/many/tags-only", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == "Bad Request"
    assert isinstance(response.json()["message"], list) and response.json()["message"]
    assert snapshot(api) == before


def test_thousand_items_in_one_call(api, world):
    world.add_queries([(f"query number {i}", "en", "US", []) for i in range(1000)])
    tag = world.tags["brand"]
    response = api.set_tags([item(f"query number {i}", "en", "US", [tag]) for i in range(1000)])
    assert response.status_code == 200
    assert len(response.json()) == 1000
    assert api.queries(tagIds=[tag]).json()["page"]["totalRecords"] == 1000


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_call_that_loses_a_deadlock_is_run_again(api, seeded, service_app):
    """Another transaction holds the second of the call's rows, then asks for the first, which
    the call holds while it waits: PostgreSQL ends the call's transaction as the deadlock's
    victim. The call runs again once the other is done, and answers 200, not 503."""
    engine = service_app.extensions["tagdesk_engine"]
    lock = text("SELECT 1 FROM queries WHERE query = :query AND country = :country FOR UPDATE")
    answers = []
    call = threading.Thread(target=lambda: answers.append(api.set_tags([
        item("laufschuhe damen", "de", "DE", [seeded.tags["sale"]]),
        item("running shoes", "en", "US", [seeded.tags["sale"]])])))
    with engine.begin() as other:
        # Rows are locked in key order: the call takes "laufschuhe damen" first.
        other.execute(lock, {"query": "running shoes", "country": "US"})
        call.start()
        time.sleep(0.3)  # the call holds the first row and waits for the second
        other.execute(lock, {"query": "laufschuhe damen", "country": "DE"})
    call.join(30)
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert [record["tags"] for record in answer.json()] == [[seeded.tags["sale"]]] * 2
