"""Every count of the engine equals a count over the rows: list totals, pages and every facet
of random filters (text with Turkish İ, Greek, `%`, `_`, a double space, one- and two-letter
terms; codes in any case; any / all / exclude / untagged; RE2 patterns, literal alternatives
or not, checked by RE2 itself on every row), over HTTP, on each database,
after each kind of write: an import in several ranges, a few-row insert, set-tags, tags-edit,
a rule applied, a tag's merge, its deletion, its rename, and hand-written SQL that goes around
the engine. Tag counts with "all of" and excluded tags follow docs/api.md's "Facets of a
filter" to the letter (Rows.tag_count)."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

import pytest
import re2
from sqlalchemy import text

from service.engine.numbers import NAMES
from service.imports import imports
from service.org import admin
from service.settings import project_changes
from tests.service.counters import assert_counters_exact, simple_fold

WORDS = ["schuhe", "größe", "GRÖSSE", "straße", "İstanbul", "istanbul", "ıslak", "ΣΟΦΙΑ",
         "σοφός", "λόγος", "100%", "50_off", "a_b", "x%y", "café", "CAFÉ", "running", "Run",
         "shoes", "sale", "ab", "a", "b", "Ö", "ς", "günstig", "BILLIG", "pas", "cher",
         "\u212aelvin", "ſale", "ΐ", "\u1fd3"]
LANGUAGES = ["de", "en", "tr", "el"]
COUNTRIES = ["DE", "AT", "TR", "GR", "US"]
TERMS = ["İ", "i̇", "ı", "i", "I", "σ", "Σ", "ς", "σο", "%", "_", "0%", "a_", "  ", " ", "ß",
         "ss", "ö", "Ö", "é", "a", "ab", "b a", "schuhe  ", "  run", "run", "RUN", "straße",
         "STRASSE", "sale shoes", "ΣΟΦ", "istanbul", "x%", "%y", "zzz"]
TAG_NAMES = ["brand", "sale", "question", "local"]
# Patterns: alternatives, classes, anchors, `.`, a space, Turkish İ/ı, Greek, `%`, `_`, the
# characters RE2 folds otherwise than the engine (service/patterns.py FOLDED_OTHERWISE).
PATTERNS = ["günstig|billig|cheap|pas cher", "schuhe|shoes", "İ", "ı", "i", "I|ı", "İstanbul",
            "istanbul|ıslak", "σ", "ΣΟΦ|λόγ", "ς$", "^σ", "%", "_", "0%|a_", "x%y", r"\d+%",
            r"50_\w+", "^a$", "^a ", "e$", "^s", "s.e", "gr(ö|o)(ss|ß)e", "gr..e", "[äöü]",
            "[a-c]_", "caf[eé]", "  ", " ", "b a", "sale shoes", "^[^ ]+$", "ab|a b", "kelvin",
            "\u212a", "ſ|z", "sale", "ΐ", "\u1fd3|zz", "ΐ.", r"\bsale\b", "(a+)+$", "a|b|c",
            "straße|STRASSE", "ẞ", "é", "É|Ö", "(?-i:Run)", "zzz|yyy", "^(run|sale)",
            # Matched in the project's folded words (patterns.within_words), the Kelvin sign
            # and the long s (whose folds are k and s) among them.
            r"k\w+", "[a-z]ale", r"s\w+", "[k]elvin", r"\w{5}", "[ſ]", "caf[eé]s?", r"\bk\w+",
            # Checked among the texts that hold a literal every match holds.
            "^(run|sale) ", "^(gr|st)[a-zöß]+e$", "sale.*shoes", "caf.$"]
_OPTIONS = re2.Options()
_OPTIONS.case_sensitive = False

# The brute-force answer asks the same few questions of every row many times over (each
# filter is counted leaving out each facet in turn): each text folded and each pattern
# compiled once instead (pure functions, so the answers are the same).
folded = cache(simple_fold)


@cache
def compiled(pattern: str):
    return re2.compile(pattern, _OPTIONS)


def literal(value: str) -> str:
    """A substring of a text written as a pattern that stands for itself."""
    return "".join("\\" + character if character in "\\.+*?()|[]{}^$" else character
                   for character in value)


def texts(rng: random.Random, count: int) -> list[str]:
    made = set()
    while len(made) < count:
        words = rng.choices(WORDS, k=rng.randint(1, 4))
        joiner = rng.choice([" ", " ", " ", "  "])
        made.add(joiner.join(words))
    return sorted(made)


def new_rows(rng: random.Random, count: int, tag_ids: list[int]):
    return [(query, rng.choice(LANGUAGES), rng.choice(COUNTRIES),
             rng.sample(tag_ids, rng.choice([0, 0, 1, 1, 2])), None)
            for query in texts(rng, count)]


class Rows:
    """The project's rows and links as they are, and the brute-force answer to a filter."""

    def __init__(self, world):
        def read(session):
            rows = session.execute(text(
                "SELECT pk, id, query, language, country FROM queries WHERE project_id = :p"),
                {"p": world.project_id}).all()
            links = session.execute(text(
                "SELECT l.query_pk, l.tag_id FROM query_tags l JOIN tags t ON t.id = l.tag_id "
                "WHERE t.project_id = :p"), {"p": world.project_id}).all()
            tags = dict(session.execute(text(
                "SELECT id, name FROM tags WHERE project_id = :p"), {"p": world.project_id}).all())
            return rows, links, tags

        rows, links, self.tags = world.run(read)
        self.rows = [(pk, str(id_), query, language, country)
                     for pk, id_, query, language, country in rows]
        self.carried: dict[int, set[int]] = {pk: set() for pk, *_ in self.rows}
        for pk, tag_id in links:
            self.carried[pk].add(tag_id)

    def tag_of(self, reference) -> int | None:
        if isinstance(reference, int):
            return reference if reference in self.tags else None
        for tag_id, name in self.tags.items():
            if folded(name) == folded(reference):
                return tag_id
        return None

    def passes(self, row, body: dict, leave_out: str | None = None) -> bool:
        pk, _id, query, language, country = row
        if body.get("query") and folded(body["query"]) not in folded(query):
            return False
        if body.get("pattern") and not compiled(body["pattern"]).search(query):
            return False
        if leave_out != "languages" and body.get("languages") and language not in {
                code.lower() for code in body["languages"]}:
            return False
        if leave_out != "countries" and body.get("countries") and country not in {
                code.upper() for code in body["countries"]}:
            return False
        if leave_out == "tags":
            return True
        carried = self.carried[pk]
        lists = [[self.tag_of(ref) for ref in body[field]]
                 for field in ("tagIds", "tagNames") if body.get(field)]
        if body.get("tagMatch") == "all":
            every = [tag for refs in lists for tag in refs]
            if every and not all(tag is not None and tag in carried for tag in every):
                return False
        elif not all(carried & {tag for tag in refs if tag is not None} for refs in lists):
            return False
        excluded = {self.tag_of(ref) for field in ("excludeTagIds", "excludeTagNames")
                    for ref in body.get(field) or ()}
        if carried & excluded:
            return False
        return not (body.get("untagged") and carried)

    def excluded(self, body: dict) -> set:
        return {self.tag_of(ref) for field in ("excludeTagIds", "excludeTagNames")
                for ref in body.get(field) or ()}

    def tag_count(self, body: dict, tag_id: int) -> int:
        """How many queries the view would show with the tag chosen, by the letter of
        docs/api.md: with "all of", the view's queries that also carry it; else those of every
        other filter that carry it; the exclusions apply, all but the tag's own. An excluded
        tag's count: the queries of the view without that exclusion that carry it."""
        if tag_id in self.excluded(body):
            lifted = dict(body, **{field: [ref for ref in body.get(field) or ()
                                           if self.tag_of(ref) != tag_id]
                                   for field in ("excludeTagIds", "excludeTagNames")})
            return sum(tag_id in self.carried[row[0]] for row in self.rows
                       if self.passes(row, lifted))
        if body.get("tagMatch") == "all":
            chosen = dict(body, excludeTagIds=[], excludeTagNames=[], untagged=False)
        else:
            chosen = {key: value for key, value in body.items() if key not in (
                "tagIds", "tagNames", "untagged", "excludeTagIds", "excludeTagNames")}
        excluded = self.excluded(body) - {None}
        return sum(tag_id in self.carried[row[0]] and not self.carried[row[0]] & excluded
                   for row in self.rows if self.passes(row, chosen))

    def facets(self, body: dict) -> dict:
        def count(leave_out, key):
            counted = Counter(key(row) for row in self.rows
                              if self.passes(row, body, leave_out))
            return counted

        languages = count("languages", lambda row: row[3])
        countries = count("countries", lambda row: row[4])
        tag_base = [row for row in self.rows if self.passes(row, body, "tags")]
        codes = {row[3] for row in self.rows}, {row[4] for row in self.rows}
        return {
            "totalRecords": sum(self.passes(row, body) for row in self.rows),
            "untagged": sum(not self.carried[row[0]] for row in tag_base),
            "languages": {code: languages[code] for code in codes[0]},
            "countries": {code: countries[code] for code in codes[1]},
            "tags": {tag_id: self.tag_count(body, tag_id) for tag_id in self.tags},
        }


def random_filter(rng: random.Random, rows: Rows) -> dict:
    body: dict = {}
    if rng.random() < 0.7:
        if rng.random() < 0.5:
            query = rng.choice(rows.rows)[2]
            start = rng.randrange(len(query))
            body["query"] = query[start:start + rng.randint(1, 6)]
        else:
            body["query"] = rng.choice(TERMS)
    if rng.random() < 0.35:
        body["languages"] = [rng.choice([code, code.upper()])
                             for code in rng.sample(LANGUAGES, rng.randint(1, 2))]
    if rng.random() < 0.35:
        body["countries"] = [rng.choice([code, code.lower()])
                             for code in rng.sample(COUNTRIES, rng.randint(1, 2))]
    if rng.random() < 0.4:
        if rng.random() < 0.4:
            pieces = []
            for _ in range(rng.randint(1, 3)):
                query = rng.choice(rows.rows)[2]
                start = rng.randrange(len(query))
                pieces.append(literal(query[start:start + rng.randint(1, 6)]))
            body["pattern"] = "|".join(pieces)
        else:
            body["pattern"] = rng.choice(PATTERNS)
    tag_ids = [*rows.tags, 999_999]
    if rng.random() < 0.15:
        body["untagged"] = True
    elif rng.random() < 0.6:
        if rng.random() < 0.5:
            body["tagIds"] = rng.sample(tag_ids, rng.randint(1, 3))
        else:
            body["tagNames"] = [rng.choice([name, name.upper()])
                                for name in rng.sample([*TAG_NAMES, "nope"], rng.randint(1, 3))]
        if rng.random() < 0.7:
            body["tagMatch"] = rng.choice(["any", "all", "all"])
    if rng.random() < 0.4:
        if rng.random() < 0.5:
            body["excludeTagIds"] = rng.sample(tag_ids, rng.randint(1, 2))
        else:
            body["excludeTagNames"] = rng.sample([*TAG_NAMES, "nope"], rng.randint(1, 2))
    return body


def check(api, world, rng: random.Random, combinations: int) -> None:
    api.queries(limit=1)  # a read: a write that went around the engine is caught up here
    assert_counters_exact(world)
    rows = Rows(world)
    for _ in range(combinations):
        body = random_filter(rng, rows)
        expected = rows.facets(body)
        answer = api.call("POST", "/api/queries/facets", json=body)
        assert answer.status_code == 200, (body, answer.text)
        got = answer.json()
        assert got["totalRecords"] == expected["totalRecords"], body
        assert got["untagged"] == expected["untagged"], body
        for field in ("languages", "countries"):
            assert {item["value"]: item["count"] for item in got[field]} == expected[field], (
                field, body)
            counts = [item["count"] for item in got[field]]
            assert counts == sorted(counts, reverse=True)
        assert {item["id"]: item["count"] for item in got["tags"]} == expected["tags"], body
        sort = rng.choice([[], [{"field": "updatedAt", "direction": "ASC"}],
                           [{"field": "id", "direction": "DESC"}]])
        page, limit = rng.randint(1, 3), rng.choice([3, 7, 50])
        listed = api.queries(**body, sort=sort, page=page, limit=limit)
        assert listed.status_code == 200, listed.text
        assert listed.json()["page"]["totalRecords"] == expected["totalRecords"], body
        matches = [row for row in rows.rows if rows.passes(row, body)]
        if sort and sort[0]["field"] == "id":
            matches.sort(key=lambda row: row[1], reverse=True)
            wanted = [row[1] for row in matches[(page - 1) * limit:page * limit]]
            assert [item["id"] for item in listed.json()["results"]] == wanted, body
        else:
            assert len(listed.json()["results"]) == len(matches[(page - 1) * limit:page * limit])


@pytest.fixture
def administrator(world):
    return world.with_administrator("admin@example.com", "a long enough password")


def test_every_count_equals_a_count_over_the_rows_after_every_kind_of_write(api, administrator):
    world, rng = administrator, random.Random(33)
    tag_ids = list(world.tags.values())
    per_write = 60  # nine kinds of write: 540 filters, each listed and faceted

    def imported(session):
        imports.add_rows(session, world.project_id, [new_rows(rng, 300, tag_ids)],
                         batch_rows=70)

    world.run(imported)
    check(api, world, rng, per_write)

    world.run(lambda s: admin.insert_queries(s, world.project_id, new_rows(rng, 6, tag_ids)))
    check(api, world, rng, per_write)

    listed = api.queries(limit=40, sort=[{"field": "id"}]).json()["results"]
    answer = api.set_tags([{"query": q["query"], "language": q["language"],
                            "country": q["country"], "tagIds": rng.sample(tag_ids, 2)}
                           for q in listed[:25]] +
                          [{"query": q["query"], "language": q["language"],
                            "country": q["country"], "tagIds": []} for q in listed[25:]])
    assert answer.status_code == 200, answer.text
    check(api, world, rng, per_write)

    # Tags added and removed (the tags-edit extension), the others kept.
    answer = api.call("PATCH", "/api/queries/many/tags-edit", json={"queries": [
        {"query": q["query"], "language": q["language"], "country": q["country"],
         "add": [tag_ids[i % 2]], "remove": [tag_ids[2 + i % 2]]}
        for i, q in enumerate(listed[10:35])]})
    assert answer.status_code == 200, answer.text
    check(api, world, rng, per_write)

    # A rule applied: its tags on every query it matches, in parts.
    rule = api.post("/api/rules/create", {"name": "sale", "condition": {"query": "sale"},
                                          "tagIds": [world.tags["local"], world.tags["question"]]})
    assert rule.status_code == 201, rule.text
    cursor = 0
    while cursor is not None:
        part = api.post("/api/rules/apply", {"id": rule.json()["id"], "cursor": cursor})
        assert part.status_code == 200, part.text
        cursor = part.json()["cursor"]
    check(api, world, rng, per_write)

    # A tag merged into another: its queries carry that one instead.
    answer = api.post("/api/tags/merge", {"id": world.tags["local"],
                                          "intoId": world.tags["question"]})
    assert answer.status_code == 200, answer.text
    check(api, world, rng, per_write)

    assert world.run(lambda s: project_changes.delete_tag(
        s, world.org_id, world.project_id, world.tags["sale"], world.user_id))
    check(api, world, rng, per_write)

    assert world.run(lambda s: project_changes.edit_tag(
        s, world.org_id, world.project_id, world.tags["brand"], world.user_id, "Marke",
        "#1f77b4"))
    check(api, world, rng, per_write)

    def by_hand(session):
        session.execute(text(
            "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
            "VALUES ('00000000-0000-4000-8000-00000000aaaa', :p, 'ΣΟΦΙΑ running', 'el', 'GR', "
            "'2026-01-01 00:00:00')"), {"p": world.project_id})
        session.execute(text("DELETE FROM query_tags WHERE query_pk IN (SELECT pk FROM queries "
                             "WHERE project_id = :p ORDER BY pk LIMIT 20)"),
                        {"p": world.project_id})
        session.execute(text("UPDATE queries SET language = 'en' WHERE pk IN (SELECT pk FROM "
                             "queries WHERE project_id = :p AND language = 'de' LIMIT 10)"),
                        {"p": world.project_id})
        # A time changed by hand: the links' copy of it follows (assert_counters_exact).
        session.execute(text("UPDATE queries SET updated_at = '2027-01-01 00:00:00' WHERE pk IN "
                             "(SELECT query_pk FROM query_tags ORDER BY query_pk LIMIT 5)"))

    world.run(by_hand)
    check(api, world, rng, per_write)


def test_untagged_with_a_tag_filter_is_refused_with_a_sentence(api, world):
    for path in ("/api/queries/list", "/api/queries/facets"):
        answer = api.call("POST", path, json={"untagged": True, "tagNames": ["brand"]})
        assert answer.status_code == 400
        assert "untagged" in answer.json()["message"][0]
    answer = api.queries(tagMatch="some")
    assert answer.status_code == 400
    assert "tagMatch" in answer.text


def test_facets_of_another_projects_tags_and_of_a_project_scoped_key(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("red shoes", "en", "US", [world.tags["brand"]], None),
        ("blue shoes", "en", "GB", [], None)]))
    scoped = world.new_key(project_id=world.project_id)
    answer = api.call("POST", "/api/queries/facets", json={"query": "shoes"},
                      headers={"x-api-key": scoped})
    assert answer.status_code == 200
    assert answer.json()["totalRecords"] == 2
    assert answer.json()["untagged"] == 1
    # Every tag of the project is listed, with 0 where none of the view carries it.
    assert {tag["id"] for tag in answer.json()["tags"]} == set(world.tags.values())
    other = api.call("POST", "/api/queries/facets", json={},
                     headers={"x-project-id": world.other_project_id})
    assert other.json() == {"totalRecords": 0, "untagged": 0, "languages": [],
                            "countries": [], "tags": [],
                            "metricCounts": dict.fromkeys(NAMES, 0), "suggested": []}


def test_tag_logic_in_words(api, world):
    brand, sale = world.tags["brand"], world.tags["sale"]
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("both", "en", "US", [brand, sale], None), ("brand only", "en", "US", [brand], None),
        ("sale only", "en", "US", [sale], None), ("none", "en", "US", [], None)]))

    def listed(**body) -> list[str]:
        answer = api.queries(**body, sort=[{"field": "query"}])
        assert answer.status_code == 200, answer.text
        return [row["query"] for row in answer.json()["results"]]

    assert listed(tagIds=[brand, sale]) == ["both", "brand only", "sale only"]
    assert listed(tagIds=[brand, str(sale)], tagMatch="all") == ["both"]
    assert listed(tagIds=[brand, str(brand)], tagMatch="all") == ["both", "brand only"]
    assert listed(tagNames=["BRAND", "sale"], tagMatch="all") == ["both"]
    # "any" with both lists: one tag of each, as the reference has it.
    assert listed(tagIds=[brand], tagNames=["sale"]) == ["both"]
    # A tag the project does not have: "all" then matches nothing; excluded, it is no matter.
    assert listed(tagIds=[brand, 999], tagMatch="all") == []
    assert listed(tagIds=[brand, 999]) == ["both", "brand only"]
    assert listed(excludeTagIds=[sale, 999]) == ["brand only", "none"]
    assert listed(tagIds=[brand], excludeTagNames=["Sale"]) == ["brand only"]
    assert listed(untagged=True) == ["none"]
    assert listed(untagged=True, excludeTagIds=[brand]) == ["none"]
