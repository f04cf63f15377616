"""POST /api/queries/versions (an extension): the updatedAt of queries named by id, which
moves with every change of their tags; ids the project has no query of are left out."""

import pytest

VERSIONS = "/api/queries/versions"
ROWS = [
    ("running shoes", "en", "US", ["brand"]),
    ("laufschuhe", "de", "DE", []),
    ("chaussures", "fr", "FR", ["sale"]),
]


@pytest.fixture
def records(api, world):
    world.add_queries(ROWS)
    return {r["query"]: r for r in api.queries(limit=10).json()["results"]}


def versions(api, ids):
    response = api.post(VERSIONS, {"ids": ids})
    assert response.status_code == 200, response.text
    return {r["id"]: r["updatedAt"] for r in response.json()["results"]}


def test_answers_the_listed_updated_at_of_each_id_in_order(api, records):
    ids = [records["chaussures"]["id"], records["running shoes"]["id"]]
    response = api.post(VERSIONS, {"ids": [*ids, ids[0]]})
    assert response.status_code == 200, response.text
    assert response.json() == {"results": [
        {"id": ids[0], "updatedAt": records["chaussures"]["updatedAt"]},
        {"id": ids[1], "updatedAt": records["running shoes"]["updatedAt"]}]}


def test_a_tag_change_moves_only_that_querys_updated_at(api, world, records):
    ids = [record["id"] for record in records.values()]
    before = versions(api, ids)
    edited = api.call("PATCH", "/api/queries/many/tags-edit", json={"queries": [
        {"query": "laufschuhe", "language": "de", "country": "DE",
         "add": [world.tags["brand"]]}]})
    assert edited.status_code == 200, edited.text
    after = versions(api, ids)
    changed = {query_id for query_id in ids if after[query_id] != before[query_id]}
    assert changed == {records["laufschuhe"]["id"]}
    assert after[records["laufschuhe"]["id"]] == edited.json()[0]["updatedAt"]


def test_ids_of_no_query_of_the_project_are_left_out(api, world, records):
    world.add_queries([("other shoes", "en", "US", [])], project_id=world.other_project_id)
    other = api.queries().json()["results"][0]["id"]  # this project's, to keep beside them
    unknown = ["3c1d5e2f-8a47-4b9c-a0e6-7f2b1d4c9e53", "not an id", ""]
    assert versions(api, [*unknown, other]) == {other: records_by_id(records)[other]}


def records_by_id(records):
    return {r["id"]: r["updatedAt"] for r in records.values()}


def test_an_empty_list_answers_no_results(api, records):
    assert versions(api, []) == {}


@pytest.mark.parametrize(("body", "message"), [
    ({}, "'ids' is required."),
    ({"ids": "abc"}, "'ids': Input should be a valid list."),
    ({"ids": [3]}, "'ids.0': Input should be a valid string."),
    ({"ids": ["a"] * 1001}, "'ids': List should have at most 1000 items after validation, "
                            "not 1001."),
    ({"ids": [], "since": "x"}, "Unknown field 'since'."),
])
def test_bad_bodies_are_a_400_naming_the_field(api, records, body, message):
    response = api.post(VERSIONS, body)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [message]
    assert response.json()["error"] == "Bad Request"


def test_is_in_the_openapi_document_as_an_extension(api):
    document = api.call("GET", "/api/openapi.json").json()
    assert document["paths"][VERSIONS]["post"]["x-tagdesk-extension"] is True


def test_reads_the_rows_by_their_ids_not_the_whole_project(api, records, statements,
                                                           service_app):
    """On SQLite, a project in the WHERE made it walk the project's update-time index: at
    100,000 queries a poll cost more than a page of queries/list."""
    engine = service_app.extensions["tagdesk_engine"]
    if engine.dialect.name != "sqlite":
        pytest.skip("the plan checked is SQLite's")
    ids = [record["id"] for record in records.values()]
    statements.clear()
    versions(api, ids)
    (read,) = [s for s in statements if s.startswith("SELECT queries.id")]
    with engine.connect() as connection:
        plan = " ".join(row[3] for row in connection.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + read, tuple([ids[0]] * read.count("?"))))
    assert "(id=?)" in plan and "ix_queries_updated" not in plan, plan
