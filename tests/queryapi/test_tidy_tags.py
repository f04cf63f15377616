"""The client side of editing and merging tags (POST /api/tags/update, merge, unmerge:
extensions) against the live service over HTTP: typed records with descriptions, a merge and
its undo with exact counts, the service's refusals as the client's errors, and a deployment
without the extensions."""

from __future__ import annotations

import pytest

from queryapi import (
    ApiError,
    Capabilities,
    Client,
    Conflict,
    InvalidRequest,
    NotFound,
    QueryFilters,
    Tag,
    TagMerge,
    TagUnmerge,
)
from queryapi.records import read_tag_merge

ROWS = [("red shoes", "en", "US", ["brand", "sale"]), ("blue shoes", "en", "GB", ["brand"]),
        ("laufschuhe", "de", "DE", ["sale"]), ("boots", "en", "US", [])]


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def counts(client: Client, project_id: str) -> dict[int, int]:
    return dict(client.facets(project_id).tags)


def test_a_tag_is_described_renamed_and_its_description_read_back(client, seeded):
    brand = seeded.tags["brand"]
    assert client.capabilities().tag_editing and client.capabilities().tag_merging
    tag = client.update_tag(seeded.project_id, brand, name="Brand", color="#0B5394",
                            description="Queries that name a brand of ours.")
    assert tag == Tag(brand, seeded.project_id, "Brand", "#0b5394",
                      "Queries that name a brand of ours.")
    listed = {t.name: t for t in client.iter_tags(seeded.project_id)}
    assert listed["Brand"] == tag
    assert listed["sale"].description is None
    cleared = client.update_tag(seeded.project_id, brand, clear_description=True)
    assert cleared.description is None and cleared.name == "Brand"


def test_refusals_are_the_clients_errors(client, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    with pytest.raises(Conflict, match='A tag named "sale" already exists'):
        client.update_tag(seeded.project_id, brand, name="SALE")
    with pytest.raises(InvalidRequest, match="at most 300 characters; this one has 301"):
        client.update_tag(seeded.project_id, brand, description="x" * 301)
    with pytest.raises(InvalidRequest, match="cannot be merged into itself"):
        client.merge_tag(seeded.project_id, brand, brand)
    with pytest.raises(NotFound, match="Tag 999999 not found"):
        client.update_tag(seeded.project_id, 999_999, name="x")
    with pytest.raises(InvalidRequest):
        client.merge_tag(seeded.project_id, True, sale)  # checked before anything is sent


def test_a_merge_and_its_undo_keep_every_count_exact(client, seeded):
    project, brand, sale = seeded.project_id, seeded.tags["brand"], seeded.tags["sale"]
    before = client.facets(project)
    merge = client.merge_tag(project, brand, sale)
    assert isinstance(merge, TagMerge)
    assert (merge.merged.id, merge.into.id, merge.queries) == (brand, sale, 2)
    assert brand not in counts(client, project) and counts(client, project)[sale] == 3
    assert client.list_queries(project, QueryFilters(tag_ids=(sale,))).page.total_records == 3
    undone = client.unmerge_tag(project, merge.operation)
    assert undone == TagUnmerge(merge.merged, merge.operation, 2)
    assert client.facets(project) == before
    with pytest.raises(NotFound, match="Merge not found"):
        client.unmerge_tag(project, merge.operation)


def test_without_the_extensions_nothing_is_offered(without_extensions, world):
    with Client(without_extensions.url, world.key) as client:
        assert client.capabilities() == Capabilities()
        with pytest.raises(NotFound):
            client.update_tag(world.project_id, world.tags["brand"], name="x")
        with pytest.raises(NotFound):
            client.merge_tag(world.project_id, world.tags["brand"], world.tags["sale"])


def test_an_answer_that_does_not_fit_is_a_sentence():
    with pytest.raises(ApiError, match="merged.color is missing"):
        read_tag_merge({"merged": {"id": 1, "project": "p", "name": "x"},
                        "into": {}, "operation": "0", "queries": 1}, "POST /api/tags/merge")
