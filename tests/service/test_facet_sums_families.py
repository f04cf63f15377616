"""The facets' sums of every family against brute force, over HTTP: languages, countries and
tags (any of, all of, excluded ones), untagged, and the whole, each as disjunctive as its count
— summed from the dense arrays (service/engine/number_sums.py), from arrays by place among
the keys (a project whose keys are spread too wide), and a bit slice at a time (where no
array can be made); the same answers every way."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import text

from service.engine import number_sums
from service.engine.numbers import BY_NAME, NAMES
from service.org import admin
from tests.service.test_numbers_exact import Rows, assert_sums, random_numbers

LANGUAGES = ["de", "en", "fr"]
COUNTRIES = ["AT", "DE", "US"]


class Families(Rows):
    """Rows with their countries, and each facet family's brute-force sets."""

    def __init__(self, world):
        super().__init__(world)
        read = dict(world.run(lambda session: [(pk, (country, query)) for pk, country, query
                                                in session.execute(text(
            "SELECT pk, country, query FROM queries WHERE project_id = :p"),
            {"p": world.project_id})]))
        for row in self.rows:
            row["country"], row["query"] = read[row["pk"]]

    def passes_but_tags(self, row, body: dict, leave_out: str | None = None) -> bool:
        if leave_out != "languages" and body.get("languages") and \
                row["language"] not in body["languages"]:
            return False
        if leave_out != "countries" and body.get("countries") and \
                row["country"] not in body["countries"]:
            return False
        if body.get("query") and body["query"] not in row["query"]:
            return False
        for name, bounds in (body.get("metricRanges") or {}).items():
            value = row[name]
            if value is None or BY_NAME[name].shown(value) < bounds.get("min", float("-inf")):
                return False
        return True

    def chosen(self, row, body: dict) -> bool:
        carried, wanted = self.carried[row["pk"]], set(body.get("tagIds") or [])
        if not wanted:
            return True
        return wanted <= carried if body.get("tagMatch") == "all" else bool(wanted & carried)

    def shown(self, row, body: dict) -> bool:
        return self.passes_but_tags(row, body) and self.chosen(row, body) and not (
            self.carried[row["pk"]] & set(body.get("excludeTagIds") or []))

    def by(self, body: dict, field: str) -> dict[str, list]:
        found: dict[str, list] = {}
        for row in self.rows:
            if self.passes_but_tags(row, body, field) and self.shown_but(row, body, field):
                found.setdefault(row["language" if field == "languages" else "country"],
                                 []).append(row)
        return found

    def shown_but(self, row, body: dict, field: str) -> bool:
        return self.chosen(row, body) and not (
            self.carried[row["pk"]] & set(body.get("excludeTagIds") or []))

    def tag_set(self, body: dict, tag_id: int) -> list:
        """What a tag's count counts: with "all of", the view's queries that also carry it;
        with "any of" (or none), the tag in place of the chosen ones; an excluded tag, the
        view's queries before exclusions that carry it and no other excluded tag."""
        excluded = set(body.get("excludeTagIds") or [])
        found = []
        for row in self.rows:
            carried = self.carried[row["pk"]]
            if tag_id not in carried or not self.passes_but_tags(row, body):
                continue
            if tag_id in excluded:
                if self.chosen(row, body) and not (carried & (excluded - {tag_id})):
                    found.append(row)
            elif not carried & excluded and (body.get("tagMatch") != "all"
                                             or self.chosen(row, body)):
                found.append(row)
        return found


def new_rows(rng: random.Random, count: int, tag_ids: list[int]):
    return [(f"query {number} {rng.choice(['shoes', 'boots', 'hats'])}",
             rng.choice(LANGUAGES), rng.choice(COUNTRIES),
             rng.sample(tag_ids, rng.choice([0, 1, 1, 2, 3])), None, random_numbers(rng))
            for number in range(count)]


def random_filter(rng: random.Random, tag_ids: list[int]) -> dict:
    body: dict = {}
    if rng.random() < 0.4:
        body["languages"] = rng.sample(LANGUAGES, rng.randint(1, 2))
    if rng.random() < 0.4:
        body["countries"] = rng.sample(COUNTRIES, rng.randint(1, 2))
    if rng.random() < 0.3:
        body["query"] = rng.choice(["shoes", "boots"])
    if rng.random() < 0.3:
        body["metricRanges"] = {"volume": {"min": rng.choice([0, 10, 1000])}}
    if rng.random() < 0.5:
        body["tagIds"] = rng.sample(tag_ids, rng.randint(1, 2))
        body["tagMatch"] = rng.choice(["any", "all"])
    if rng.random() < 0.4:
        body["excludeTagIds"] = rng.sample(tag_ids, rng.randint(1, 2))
    return body


@pytest.mark.parametrize("summed_by", ["dense arrays", "arrays by place", "bit slices"])
def test_every_familys_sums_are_as_disjunctive_as_its_counts(api, world, monkeypatch,
                                                             summed_by):
    if summed_by == "arrays by place":  # as a project whose keys are spread too wide
        monkeypatch.setattr(number_sums, "SPREAD", 0)
        monkeypatch.setattr(number_sums, "SLACK", 0)
    if summed_by == "bit slices":  # as where no array can be made (a product past 64 bits)
        monkeypatch.setattr(number_sums, "layout", lambda held: None)
    rng = random.Random(7)
    tag_ids = list(world.tags.values())
    world.run(lambda s: admin.insert_queries(s, world.project_id, new_rows(rng, 300, tag_ids)))
    # A value past the bits a float adds exactly in one piece.
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("big one", "en", "US", tag_ids[:1], None, {"volume": 2 ** 53, "clicks": 2 ** 40})]))
    rows = Families(world)
    for _ in range(40):
        body = random_filter(rng, tag_ids)
        sums = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        answer = api.call("POST", "/api/queries/facets", json={**body, "sums": sums})
        assert answer.status_code == 200, (body, answer.text)
        got = answer.json()
        matched = [row for row in rows.rows if rows.shown(row, body)]
        assert got["totalRecords"] == len(matched), body
        assert_sums(got["sums"], rows.sums(matched, sums), body)
        for field in ("languages", "countries"):
            wanted = rows.by(body, field)
            for item in got[field]:
                these = wanted.get(item["value"], [])
                assert item["count"] == len(these), (body, field, item["value"])
                assert_sums(item["sums"], rows.sums(these, sums), (body, item["value"]))
        untagged = [row for row in rows.rows
                    if rows.passes_but_tags(row, body) and not rows.carried[row["pk"]]]
        assert got["untagged"] == len(untagged), body
        assert_sums(got["untaggedSums"], rows.sums(untagged, sums), body)
        for item in got["tags"]:
            these = rows.tag_set(body, item["id"])
            assert item["count"] == len(these), (body, item["id"])
            assert_sums(item["sums"], rows.sums(these, sums), (body, item["id"]))
