"""The count engine's bitmaps checked against the rows: every piece of every project equal to
what a plain reading of its queries and links gives (the text folded by Unicode's simple
case folding, cut at spaces into words and into its strings of one and two characters); each
link's copy of its query's time; no write left the bitmaps behind."""

from __future__ import annotations

from collections import defaultdict

from pyroaring import BitMap
from sqlalchemy import text

# The numbers a query may carry, as the migration that made their columns names them.
NUMBER_NAMES = ("clicks", "impressions", "ctr", "position", "volume", "cpc", "difficulty")
KINDS = {"all": 0, "word": 1, "short": 2, "language": 3, "country": 4, "tag": 5, "number": 6,
         "suggested": 7}


def simple_fold(value: str) -> str:
    """Unicode's simple case folding, one character to one (as the text filter promises)."""
    def one(character: str) -> str:
        for folded in (character.casefold(), character.lower()):
            if len(folded) == 1:
                return folded
        return character
    return "".join(map(one, value))


def expected_bitmaps(session) -> dict[tuple[str, int, str], BitMap]:
    found: dict[tuple[str, int, str], BitMap] = defaultdict(BitMap)
    for pk, project, query, language, country in session.execute(text(
            "SELECT pk, project_id, query, language, country FROM queries")):
        project = str(project)
        folded = simple_fold(query)
        found[project, KINDS["all"], ""].add(pk)
        for word in folded.split(" "):
            if word:
                found[project, KINDS["word"], word].add(pk)
        for n in (1, 2):
            for start in range(len(folded) - n + 1):
                found[project, KINDS["short"], folded[start:start + n]].add(pk)
        found[project, KINDS["language"], language].add(pk)
        found[project, KINDS["country"], country].add(pk)
    for pk, project, name, value in session.execute(text(" UNION ALL ".join(
            f"SELECT pk, project_id, '{name}', {name} FROM queries WHERE {name} IS NOT NULL"
            for name in NUMBER_NAMES))):
        # A bit-sliced index: the queries that know the number, and those with each bit set.
        found[str(project), KINDS["number"], name].add(pk)
        for bit in range(value.bit_length()):
            if value >> bit & 1:
                found[str(project), KINDS["number"], f"{name}:{bit}"].add(pk)
    # (No products of the weighted numbers: not kept, migration 0046.)
    for pk, tag_id, project in session.execute(text(
            "SELECT l.query_pk, l.tag_id, t.project_id FROM query_tags l "
            "JOIN tags t ON t.id = l.tag_id")):
        found[str(project), KINDS["tag"], str(tag_id)].add(pk)
    for pk, tag_id, project in session.execute(text(
            "SELECT s.query_pk, s.tag_id, s.project_id FROM query_suggestions s "
            "JOIN suggestion_models m ON m.project_id = s.project_id "
            "WHERE s.confidence >= m.default_confidence")):
        found[str(project), KINDS["suggested"], str(tag_id)].add(pk)
    return dict(found)


def stored_bitmaps(session) -> dict[tuple[str, int, str], BitMap]:
    found: dict[tuple[str, int, str], BitMap] = defaultdict(BitMap)
    for project, kind, value, keys in session.execute(text(
            "SELECT project_id, kind, value, keys FROM engine_pieces")):
        found[str(project), kind, value] |= BitMap.deserialize(bytes(keys))
    return {key: keys for key, keys in found.items() if keys}


def engine_state(session) -> tuple[dict, dict, int]:
    """(the bitmaps a plain reading of the rows gives, those stored, how many projects a write
    went around the engine in since their bitmaps were built)."""
    return expected_bitmaps(session), stored_bitmaps(session), session.execute(text(
        "SELECT count(*) FROM projects WHERE changes_outside <> changes_indexed")).scalar_one()


def assert_engine_exact(session) -> None:
    """The engine's bitmaps are those of the rows, and no project is behind."""
    expected, stored, behind = engine_state(session)
    assert behind == 0
    assert stored.keys() == expected.keys(), set(stored) ^ set(expected)
    wrong = [key for key in expected if stored[key] != expected[key]]
    assert not wrong, wrong[:10]


def assert_counters_exact(world):
    world.run(assert_engine_exact)
    # Each link carries its query's updated_at.
    stale = world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM query_tags JOIN queries ON queries.pk = query_tags.query_pk "
        "WHERE query_tags.updated_at <> queries.updated_at")).scalar_one())
    assert stale == 0
