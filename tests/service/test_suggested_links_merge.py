"""An accepted suggestion's link says so (`tagSources.suggested`, shown as "Suggested, accepted
by …"), and keeps saying so through a merge of its tag and the merge's Undo, like its author and
time. Over real HTTP on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL; migration 0042
forward and back."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect

from tests.service.migrating import engine_of_its_own, migrate, model_differences_after
from tests.service.test_suggestions_api import ACCEPT, learned, listed, rows


def sources(api) -> dict[str, dict]:
    """query text → its tagSources."""
    return {query: record.get("tagSources", {}) for query, record in listed(api).items()}


def test_an_accepted_link_stays_suggested_through_a_merge_and_its_undo(api, world,
                                                                       service_app):
    world.add_queries(rows())
    assert learned(api, service_app)["state"] == "ready"
    brand, local = world.tags["brand"], world.tags["local"]
    chosen = [record for record in listed(api, include=["suggestions"]).values()
              if brand in {item["tagId"] for item in record["suggestions"]}][:2]
    assert len(chosen) == 2
    accepted = api.post(ACCEPT, {"tagId": brand, "queryIds": [r["id"] for r in chosen]})
    assert accepted.status_code == 200, accepted.text
    by_hand = next(query for query, record in listed(api).items()
                   if brand in record["tags"] and query not in {r["query"] for r in chosen})
    before = sources(api)
    for record in chosen:
        assert before[record["query"]][str(brand)]["suggested"] is True
    assert before[by_hand].get(str(brand), {}).get("suggested") is None

    merged = api.post("/api/tags/merge", {"id": brand, "intoId": local})
    assert merged.status_code == 200, merged.text
    after = sources(api)
    for record in chosen:
        source = after[record["query"]][str(local)]
        assert source["suggested"] is True, source
        assert source.get("addedBy") == before[record["query"]][str(brand)].get("addedBy")
        assert source["addedAt"] == before[record["query"]][str(brand)]["addedAt"]
    assert after[by_hand].get(str(local), {}).get("suggested") is None

    undone = api.post("/api/tags/unmerge", {"operation": merged.json()["operation"]})
    assert undone.status_code == 200, undone.text
    restored = sources(api)
    for record in chosen:
        assert restored[record["query"]][str(brand)]["suggested"] is True
    assert restored[by_hand].get(str(brand), {}).get("suggested") is None


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0042_keeps_the_mark_with_merged_links_and_takes_it_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_merged_suggested_") as engine:
        differences = model_differences_after(engine, "0041", "0042")
        assert [d for d in differences if "linked_suggested" in repr(d)] == []
        assert "linked_suggested" in columns_of(engine)
        migrate(engine, "0041", down=True)
        assert "linked_suggested" not in columns_of(engine)


def columns_of(engine) -> set[str]:
    return {column["name"] for column in inspect(engine).get_columns("tag_merge_links")}
