"""The client's query_versions (POST /api/queries/versions, an extension) against the live
service over HTTP; and the same service behind a proxy that hides every extension, where the
capability is absent."""

from __future__ import annotations

import pytest

from queryapi import Client, InvalidRequest, TagEdit


def test_reads_each_querys_last_change_by_id(client, world):
    world.add_queries([("schuhe", "de", "DE", []), ("jacke", "de", "DE", [])])
    assert client.capabilities().query_versions
    records = {q.query: q for q in client.list_queries(world.project_id).results}
    ids = [records["schuhe"].id, records["jacke"].id, "3c1d5e2f-8a47-4b9c-a0e6-7f2b1d4c9e53"]
    assert client.query_versions(world.project_id, ids) == {
        q.id: q.updated_at for q in records.values()}
    (edited,) = client.edit_tags(world.project_id, [
        TagEdit("jacke", "de", "DE", add=(world.tags["brand"],))])
    after = client.query_versions(world.project_id, ids)
    assert after[records["jacke"].id] == edited.updated_at > records["jacke"].updated_at
    assert after[records["schuhe"].id] == records["schuhe"].updated_at
    sent = client.stats.requests
    with pytest.raises(InvalidRequest, match="at most 1000"):
        client.query_versions(world.project_id, ["x"] * 1001)
    assert client.stats.requests == sent  # refused before it was sent


def test_a_deployment_without_the_extension_offers_no_versions(without_extensions, world):
    with Client(without_extensions.url, world.key) as client:
        assert not client.capabilities().query_versions
