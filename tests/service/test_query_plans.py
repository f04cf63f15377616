"""Both shapes of the queries/list statement (collect-and-sort, and walk-in-order) return
exactly what a plain reading of the filters says, for every sort order."""

import random

import pytest

from service import search

LANGS = [("de", "DE"), ("de", "AT"), ("en", "US"), ("en", "GB"), ("fr", "FR"), ("pl", "PL")]
WORDS = ["schuhe", "shoes", "chaussures", "buty", "jacke", "jacket", "rot", "red", "größe"]


@pytest.fixture
def dataset(world):
    rng = random.Random(3)
    names = list(world.tags)
    rows = set()
    while len(rows) < 300:
        language, country = rng.choice(LANGS)
        text = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        rows.add((text, language, country))
    world.add_queries([(q, lang, c, rng.sample(names, rng.choice([0, 0, 1, 1, 2])))
                       for q, lang, c in sorted(rows)])
    return world


def reference(records, tag_ids_by_name, body):
    def keep(r):
        if body.get("query") and body["query"].casefold() not in r["query"].casefold():
            return False
        if body.get("languages") and r["language"] not in body["languages"]:
            return False
        if body.get("countries") and r["country"] not in body["countries"]:
            return False
        wanted = {tag_ids_by_name[n] for n in body.get("tagNames", [])}
        return not wanted or bool(set(r["tags"]) & wanted)
    return [r for r in records if keep(r)]


FILTERS = [
    {},
    {"languages": ["de"]},
    {"languages": ["de", "fr"], "countries": ["DE", "FR"]},
    {"query": "schu"},
    {"query": "rö"},
    {"tagNames": ["brand"]},
    {"tagNames": ["brand", "local"], "languages": ["en"]},
    {"query": "shoe", "tagNames": ["sale"]},
]
SORTS = [("updatedAt", "DESC"), ("query", "ASC"), ("language", "DESC"), ("country", "ASC"),
         ("id", "ASC")]


@pytest.mark.parametrize("share", [0.0, 2.0], ids=["walk-in-order", "collect-and-sort"])
def test_every_filter_and_sort_matches_the_reference(api, dataset, monkeypatch, share):
    monkeypatch.setattr(search, "SCAN_IN_ORDER_SHARE", share)
    everything = api.queries(limit=1000).json()["results"]
    for body in FILTERS:
        expected_set = reference(everything, dataset.tags, body)
        for field, direction in SORTS:
            got = []
            page = 1
            while page:
                answer = api.queries(**body, sort=[{"field": field, "direction": direction}],
                                     limit=7, page=page).json()
                assert answer["page"]["totalRecords"] == len(expected_set), body
                got += answer["results"]
                page = answer["page"]["nextPage"]
            expected = sorted(expected_set, key=lambda r: r["id"])
            expected.sort(key=lambda r: r[field], reverse=direction == "DESC")
            assert [r["id"] for r in got] == [r["id"] for r in expected], (body, field)


def test_text_counts_are_exact_whether_or_not_a_project_is_contiguous(api, world):
    shoes = [(f"running shoes {i}", "en", "US", []) for i in range(5)]
    world.add_queries(shoes[:3])
    assert api.queries(query="shoes").json()["page"]["totalRecords"] == 3
    # Rows of another project land between this project's rows: the span no longer holds
    # only this project, and the count must still be exact.
    world.add_queries([("other shoes", "en", "US", [])], project_id=world.other_project_id)
    world.add_queries(shoes[3:])
    assert api.queries(query="shoes").json()["page"]["totalRecords"] == 5
    assert api.queries(query="shoes", page=1, limit=10).json()["results"][0]["project"] == (
        world.project_id)


def test_contiguous_span_is_only_claimed_when_true(world):
    world.add_queries([("a b c", "en", "US", []), ("d e f", "en", "US", [])])
    span = world.run(lambda s: search._contiguous_span(s, world.project_id))
    assert span is not None and span[1] - span[0] == 1
    world.add_queries([("x y z", "en", "US", [])], project_id=world.other_project_id)
    world.add_queries([("g h i", "en", "US", [])])
    assert world.run(lambda s: search._contiguous_span(s, world.project_id)) is None
