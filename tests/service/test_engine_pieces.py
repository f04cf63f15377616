"""The bitmaps' pieces: keys cut by chunk, and counts exact for a project whose row keys
spread over several chunks."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import text

from service.engine.pieces import CHUNK_SHIFT, chunked
from tests.service.counters import assert_counters_exact

CHUNK = 1 << CHUNK_SHIFT


def test_keys_are_cut_at_every_chunk_boundary():
    keys = BitMap([0, 1, CHUNK - 1, CHUNK, CHUNK + 5, 3 * CHUNK, 3 * CHUNK + CHUNK - 1])
    assert chunked(keys) == {0: BitMap([0, 1, CHUNK - 1]), 1: BitMap([CHUNK, CHUNK + 5]),
                             3: BitMap([3 * CHUNK, 4 * CHUNK - 1])}
    assert chunked(BitMap()) == {}
    assert chunked(BitMap([7 * CHUNK + 2])) == {7: BitMap([7 * CHUNK + 2])}


def test_a_project_over_several_chunks_counts_exactly(api, world):
    """Row keys far apart (as after other projects' imports): written by hand, so the next
    read builds the bitmaps from the rows; then set-tags changes pieces of several chunks."""
    def spread(session):
        for n, pk in enumerate([5, CHUNK + 1, 2 * CHUNK + 7, 5 * CHUNK]):
            session.execute(text(
                "INSERT INTO queries (pk, id, project_id, query, language, country, updated_at) "
                "VALUES (:pk, :id, :p, :q, 'de', 'DE', '2026-01-01 00:00:00')"),
                {"pk": pk, "id": f"00000000-0000-4000-8000-{n:012d}", "p": world.project_id,
                 "q": f"schuhe {n}"})

    world.run(spread)
    assert api.queries(query="schuhe").json()["page"]["totalRecords"] == 4
    answer = api.set_tags([{"query": f"schuhe {n}", "language": "de", "country": "DE",
                            "tagIds": [world.tags["brand"]]} for n in (1, 2, 3)])
    assert answer.status_code == 200, answer.text
    assert api.queries(tagNames=["brand"]).json()["page"]["totalRecords"] == 3
    facets = api.call("POST", "/api/queries/facets", json={"query": "schuhe"}).json()
    assert facets["untagged"] == 1
    assert_counters_exact(world)
