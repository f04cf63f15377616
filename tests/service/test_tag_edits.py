"""PATCH /api/queries/many/tags-edit (an extension): tags added and removed, the others a
query carries kept; set-tags' matching, checks, all-or-nothing and answer."""

import pytest

from service.org import admin
from tests.support.api import by_rule

ROWS = [
    ("laufschuhe damen", "de", "DE", ["brand"]),
    ("running shoes", "en", "US", ["brand", "sale"]),
    ("running shoes", "en", "GB", []),
]
EDIT = "/api/queries/many/tags-edit"


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def item(query, language, country, add=(), remove=()):
    return {"query": query, "language": language, "country": country, "add": list(add),
            "remove": list(remove)}


def edit(api, items, **headers):
    return api.call("PATCH", EDIT, json={"queries": items}, headers=headers)


def tags_now(api) -> dict:
    results = api.queries(limit=1000).json()["results"]
    return {(r["query"], r["country"]): (r["tags"], r["updatedAt"]) for r in results}


def test_adds_and_removes_keeping_the_other_tags_in_request_order(api, seeded):
    t = seeded.tags
    before = tags_now(api)
    response = edit(api, [item("running shoes", "en", "US", add=[t["local"]],
                               remove=[t["brand"]]),
                          item("laufschuhe damen", "DE", "de", add=[t["brand"]]),
                          item("running shoes", "en", "GB", remove=[t["sale"]])])
    assert response.status_code == 200, response.text
    records = response.json()
    assert [(r["query"], r["country"]) for r in records] == [
        ("running shoes", "US"), ("laufschuhe damen", "DE"), ("running shoes", "GB")]
    assert records[0]["tags"] == sorted([t["sale"], t["local"]])
    assert records[1]["tags"] == [t["brand"]]  # had it already: nothing changed
    assert records[2]["tags"] == []
    after = tags_now(api)
    assert after[("running shoes", "US")][0] == sorted([t["sale"], t["local"]])
    assert after[("running shoes", "US")][1] != before[("running shoes", "US")][1]
    # updatedAt moves only where the tags changed.
    assert after[("laufschuhe damen", "DE")] == before[("laufschuhe damen", "DE")]
    assert after[("running shoes", "GB")] == before[("running shoes", "GB")]
    # Sending it again gives the same tags.
    assert edit(api, [item("running shoes", "en", "US", add=[t["local"]],
                           remove=[t["brand"]])]).json()[0]["tags"] == records[0]["tags"]


def test_the_links_it_adds_record_who_made_them(api, seeded):
    t = seeded.tags
    response = edit(api, [item("running shoes", "en", "GB", add=[t["sale"]])],
                    **{"X-Tagdesk-Actor": "Ann%20Lee"})
    assert response.status_code == 200
    record = next(r for r in api.queries(limit=1000).json()["results"]
                  if r["country"] == "GB")
    assert record["tagSources"][str(t["sale"])]["addedBy"] == "Ann Lee"
    assert by_rule(record) == {}


@pytest.mark.parametrize(("items", "status", "said"), [
    (lambda t: [item("running shoes", "en", "US", add=[t["sale"]], remove=[t["sale"]])], 400,
     'Item 0 ("running shoes" (en, US)) both adds and removes tag'),
    (lambda t: [item("running shoes", "en", "GB", add=[t["sale"]]),
                item("running shoes", "en", "US", add=[999])], 400,
     "Tag 999 is not a tag of this project."),
    (lambda t: [item("running shoes", "en", "GB", add=[t["sale"]]),
                item("running shoes", "EN", "gb", add=[t["brand"]])], 400,
     "Item 1 repeats item 0"),
    (lambda t: [item("running shoes", "en", "GB", add=[t["sale"]]),
                item("Running Shoes", "en", "US", remove=[t["brand"]])], 404,
     'No query "Running Shoes" (en, US) in this project.'),
    (lambda t: [{"query": "running shoes", "language": "en", "country": "GB",
                 "tagIds": [t["sale"]]}], 400, "tagIds"),
])
def test_a_refused_call_says_why_and_changes_nothing(api, seeded, items, status, said):
    before = tags_now(api)
    response = edit(api, items(seeded.tags))
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusCode"] == status
    message = body["message"] if isinstance(body["message"], str) else " ".join(body["message"])
    assert said in message
    assert tags_now(api) == before


def test_a_tag_of_another_project_is_refused(api, seeded, world):
    theirs = world.run(lambda s: admin.create_tag(s, world.other_project_id, "elsewhere",
                                                  "#1f77b4"))
    response = edit(api, [item("running shoes", "en", "GB", add=[theirs])])
    assert response.status_code == 400
    assert f"Tag {theirs} is not a tag of this project." in response.json()["message"]


def test_removing_a_tag_that_is_gone_changes_nothing_and_is_not_refused(api, seeded):
    """A writer that read a tag before it was merged away (or deleted) still gets what it
    asked for: no query carries it. Its other changes are made."""
    t = seeded.tags
    merged = api.post("/api/tags/merge", {"id": t["question"], "intoId": t["sale"]})
    assert merged.status_code == 200, merged.text
    response = edit(api, [item("running shoes", "en", "GB", add=[t["local"]],
                               remove=[t["question"]])])
    assert response.status_code == 200, response.text
    assert response.json()[0]["tags"] == [t["local"]]


def test_the_openapi_document_offers_it_as_an_extension(api):
    operation = api.call("GET", "/api/openapi.json").json()["paths"][EDIT]["patch"]
    assert operation["x-tagdesk-extension"] is True
