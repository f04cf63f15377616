"""The client's edit_tags (PATCH /api/queries/many/tags-edit, an extension): tags added and
removed against the live service, the others kept; refused before sending what the service
would refuse; a deployment without the extension neither offers nor answers it."""

from __future__ import annotations

import pytest

from queryapi import Client, InvalidRequest, NotFound, TagEdit


def tags_of(client, project_id) -> dict[str, tuple[int, ...]]:
    return {(q.query, q.country): q.tags for q in client.iter_queries(project_id)}


def test_edit_tags_adds_and_removes_and_keeps_the_other_tags(client, seeded):
    t = seeded.tags
    assert client.capabilities().tag_edits
    updated = client.edit_tags(seeded.project_id, [
        TagEdit("running shoes", "en", "US", add=[t["local"]], remove=[t["brand"]]),
        TagEdit("shoe store", "en", "GB", add=[t["sale"], t["brand"]]),
    ])
    assert [(q.query, q.tags) for q in updated] == [
        ("running shoes", tuple(sorted((t["sale"], t["local"])))),
        ("shoe store", tuple(sorted((t["sale"], t["brand"]))))]
    now = tags_of(client, seeded.project_id)
    assert now[("running shoes", "US")] == tuple(sorted((t["sale"], t["local"])))
    assert now[("schuhe damen", "AT")] == (t["brand"],)  # not named: as it was


def test_a_tag_both_added_and_removed_is_refused_before_sending(client, seeded):
    t = seeded.tags
    with pytest.raises(InvalidRequest, match="Item 0 both adds and removes tag"):
        client.edit_tags(seeded.project_id, [TagEdit("x", "en", "US", add=[t["sale"]],
                                                     remove=[t["sale"]])])
    with pytest.raises(InvalidRequest, match="Item 0 is not a TagEdit"):
        client.edit_tags(seeded.project_id, [{"query": "x"}])
    assert client.stats.requests == 0


def test_without_the_extension_it_is_not_offered_and_not_answered(without_extensions, seeded):
    with Client(without_extensions.url, seeded.key) as client:
        assert not client.capabilities().tag_edits
        with pytest.raises(NotFound):
            client.edit_tags(seeded.project_id, [TagEdit("shoe store", "en", "GB",
                                                         add=[seeded.tags["sale"]])])
