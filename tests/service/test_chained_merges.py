"""Merges undone out of order (POST /api/tags/merge and unmerge, extensions), over real HTTP on
SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL: a merge that a later merge depends on (one
that merged the tag it went into, or merged another tag into it) is refused with a sentence
naming the merge to undo first, and changes nothing; undone in reverse order, every query's
tags are exactly what they were. A property-style test plays random sequences of merges and
undos over a small project against a model that replays the merges not undone over the
first tag sets; an undo racing a merge that would depend on it (PostgreSQL: the tag the
undo gives back queries from is held); and the settings' Undo button says the same sentence.
"""

from __future__ import annotations

import random
import re

import pytest

from tests.service.counters import assert_counters_exact
from tests.support.api import Api, racing_statuses
from tests.support.imports import Administrator

MERGE, UNMERGE = "/api/tags/merge", "/api/tags/unmerge"
EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"


def tag_sets(api: Api) -> dict[str, set[int]]:
    answer = api.queries(limit=1000)
    assert answer.status_code == 200, answer.text
    return {row["query"]: set(row["tags"]) for row in answer.json()["results"]}


def tag_ids(api: Api) -> set[int]:
    return {tag["id"] for tag in api.tags(limit=1000).json()["results"]}


def make_tags(api: Api, *names: str) -> list[int]:
    made = [api.post("/api/tags/create", {"name": name}) for name in names]
    assert all(answer.status_code == 201 for answer in made), [a.text for a in made]
    return [answer.json()["id"] for answer in made]


def merge(api: Api, tag_id: int, into_id: int) -> str:
    answer = api.post(MERGE, {"id": tag_id, "intoId": into_id})
    assert answer.status_code == 200, answer.text
    return answer.json()["operation"]


def set_tags(api: Api, world, rows: dict[str, set[int]]) -> None:
    """The world's project holds exactly these queries (en, US) with these tags."""
    world.add_queries([(query, "en", "US", []) for query in rows])
    answer = api.set_tags([{"query": query, "language": "en", "country": "US",
                            "tagIds": sorted(tags)} for query, tags in rows.items()])
    assert answer.status_code == 200, answer.text


def test_a_merge_a_later_merge_depends_on_is_refused_until_that_one_is_undone(api, world):
    """t1 → t2, then t2 → t3: undoing the first is refused (five queries that carried only t1
    would have kept t2); undone in reverse order, every query is as it was."""
    t1, t2, t3 = make_tags(api, "t1", "t2", "t3")
    set_tags(api, world, {**{f"only t1 {n}": {t1} for n in range(5)},
                          "t1 and t2": {t1, t2}, "t2": {t2}, "t3": {t3}, "none": set()})
    before = tag_sets(api)
    first, second = merge(api, t1, t2), merge(api, t2, t3)
    merged = tag_sets(api)

    refused = api.post(UNMERGE, {"operation": first})
    assert refused.status_code == 409, refused.text
    assert refused.json() == {"statusCode": 409, "error": "Conflict", "message": (
        "“t2” was merged into “t3” after this merge. Undo the merge of “t2” into “t3” "
        "first.")}
    assert tag_sets(api) == merged and tag_ids(api) & {t1, t2, t3} == {t3}  # nothing changed

    assert api.post(UNMERGE, {"operation": second}).status_code == 200
    assert api.post(UNMERGE, {"operation": first}).status_code == 200
    assert tag_sets(api) == before
    assert_counters_exact(world)


def test_a_merge_another_tag_was_merged_into_since_is_refused_too(api, world):
    """t1 → t2, then t3 → t2: a query with t1 and t3 kept the link the first merge made for
    the second; undoing the first alone would take t2 away from it."""
    t1, t2, t3 = make_tags(api, "t1", "t2", "t3")
    set_tags(api, world, {"t1 and t3": {t1, t3}, "t1": {t1}, "t3": {t3}})
    before = tag_sets(api)
    first, second = merge(api, t1, t2), merge(api, t3, t2)
    refused = api.post(UNMERGE, {"operation": first})
    assert refused.status_code == 409
    assert refused.json()["message"] == ("“t3” was merged into “t2” after this merge. Undo "
                                         "the merge of “t3” into “t2” first.")
    assert api.post(UNMERGE, {"operation": second}).status_code == 200
    assert api.post(UNMERGE, {"operation": first}).status_code == 200
    assert tag_sets(api) == before


class Model:
    """What the tag sets must be: the merges not undone, replayed in order over the first
    tag sets (brute force)."""

    def __init__(self, first: dict[str, set[int]]) -> None:
        self.first = first
        self.merges: list[tuple[str, int, int]] = []  # (operation, tag, into), in order

    def tags(self, all_tags: set[int]) -> set[int]:
        gone = set()
        for _operation, tag, _into in self.merges:
            gone.add(tag)
        return all_tags - gone

    def sets(self) -> dict[str, set[int]]:
        sets = {query: set(tags) for query, tags in self.first.items()}
        for _operation, tag, into in self.merges:
            for tags in sets.values():
                if tag in tags:
                    tags.discard(tag)
                    tags.add(into)
        return sets

    def later_on(self, operation: str) -> tuple[str, int, int] | None:
        """The last merge made after `operation` that merged the tag it went into, or merged
        another tag into it: undoing `operation` before it cannot give the model's sets."""
        at = next(n for n, (made, _t, _i) in enumerate(self.merges) if made == operation)
        into = self.merges[at][2]
        later = [merge for merge in self.merges[at + 1:] if into in merge[1:]]
        return later[-1] if later else None


@pytest.mark.parametrize("seed", range(4))
def test_random_merges_and_undos_keep_the_tag_sets_a_replay_gives(api, world, seed):
    chance = random.Random(seed)
    names = ["a", "b", "c", "d", "e"]
    ids = make_tags(api, *names)
    name_of = dict(zip(ids, names, strict=True))
    first = {f"q{n}": set(chance.sample(ids, chance.randint(0, 3))) for n in range(10)}
    set_tags(api, world, first)
    model = Model(first)
    for _step in range(14):
        alive = sorted(model.tags(set(ids)))
        if model.merges and (len(alive) < 2 or chance.random() < 0.45):
            operation, tag, into = chance.choice(model.merges)
            answer = api.post(UNMERGE, {"operation": operation})
            later = model.later_on(operation)
            if later is None:
                assert answer.status_code == 200, answer.text
                model.merges = [m for m in model.merges if m[0] != operation]
            else:
                assert answer.status_code == 409, answer.text
                _op, later_tag, later_into = later
                assert answer.json()["message"] == (
                    f"“{name_of[later_tag]}” was merged into “{name_of[later_into]}” after "
                    f"this merge. Undo the merge of “{name_of[later_tag]}” into "
                    f"“{name_of[later_into]}” first.")
        else:
            tag, into = chance.sample(alive, 2)
            model.merges.append((merge(api, tag, into), tag, into))
        assert tag_sets(api) == model.sets(), (seed, model.merges)
        assert tag_ids(api) & set(ids) == model.tags(set(ids))
    while model.merges:  # everything undone, last first
        assert api.post(UNMERGE, {"operation": model.merges.pop()[0]}).status_code == 200
    assert tag_sets(api) == first
    assert_counters_exact(world)


def test_the_settings_undo_button_says_which_merge_to_undo_first(live_service, api, world):
    t1, t2, t3 = make_tags(api, "t1", "t2", "t3")
    set_tags(api, world, {"only t1": {t1}, "t2": {t2}})
    world.with_administrator(EMAIL, PASSWORD)
    person = Administrator(live_service.url, EMAIL, PASSWORD)
    project = f"/settings/projects/{world.project_id}"
    path = f"{project}/tags/{t1}/merge"
    merged = person.post(path, data={"csrf_token": person.csrf(path), "into": str(t2)})
    assert merged.status_code == 303, merged.text
    landing = person.get(merged.headers["Location"]).text
    operation = re.search(r'name="operation" value="([0-9a-f]{32})"', landing).group(1)
    merge(api, t2, t3)
    before = tag_sets(api)

    refused = person.post(f"{project}/tags/unmerge", data={
        "csrf_token": person.csrf(project), "operation": operation})
    assert refused.status_code == 409
    assert ("The merge cannot be undone yet: “t2” was merged into “t3” after this merge. "
            "Undo the merge of “t2” into “t3” first.") in refused.text, refused.text
    assert tag_sets(api) == before


@pytest.mark.parametrize("round_", range(5))
def test_an_undo_racing_a_merge_that_would_depend_on_it_gives_a_replay_either_way(
        api, world, round_):
    """t1 → t2 made; then, at the same moment, its undo and a merge of t2 into t3. Whichever
    goes first, the tag sets are the replay of the merges that stand: the undo went first
    (200) and t2 → t3 moved only t2's own queries, or the merge went first and the undo is
    refused (409)."""
    t1, t2, t3 = make_tags(api, "t1", "t2", "t3")
    first = {**{f"only t1 {n}": {t1} for n in range(3)}, "t1 and t2": {t1, t2},
             "t2": {t2}, "t1 and t3": {t1, t3}}
    set_tags(api, world, first)
    operation = merge(api, t1, t2)
    answers: dict[str, int] = {}

    def send(caller: Api, index: int):
        if index == 0:
            answer = caller.post(UNMERGE, {"operation": operation})
        else:
            answer = caller.post(MERGE, {"id": t2, "intoId": t3})
        answers["undo" if index == 0 else "merge"] = answer.status_code
        return answer

    racing_statuses(api, 2, send)
    assert answers["merge"] == 200 and answers["undo"] in (200, 409), answers
    model = Model(first)
    if answers["undo"] == 409:
        model.merges.append((operation, t1, t2))
    model.merges.append(("", t2, t3))
    assert tag_sets(api) == model.sets(), answers
    assert_counters_exact(world)
