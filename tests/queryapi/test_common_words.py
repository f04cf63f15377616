"""The client's common words (POST /api/queries/words, an extension) against the live
service, and a deployment without the extension."""

from __future__ import annotations

import pytest

from queryapi import Client, CommonWords, InvalidRequest, NotFound, QueryFilters


@pytest.fixture
def shoes(world):
    world.add_queries([("running shoes", "en", "US", ["brand"]),
                       ("running shoes for kids", "en", "US", []),
                       ("trail running", "en", "GB", []),
                       ("laufschuhe für kinder", "de", "DE", [])])
    return world


def test_the_words_of_a_view_with_their_counts(client, shoes):
    assert client.capabilities().common_words
    found = client.common_words(shoes.project_id, QueryFilters(untagged=True), limit=2)
    # "running" is in two of the three untagged queries; "for" and "für" are stop words.
    assert found == CommonWords(total_records=3, words=(("running", 2), ("kids", 1)),
                                phrases=(("running shoes", 1), ("trail running", 1)))


def test_a_limit_past_fifty_is_an_invalid_request(client, shoes):
    with pytest.raises(InvalidRequest, match="'limit'"):
        client.common_words(shoes.project_id, limit=51)


def test_a_deployment_without_the_extension(without_extensions, world, shoes):
    with Client(without_extensions.url, world.key) as plain:
        assert not plain.capabilities().common_words
        with pytest.raises(NotFound):
            plain.common_words(shoes.project_id)
