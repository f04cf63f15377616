"""A rule applied to the queries already there, its tags taken back and put back — POST
/api/rules/apply, unapply and restore, an extension — and where each tag of a query came
from (`tagSources`: the rule, who the caller said, when), over real HTTP on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL; migration 0029 forward and back."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from service.engine import rule_links
from tests.service.migrating import (
    engine_of_its_own,
    migrate,
    model_differences_after,
)
from tests.support.api import Api

APPLY, UNAPPLY, RESTORE = (f"/api/rules/{name}" for name in ("apply", "unapply", "restore"))
ROWS = [(f"schuhe {n}", "de", "DE", []) for n in range(7)] + [
    ("laufschuhe", "de", "AT", ["sale"]), ("running shoes", "en", "US", []),
    ("shoe store", "en", "GB", ["brand"])]


def total(api: Api, **body) -> int:
    return api.queries(limit=1, **body).json()["page"]["totalRecords"]


def records(api: Api, **body) -> dict[str, dict]:
    found = api.queries(limit=100, **body).json()["results"]
    return {record["query"]: record for record in found}


@pytest.fixture
def rule(api, world):
    world.add_queries(ROWS)
    created = api.post("/api/rules/create", {"name": "German shoes", "condition": {
        "query": "schuh"}, "tagIds": [world.tags["brand"], world.tags["sale"]]})
    assert created.status_code == 201, created.text
    return created.json()


def apply_all(api: Api, rule_id: int) -> list[dict]:
    parts, cursor = [], 0
    while True:
        response = api.post(APPLY, {"id": rule_id, "cursor": cursor})
        assert response.status_code == 200, response.text
        parts.append(response.json())
        cursor = parts[-1]["cursor"]
        if cursor is None:
            return parts


def test_apply_tags_every_match_lacking_a_tag_in_parts(api, world, rule, monkeypatch):
    monkeypatch.setattr(rule_links, "PART", 3)  # the server runs in this process
    before = records(api)
    brand, sale = world.tags["brand"], world.tags["sale"]
    parts = apply_all(api, rule["id"])
    assert [part["checked"] for part in parts] == [3, 3, 2]
    assert [part["remaining"] for part in parts] == [5, 2, 0]
    assert {part["matching"] for part in parts} == {8}
    assert sum(part["tagged"] for part in parts) == 8  # laufschuhe lacked brand
    after = records(api)
    for text, record in after.items():
        if "schuh" in text:
            assert set(record["tags"]) == {brand, sale}
            assert record["updatedAt"] > before[text]["updatedAt"]
            sources = record["tagSources"]
            assert sources[str(brand)]["ruleId"] == rule["id"]
            assert sources[str(brand)]["addedAt"].endswith("Z")
        else:
            assert record == before[text]  # not matched: untouched
    # The laufschuhe kept its own sale (no rule made it).
    assert "ruleId" not in after["laufschuhe"].get("tagSources", {}).get(str(sale), {})
    # The counts are the engine's, kept in the same transaction.
    assert total(api, tagIds=[brand], tagMatch="all") == 9
    assert total(api, tagIds=[brand, sale], tagMatch="all") == 8
    again = apply_all(api, rule["id"])
    assert sum(part["tagged"] for part in again) == 0


def test_unapply_since_takes_back_only_the_latest_apply(api, world, rule):
    brand, sale = world.tags["brand"], world.tags["sale"]
    apply_all(api, rule["id"])
    # Someone takes the tags off one query; `since` is after that, and the second apply
    # puts them back: that apply alone is undone.
    api.set_tags([{"query": "schuhe 0", "language": "de", "country": "DE", "tagIds": []}])
    stamp = records(api)["schuhe 0"]["updatedAt"]
    apply_all(api, rule["id"])  # schuhe 0 tagged again, after `stamp`
    response = api.post(UNAPPLY, {"id": rule["id"], "since": stamp})
    assert response.status_code == 200, response.text
    done = response.json()
    assert (done["removed"], done["queries"], done["more"]) == (2, 1, False)
    assert records(api)["schuhe 0"]["tags"] == []
    assert total(api, tagIds=[brand, sale], tagMatch="all") == 7


def test_unapply_takes_back_every_tag_it_added_and_restore_puts_them_back(api, world, rule):
    brand, sale = world.tags["brand"], world.tags["sale"]
    apply_all(api, rule["id"])
    tagged = records(api)
    response = api.post(UNAPPLY, {"id": rule["id"]})
    assert response.status_code == 200, response.text
    done = response.json()
    assert (done["removed"], done["queries"], done["more"]) == (15, 8, False)
    after = records(api)
    assert after["laufschuhe"]["tags"] == [sale]  # its own tag stays
    assert after["shoe store"]["tags"] == [brand]
    assert total(api, untagged=True) == 8
    # Another project's key cannot restore this project's operation.
    other = api.post(RESTORE, {"operation": done["operation"]},
                **{"x-project-id": world.other_project_id})
    assert other.status_code == 200 and other.json()["restored"] == 0
    restored = api.post(RESTORE, {"operation": done["operation"]})
    assert restored.status_code == 200, restored.text
    assert restored.json()["restored"] == 15
    back = records(api)
    for text in back:
        assert sorted(back[text]["tags"]) == sorted(tagged[text]["tags"])
        for tag, source in back[text].get("tagSources", {}).items():
            assert source == tagged[text]["tagSources"][tag]
    assert total(api, tagIds=[brand, sale], tagMatch="all") == 8
    assert api.post(RESTORE, {"operation": done["operation"]}).json()["restored"] == 0


def test_who_added_a_tag_is_what_the_caller_said(api, world):
    world.add_queries(ROWS)
    item = {"query": "running shoes", "language": "en", "country": "US",
            "tagIds": [world.tags["sale"]]}
    response = api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [item]},
                        headers={"X-Tagdesk-Actor": "J%C3%BCrgen M%C3%BCller"})
    assert response.status_code == 200, response.text
    source = records(api)["running shoes"]["tagSources"][str(world.tags["sale"])]
    assert source["addedBy"] == "Jürgen Müller" and source["addedAt"].endswith("Z")
    assert "ruleId" not in source
    for bad, words in [("%FF", "UTF-8"), ("a%0Ab", "control characters"),
                       ("x" * 101, "at most 100")]:
        refused = api.call("PATCH", "/api/queries/many/tags-only", json={"queries": [item]},
                           headers={"X-Tagdesk-Actor": bad})
        assert refused.status_code == 400 and words in refused.text, refused.text


@pytest.mark.parametrize("path, body, words", [
    (APPLY, {"id": 1, "cursor": -1}, "cursor"),
    (APPLY, {"id": 1, "cursor": "3"}, "cursor"),
    (UNAPPLY, {"id": 1, "since": "yesterday"}, "2026-11-28T09:30:00.000Z"),
    (UNAPPLY, {"id": 1, "operation": "../../etc"}, "operation"),
    (RESTORE, {}, "operation"),
    (RESTORE, {"operation": "A" * 32}, "operation"),
])
def test_bad_bodies_are_400_sentences(api, rule, path, body, words):
    response = api.post(path, body)
    assert response.status_code == 400 and words in response.text, response.text


def test_other_organizations_rules_are_404(api, world, rule):
    other_org, other_key, other_project = world.new_org()
    theirs = Api(api.base_url, other_key, other_project)
    for path in (APPLY, UNAPPLY):
        response = theirs.post(path, {"id": rule["id"]})
        assert response.status_code == 404, response.text
    scoped = Api(api.base_url, world.new_key(project_id=world.other_project_id),
                 world.other_project_id)
    assert scoped.post(APPLY, {"id": rule["id"]}).status_code == 404
    assert total(api, tagIds=[world.tags["brand"]]) == 1  # nothing changed


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0029_adds_tag_provenance_and_takes_it_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_provenance_") as engine:
        differences = model_differences_after(engine, "0028", "0029")
        assert [d for d in differences if "rule_removals" in repr(d) or "added_" in repr(d)
                or "ix_query_tags_rule" in repr(d)] == []
        columns = {c["name"] for c in inspect(engine).get_columns("query_tags")}
        assert {"added_at", "added_by"} <= columns
        migrate(engine, "0028", down=True)
        assert "rule_removals" not in inspect(engine).get_table_names()
        assert "added_at" not in {c["name"] for c in inspect(engine).get_columns("query_tags")}
        migrate(engine, "head")
