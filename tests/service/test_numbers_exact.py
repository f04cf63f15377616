"""The numbers of queries against brute force, over HTTP, on each database: ranges
(`metricRanges`) in lists and facets, sorts by each number in both directions (a query without
the number after those with it, ties by id), and the facets' sums beside every count — after an
import in ranges, a few-row insert, numbers updated by rows of present keys (both paths),
set-tags, a merge, a tag's deletion and hand-written SQL around the engine. Whole numbers
exactly; averages within 1e-9 relative."""

from __future__ import annotations

import math
import random
import time

import pytest
from sqlalchemy import text

from service.engine.numbers import BY_NAME, NAMES, NUMBERS
from service.imports import imports
from service.org import admin
from service.settings import project_changes
from tests.service.counters import assert_counters_exact

LANGUAGES = ["de", "en", "fr"]
COUNTRIES = ["DE", "US"]


def random_numbers(rng: random.Random) -> dict[str, int]:
    """Stored values of some numbers, with many ties (a few values often)."""
    values = {
        "clicks": rng.choice([0, 0, 1, 5, rng.randint(0, 5000)]),
        "impressions": rng.choice([10, 100, rng.randint(0, 90_000)]),
        "ctr": rng.choice([0.05, round(rng.random(), 4)]),
        "position": rng.choice([1, 3.5, round(rng.uniform(1, 100), 2)]),
        "volume": rng.choice([0, 10, 1000, rng.randint(0, 2_000_000)]),
        "cpc": rng.choice([0.5, round(rng.uniform(0, 30), 2)]),
        "difficulty": rng.choice([40, rng.randint(0, 100)]),
    }
    return {name: BY_NAME[name].stored(value) for name, value in values.items()
            if rng.random() < 0.7}


def new_rows(rng: random.Random, texts: list[str], tag_ids: list[int]):
    return [(query, rng.choice(LANGUAGES), rng.choice(COUNTRIES),
             rng.sample(tag_ids, rng.choice([0, 1, 1, 2])), None, random_numbers(rng))
            for query in texts]


class Rows:
    """The project's rows, numbers and links as stored, and brute-force answers."""

    def __init__(self, world):
        columns = ", ".join(NAMES)

        def read(session):
            rows = session.execute(text(
                f"SELECT pk, id, language, {columns} FROM queries WHERE project_id = :p"),
                {"p": world.project_id}).all()
            links = session.execute(text(
                "SELECT l.query_pk, l.tag_id FROM query_tags l JOIN tags t ON t.id = l.tag_id "
                "WHERE t.project_id = :p"), {"p": world.project_id}).all()
            tags = session.execute(text("SELECT id FROM tags WHERE project_id = :p"),
                                   {"p": world.project_id}).scalars().all()
            return rows, links, tags

        rows, links, self.tags = world.run(read)
        self.rows = [{"pk": row[0], "id": str(row[1]), "language": row[2],
                      **dict(zip(NAMES, row[3:], strict=True))} for row in rows]
        self.carried = {row["pk"]: set() for row in self.rows}
        for pk, tag_id in links:
            self.carried[pk].add(tag_id)

    def passes(self, row, body: dict, leave_out: str | None = None) -> bool:
        if leave_out != "languages" and body.get("languages") and \
                row["language"] not in body["languages"]:
            return False
        if leave_out != "tags":
            if body.get("tagIds") and not self.carried[row["pk"]] & set(body["tagIds"]):
                return False
            if body.get("untagged") and self.carried[row["pk"]]:
                return False
        if leave_out != "numbers":
            for name, bounds in (body.get("metricRanges") or {}).items():
                value = row[name]
                if value is None:
                    return False
                shown = BY_NAME[name].shown(value)
                if "min" in bounds and shown < bounds["min"]:
                    return False
                if "max" in bounds and shown > bounds["max"]:
                    return False
        return True

    def matching(self, body: dict, leave_out: str | None = None) -> list[dict]:
        return [row for row in self.rows if self.passes(row, body, leave_out)]

    @staticmethod
    def sums(rows: list[dict], names: list[str]) -> dict:
        found = {}
        for name in names:
            number = BY_NAME[name]
            if number.ratio:
                part, whole = number.ratio
                both = [row for row in rows if row[part] is not None and row[whole] is not None]
                divisor = sum(row[whole] for row in both)
                found[name] = sum(row[part] for row in both) / divisor if divisor else None
            elif number.weight:
                both = [row for row in rows
                        if row[name] is not None and row[number.weight] is not None]
                weights = sum(row[number.weight] for row in both)
                products = sum(row[name] * row[number.weight] for row in both)
                found[name] = products / weights / number.scale if weights else None
            else:
                found[name] = sum(row[name] for row in rows if row[name] is not None)
        return found

    def page(self, body: dict, name: str, descending: bool, page: int, limit: int) -> list:
        rows = self.matching(body)
        known = sorted((row for row in rows if row[name] is not None), key=lambda row: row["id"])
        known.sort(key=lambda row: row[name], reverse=descending)  # stable: ties by id
        unknown = sorted((row for row in rows if row[name] is None), key=lambda row: row["id"])
        ordered = known + unknown
        return [row["id"] for row in ordered[(page - 1) * limit:page * limit]]


def close(got, wanted, name: str) -> bool:
    if wanted is None or got is None:
        return got is wanted
    if BY_NAME[name].whole and not (BY_NAME[name].weight or BY_NAME[name].ratio):
        return got == wanted
    return math.isclose(got, wanted, rel_tol=1e-9, abs_tol=1e-12)


def assert_sums(got: dict, wanted: dict, context) -> None:
    assert got.keys() == wanted.keys(), context
    for name, value in wanted.items():
        assert close(got[name], value, name), (name, got[name], value, context)


def random_range(rng: random.Random, rows: Rows, name: str) -> dict:
    values = [BY_NAME[name].shown(row[name]) for row in rows.rows if row[name] is not None]
    if not values:
        return {"min": 0}
    low, high = sorted(rng.sample(values, 2) if len(values) > 1 else values * 2)
    return rng.choice([{"min": low}, {"max": high}, {"min": low, "max": high},
                       {"min": low, "max": low}])


def random_filter(rng: random.Random, rows: Rows, first: str) -> dict:
    """A filter of no, one or two ranges (the first of them on `first`), maybe languages, and
    maybe a tag or untagged."""
    body: dict = {}
    others = [name for name in NAMES if name != first]
    for name in [first, *rng.sample(others, 1)][:rng.choice([0, 1, 1, 2])]:
        body.setdefault("metricRanges", {})[name] = random_range(rng, rows, name)
    if rng.random() < 0.3:
        body["languages"] = rng.sample(LANGUAGES, rng.randint(1, 2))
    roll = rng.random()
    if roll < 0.25 and rows.tags:
        body["tagIds"] = rng.sample(rows.tags, 1)
    elif roll < 0.4:
        body["untagged"] = True
    return body


def check(api, world, rng: random.Random, filters: int) -> None:
    """`filters` random filters, faceted with sums and listed. Filter i sorts by number
    i mod 7, ascending in the first round of the numbers and descending in the second (and so
    on), and its first range is on that number: from 14 filters on, every number is sorted
    both ways and ranged after each write, which random choices left to chance."""
    api.queries(limit=1)  # a read: a write that went around the engine is caught up here
    assert_counters_exact(world)
    rows = Rows(world)
    for index in range(filters):
        name, descending = NAMES[index % len(NAMES)], index // len(NAMES) % 2 == 1
        body = random_filter(rng, rows, name)
        sums = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        answer = api.call("POST", "/api/queries/facets", json={**body, "sums": sums})
        assert answer.status_code == 200, (body, answer.text)
        got = answer.json()
        matched = rows.matching(body)
        assert got["totalRecords"] == len(matched), body
        assert_sums(got["sums"], rows.sums(matched, sums), body)
        others = rows.matching(body, "numbers")
        assert got["metricCounts"] == {name: sum(row[name] is not None for row in others)
                                       for name in NAMES}, body
        not_by_tags = rows.matching(body, "tags")
        assert_sums(got["untaggedSums"], rows.sums(
            [row for row in not_by_tags if not rows.carried[row["pk"]]], sums), body)
        for item in got["tags"]:
            carriers = [row for row in not_by_tags if item["id"] in rows.carried[row["pk"]]]
            assert item["count"] == len(carriers), body
            assert_sums(item["sums"], rows.sums(carriers, sums), (body, item["id"]))
        not_by_language = rows.matching(body, "languages")
        for item in got["languages"]:
            these = [row for row in not_by_language if row["language"] == item["value"]]
            assert item["count"] == len(these), body
            assert_sums(item["sums"], rows.sums(these, sums), (body, item["value"]))
        page, limit = rng.choice([1, 1, 2, 5]), rng.choice([1, 7, 50])
        listed = api.queries(**body, sort=[{"field": name, "direction":
                                            "DESC" if descending else "asc"}],
                             page=page, limit=limit, include=["metrics"])
        assert listed.status_code == 200, listed.text
        assert listed.json()["page"]["totalRecords"] == len(matched), body
        results = listed.json()["results"]
        assert [item["id"] for item in results] == rows.page(
            body, name, descending, page, limit), (body, name, descending, page, limit)
        by_id = {row["id"]: row for row in rows.rows}
        for item in results:
            row = by_id[item["id"]]
            assert item["metrics"] == {number.name: number.shown(row[number.name])
                                       for number in NUMBERS
                                       if row[number.name] is not None}


@pytest.fixture
def administrator(world):
    return world.with_administrator("admin@example.com", "a long enough password")


def test_numbers_filter_sort_and_sum_as_brute_force_after_every_kind_of_write(
        api, administrator):
    world, rng = administrator, random.Random(48)
    tag_ids = list(world.tags.values())
    # Eight kinds of write, 64 filters after each: 512 filters, each faceted with sums and
    # listed; each number sorted both ways and ranged after every write (check), with random
    # ranges, languages, tags and sums beside it.
    per_write = 64
    texts = [f"query {number}" for number in range(700)]

    def imported(session):
        imports.add_rows(session, world.project_id, [new_rows(rng, texts[:600], tag_ids)],
                         batch_rows=150)

    world.run(imported)
    check(api, world, rng, per_write)

    world.run(lambda s: admin.insert_queries(s, world.project_id,
                                             new_rows(rng, texts[600:620], tag_ids)))
    check(api, world, rng, per_write)

    # Rows of present keys, some with new numbers: the numbers they name replace the old
    # (bulk load: 550 rows; then a few rows, row by row).
    listed = Rows(world).rows

    def again(session, count: int, bulk: bool):
        rows = [(query, language, country, [], None, random_numbers(rng))
                for query, language, country in world.run(lambda s: s.execute(text(
                    "SELECT query, language, country FROM queries WHERE project_id = :p "
                    "ORDER BY pk"), {"p": world.project_id}).all())[:count]]
        if bulk:
            imports.add_rows(session, world.project_id, [rows + new_rows(
                rng, texts[620:680], tag_ids)], batch_rows=200)
        else:
            admin.insert_queries(session, world.project_id, rows)

    world.run(lambda s: again(s, 550, True))
    check(api, world, rng, per_write)
    world.run(lambda s: again(s, 30, False))
    check(api, world, rng, per_write)
    assert listed != Rows(world).rows

    queries = api.queries(limit=40, sort=[{"field": "id"}]).json()["results"]
    answer = api.set_tags([{"query": q["query"], "language": q["language"],
                            "country": q["country"], "tagIds": rng.sample(tag_ids, 2)}
                           for q in queries])
    assert answer.status_code == 200, answer.text
    check(api, world, rng, per_write)

    answer = api.post("/api/tags/merge", {"id": world.tags["local"],
                                          "intoId": world.tags["question"]})
    assert answer.status_code == 200, answer.text
    check(api, world, rng, per_write)

    assert world.run(lambda s: project_changes.delete_tag(
        s, world.org_id, world.project_id, world.tags["sale"], world.user_id))
    check(api, world, rng, per_write)

    def by_hand(session):
        session.execute(text(
            "UPDATE queries SET clicks = 7, volume = NULL WHERE pk IN (SELECT pk FROM queries "
            "WHERE project_id = :p ORDER BY pk LIMIT 25)"), {"p": world.project_id})

    world.run(by_hand)
    check(api, world, rng, per_write)


def test_numbers_are_refused_with_sentences(api, world):
    cases = [
        ({"metricRanges": {"likes": {"min": 1}}},
         "'metricRanges.likes.[key]': 'likes' is not a number a query has; use one of "
         "clicks, impressions, ctr, position, volume, cpc, difficulty."),
        ({"metricRanges": {"volume": {}}}, "'metricRanges.volume': give 'min', 'max' or both."),
        ({"metricRanges": {"volume": {"min": 5, "max": 1}}},
         "'metricRanges.volume': 'min' must not be greater than 'max'."),
        ({"metricRanges": {"volume": {"min": "5"}}}, None),
        ({"include": ["likes"]}, None),
    ]
    for body, message in cases:
        answer = api.call("POST", "/api/queries/list", json=body)
        assert answer.status_code == 400, (body, answer.text)
        if message:
            assert message in answer.json()["message"], answer.json()
    answer = api.call("POST", "/api/queries/facets", json={"sums": ["likes"]})
    assert answer.status_code == 400, answer.text


def test_a_range_far_past_every_value_matches_nothing_and_answers(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("big", "en", "US", [], None, {"volume": 2 ** 53})]))
    for bounds, total in (({"min": 1e308}, 0), ({"max": -1e308}, 0), ({"min": 2 ** 53}, 1),
                          ({"max": 2 ** 53 - 1}, 0), ({"min": 0.5, "max": 0.9}, 0)):
        answer = api.queries(metricRanges={"volume": bounds})
        assert answer.status_code == 200, answer.text
        assert answer.json()["page"]["totalRecords"] == total, bounds


@pytest.mark.parametrize("name", ["ctr", "position", "cpc", "difficulty"])
def test_a_far_bound_of_a_number_in_millionths_answers_at_once(api, world, name):
    """A bound far below or above every value of a number kept in millionths: its stored
    bound was looked for a step at a time from the bound itself, where a float's consecutive
    values lie hundreds of millionths apart (a minimum of -1.5e200 ran for minutes, holding
    the process's interpreter; schemathesis found it). Each answers within seconds, exact."""
    number = BY_NAME[name]
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("low", "en", "US", [], None, {name: number.stored(number.lowest)}),
        ("high", "en", "US", [], None, {name: number.stored(number.highest or 1000)})]))
    for bounds, total in (({"min": -1.5e200}, 2), ({"max": -1.5e200}, 0),
                          ({"min": -1.0773741694545116e16}, 2), ({"max": 2.75e86}, 2),
                          ({"min": 2.75e86}, 0), ({"min": -6e251, "max": 1e300}, 2),
                          ({"min": 1e15, "max": 1e16}, 0), ({"max": -3.1e-49}, 0)):
        started = time.monotonic()
        answer = api.queries(metricRanges={name: bounds})
        assert time.monotonic() - started < 5, bounds
        assert answer.status_code == 200, answer.text
        assert answer.json()["page"]["totalRecords"] == total, bounds


def test_without_include_the_answer_is_the_references(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes", "en", "US", [], None, {"clicks": 3})]))
    item = api.queries().json()["results"][0]
    assert set(item) == {"id", "project", "tags", "query", "language", "country", "updatedAt"}
    item = api.queries(include=["metrics"]).json()["results"][0]
    assert item["metrics"] == {"clicks": 3}


@pytest.mark.parametrize("bulk", [False, True], ids=["few rows", "bulk load"])
def test_numbers_that_change_recheck_the_rules_with_ranges(api, world, bulk):
    brand, sale = world.tags["brand"], world.tags["sale"]
    rule = api.post("/api/rules/create", {
        "name": "big", "condition": {"metricRanges": {"volume": {"min": 1000}}},
        "tagIds": [brand]})
    assert rule.status_code == 201, rule.text
    assert api.post("/api/rules/create", {"name": "text", "condition": {"query": "shoes"},
                                          "tagIds": [sale]}).status_code == 201
    filler = [(f"filler {n}", "en", "US", [], None, {"volume": 1}) for n in range(600)]
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes small", "en", "US", [], None, {"volume": 10}),
        ("boots", "en", "US", [], None, {"clicks": 3})] + (filler if bulk else [])))
    before = {q["query"]: q for q in api.queries(limit=1000).json()["results"]}
    assert before["shoes small"]["tags"] == [sale]  # the text rule, on entry
    assert before["boots"]["tags"] == []

    again = [("shoes small", "en", "US", [], None, {"volume": 5000}),
             ("boots", "en", "US", [], None, {"volume": 999})]
    world.run(lambda s: admin.insert_queries(s, world.project_id,
                                             again + (filler if bulk else [])))
    after = {q["query"]: q for q in api.queries(limit=1000, include=["metrics"])
             .json()["results"]}
    assert after["shoes small"]["metrics"] == {"volume": 5000}
    assert sorted(after["shoes small"]["tags"]) == sorted([brand, sale])
    assert after["shoes small"]["tagSources"][str(brand)]["ruleId"] == rule.json()["id"]
    assert after["shoes small"]["updatedAt"] > before["shoes small"]["updatedAt"]
    assert after["boots"]["tags"] == [] and after["boots"]["metrics"] == {"clicks": 3,
                                                                          "volume": 999}
    assert after["boots"]["updatedAt"] == before["boots"]["updatedAt"]
    assert_counters_exact(world)


def test_keep_numbers_leaves_present_queries_numbers(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes", "en", "US", [], None, {"volume": 10})]))
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes", "en", "US", [], None, {"volume": 20, "clicks": 1})], update_numbers=False))
    item = api.queries(include=["metrics"]).json()["results"][0]
    assert item["metrics"] == {"volume": 10}


def test_nan_and_infinity_are_not_json_numbers(api, world):
    for raw in ('{"metricRanges": {"volume": {"min": NaN}}}',
                '{"metricRanges": {"volume": {"max": Infinity}}}'):
        answer = api.call("POST", "/api/queries/list", data=raw,
                          headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, answer.text
        assert answer.json()["message"] == "Request body is not valid JSON."


def test_a_saved_view_keeps_its_ranges_and_counts_by_them(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("a", "en", "US", [], None, {"volume": 10}), ("b", "en", "US", [], None, {"volume": 500}),
        ("c", "en", "US", [], None, {})]))
    made = api.post("/api/views/create", {"name": "mid", "filters": {
        "metricRanges": {"volume": {"min": 100, "max": 1000}}}})
    assert made.status_code == 201, made.text
    views = api.post("/api/views/list", {}).json()["results"]
    assert views[0]["filters"] == {"metricRanges": {"volume": {"min": 100, "max": 1000}}}
    assert views[0]["totalRecords"] == 1


def test_a_saved_view_keeps_the_numbers_it_shows(api, world):
    made = api.post("/api/views/create", {"name": "cols", "filters": {},
                                          "columns": ["volume", "clicks", "volume"]})
    assert made.status_code == 201, made.text
    assert made.json()["columns"] == ["volume", "clicks"]
    view_id = made.json()["id"]
    assert api.post("/api/views/update", {"id": view_id, "name": "renamed"}).json()[
        "columns"] == ["volume", "clicks"]
    assert api.post("/api/views/update", {"id": view_id, "columns": []}).json()["columns"] == []
    assert api.post("/api/views/update", {"id": view_id, "columns": None}).json()[
        "columns"] is None
    plain = api.post("/api/views/create", {"name": "plain", "filters": {}})
    assert plain.json()["columns"] is None
    refused = api.post("/api/views/create", {"name": "bad", "filters": {}, "columns": ["likes"]})
    assert refused.status_code == 400, refused.text


def test_a_range_kept_for_a_view_follows_each_write(api, world):
    """A range's matches are kept until the project's next write: the same range asked after
    numbers change, a query is added or numbers are written around the engine answers as of
    that write."""
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes", "en", "US", [], None, {"volume": 50}),
        ("boots", "en", "US", [], None, {"volume": 500})]))
    ranged = {"metricRanges": {"volume": {"min": 100, "max": 1000}}}

    def matched() -> list[str]:
        for _asked in range(2):  # the second answer is the kept one
            answer = api.queries(**ranged)
            assert answer.status_code == 200, answer.text
        return sorted(item["query"] for item in answer.json()["results"])

    assert matched() == ["boots"]
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("shoes", "en", "US", [], None, {"volume": 200})]))  # numbers updated
    assert matched() == ["boots", "shoes"]
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("sandals", "en", "US", [], None, {"volume": 1000})]))
    assert matched() == ["boots", "sandals", "shoes"]
    world.run(lambda s: s.execute(text(  # around the engine: the bitmaps are built again
        "UPDATE queries SET volume = 5 WHERE query = 'boots'")))
    assert matched() == ["sandals", "shoes"]


def test_a_bound_equal_to_a_value_takes_it_in_at_every_size(api, world):
    """A range's bound is compared with the value as the API shows it: "position at least
    33.228588" takes in the query at 33.228588 (its bound worked out in millionths as
    33228589 once left it out, as it did about one value in 45 from 8 up)."""
    values = {"position": 33.228588, "cpc": 45.67, "difficulty": 99.999999, "ctr": 0.123457}
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("edge", "en", "US", [], None,
         {name: BY_NAME[name].stored(value) for name, value in values.items()})]))
    for name, value in values.items():
        for bounds in ({"min": value}, {"max": value}, {"min": value, "max": value}):
            answer = api.queries(metricRanges={name: bounds})
            assert answer.json()["page"]["totalRecords"] == 1, (name, bounds)
        for bounds in ({"min": math.nextafter(value, math.inf)},
                       {"max": math.nextafter(value, -math.inf)}):
            answer = api.queries(metricRanges={name: bounds})
            assert answer.json()["page"]["totalRecords"] == 0, (name, bounds)
    rng = random.Random(48)
    for number in (BY_NAME[name] for name in values):
        for _ in range(20_000):
            stored = rng.randint(0, number.scale * int(number.highest or 10_000))
            shown = number.shown(stored)
            assert number.lower_bound(shown) == stored == number.upper_bound(shown), shown
            assert number.lower_bound(math.nextafter(shown, math.inf)) == stored + 1
            assert number.upper_bound(math.nextafter(shown, -math.inf)) == stored - 1
