"""A rule applied (rules/apply) or its tags put back (rules/restore) a part at a time while one
of its tags goes — merged by tags/merge, or deleted in the settings — over real HTTP, with real
concurrency, on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL.

The tag goes at one chosen moment of one chosen part: as it begins (an apply's rule read,
its tags not yet). On PostgreSQL the removal then runs in its own
transaction beside the part, and holds the tag, deleted but not yet committed, until the part
waits for it: the part meets a tag that is gone under it. On SQLite the write lock makes the
removal wait for the part to end: it falls between two parts. Either way no answer is a 500:
an apply that meets a gone tag ends with a 409 and writes nothing of that part, the parts before
stay applied, on record and undoable; a restore puts back the links of the tags still there.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests
from sqlalchemy import select, text

from service.engine import deleting, merging, rule_links
from service.store.models import OrgEvent
from tests.service.counters import assert_counters_exact
from tests.support.api import Api, by_rule
from tests.support.security import Visitor

APPLY, UNAPPLY, RESTORE = (f"/api/rules/{name}" for name in ("apply", "unapply", "restore"))
EMAIL = "ann.admin@example.com"
PASSWORD = "correct horse battery staple"  # noqa: S105 (a test account's)
QUERIES = 120
PART = 20  # queries a part of apply takes, links a part of restore: 6 parts, or 12
REMOVED_AT_PART = 3
WAITED = 10  # seconds, at most, for the other side of the race


def on_postgres(world) -> bool:
    return world.app.extensions["tagdesk_engine"].dialect.name == "postgresql"


class Removal:
    """Takes the tag "sale" away — merged into "local" through the API, or deleted in the
    settings as a person does — from a thread of its own, when `fire` is called."""

    def __init__(self, kind: str, api: Api, world, monkeypatch) -> None:
        self.kind, self.api, self.world = kind, api, world
        self.gone = threading.Event()  # the tag is deleted, not yet committed
        self.first = False  # PostgreSQL: goes first, the part after it
        self.answer: requests.Response | None = None
        self.thread = threading.Thread(target=self._remove)
        if kind == "delete":
            world.with_administrator(EMAIL, PASSWORD)
            self.visitor = Visitor(api.base_url)
            assert self.visitor.settings_sign_in(EMAIL, PASSWORD).status_code == 303
            self.url = (f"/settings/projects/{world.project_id}/tags/{world.tags['sale']}"
                        "/delete")
            self.token = self.visitor.token(self.url)
        engine_step = {"merge": (merging, "merge"), "delete": (deleting, "delete_tag")}[kind]
        monkeypatch.setattr(*engine_step, self._held_open(getattr(*engine_step)))

    def _held_open(self, remove):
        def removed(*args, **kwargs):
            done = remove(*args, **kwargs)
            self.gone.set()
            if self.first and on_postgres(self.world):
                self._until_someone_waits()  # the part, for the tag held by this transaction
            return done
        return removed

    def _until_someone_waits(self) -> bool:
        deadline = time.monotonic() + WAITED
        waiting = text("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                       "current_database() AND wait_event_type = 'Lock'")
        while time.monotonic() < deadline:
            if self.world.run(lambda session: session.execute(waiting).scalar_one()):
                return True
            time.sleep(0.02)
        return False

    def _remove(self) -> None:
        if self.kind == "merge":
            self.answer = self.api.another_session().post(
                "/api/tags/merge", {"id": self.world.tags["sale"],
                                    "intoId": self.world.tags["local"]})
        else:
            self.answer = self.visitor.post(self.url, data={"csrf_token": self.token})

    def fire(self, first: bool) -> None:
        """`first`: the tag goes ahead of the part: on PostgreSQL it is deleted, and that
        transaction held open until the part waits for it. Else the removal comes while the
        part holds the tag: on PostgreSQL the part goes on once the removal waits for it.
        SQLite's write lock keeps any removal out until the part ends."""
        self.first = first
        self.thread.start()
        if on_postgres(self.world):
            if first:
                assert self.gone.wait(WAITED), "the removal did not reach its tag"
            else:
                assert self._until_someone_waits(), "the removal did not wait for the part"

    def finished(self) -> None:
        self.thread.join(WAITED * 3)
        assert self.answer is not None
        assert self.answer.status_code == (200 if self.kind == "merge" else 303), (
            self.answer.text)


def remove_at(monkeypatch, removal: Removal, step: str, call: int, first: bool) -> None:
    """`removal` fires as `step` of rule_links (apply_part, restore_part: as a part begins,
    an apply's rule read and its tags not yet held; Writer: as a part begins to write, its
    tags held) is called for the `call`-th time."""
    run = getattr(rule_links, step)
    calls = 0

    def step_of_a_part(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == call:
            removal.fire(first)
        return run(*args, **kwargs)

    monkeypatch.setattr(rule_links, step, step_of_a_part)


@pytest.fixture(params=["merge", "delete"])
def removal(request, api, world, monkeypatch) -> Removal:
    return Removal(request.param, api, world, monkeypatch)


@pytest.fixture
def rule(api, world, monkeypatch) -> dict:
    monkeypatch.setattr(rule_links, "PART", PART)  # the server runs in this process
    world.add_queries([(f"schuhe {n:03}", "de", "DE", []) for n in range(QUERIES)])
    created = api.post("/api/rules/create", {"name": "Schuhe", "condition": {
        "query": "schuhe"}, "tagIds": [world.tags["brand"], world.tags["sale"]]})
    assert created.status_code == 201, created.text
    return created.json()


def by_the_rule(api: Api, rule: dict) -> dict[str, list[str]]:
    """Each query's tags that the rule added, by query text."""
    found = api.queries(limit=1000).json()["results"]
    return {record["query"]: sorted(tag for tag, rule_id in by_rule(record).items()
                                    if rule_id == rule["id"]) for record in found}


def unapply_all(api: Api, rule: dict, **since) -> tuple[int, str]:
    """Every part of an unapply: (links taken away, its operation)."""
    removed, operation, more = 0, None, True
    while more:
        response = api.post(UNAPPLY, {"id": rule["id"], **since, **(
            {"operation": operation} if operation else {})})
        assert response.status_code == 200, response.text
        removed += response.json()["removed"]
        operation, more = response.json()["operation"], response.json()["more"]
    return removed, operation


def gone_sentence() -> str:
    return ("A tag of this rule was deleted or merged into another while the rule was "
            "applied, so this part was not. The queries tagged before it keep their tags "
            "(rules/unapply with since undoes them); apply the rule again to carry on with "
            "its tags as they are now.")


def apply_all(api: Api, rule: dict, between=lambda parts: None) -> list[requests.Response]:
    """The parts of an apply, up to the last or to the first that is refused; `between(n)`
    after the n-th."""
    answers, cursor = [], 0
    while cursor is not None:
        response = api.post(APPLY, {"id": rule["id"], "cursor": cursor})
        answers.append(response)
        if response.status_code != 200:
            break
        cursor = response.json()["cursor"]
        between(len(answers))
    return answers


def test_a_tag_removed_while_a_part_holds_it_waits_for_the_part(
        api, world, rule, removal, monkeypatch):
    remove_at(monkeypatch, removal, "Writer", REMOVED_AT_PART, first=False)

    def after(parts: int) -> None:
        if parts == REMOVED_AT_PART:  # the next part reads the rule once the removal is done
            removal.finished()

    answers = apply_all(api, rule, after)
    assert [answer.status_code for answer in answers] == [200] * 6, [a.text for a in answers]
    assert sum(answer.json()["tagged"] for answer in answers) == QUERIES
    # The parts after it applied the rule's tags as they were then: a merged tag's links
    # went to "local", whose the rule then names; a deleted one left the rule.
    brand, local = str(world.tags["brand"]), str(world.tags["local"])
    assert by_the_rule(api, rule) == {f"schuhe {n:03}": sorted(
        [brand, local] if removal.kind == "merge" else [brand]) for n in range(QUERIES)}
    assert_counters_exact(world)


def test_a_tag_gone_mid_apply_ends_it_with_a_409_and_keeps_what_was_applied(
        api, world, rule, removal, monkeypatch):
    remove_at(monkeypatch, removal, "apply_part", REMOVED_AT_PART, first=True)
    answers = apply_all(api, rule)
    removal.finished()

    statuses = [answer.status_code for answer in answers]
    applied = [answer.json() for answer in answers if answer.status_code == 200]
    if on_postgres(world):  # the tag went under the third part
        assert statuses == [200, 200, 409], [answer.text for answer in answers]
        assert answers[-1].json() == {"statusCode": 409, "error": "Conflict",
                                      "message": gone_sentence()}
    else:  # it went between two parts: the next ones apply the rule's tags as they are now
        assert set(statuses) == {200} and applied[-1]["cursor"] is None, statuses
    # Nothing half-applied: the queries the parts that succeeded tagged carry "brand" from
    # the rule, no other does; what "sale" was on went with it (or moved to "local").
    added = by_the_rule(api, rule)
    brand, local = str(world.tags["brand"]), str(world.tags["local"])
    assert sum(1 for tags in added.values() if brand in tags) == sum(
        part["tagged"] for part in applied) == (40 if on_postgres(world) else QUERIES)
    assert all(set(tags) <= {brand, local} for tags in added.values())
    assert_counters_exact(world)

    # On record, and undone as an apply is: every link the rule added goes.
    logged = world.run(lambda session: list(session.scalars(
        select(OrgEvent.action).where(OrgEvent.action == "rule.applied"))))
    assert logged == ["rule.applied"]
    removed, _operation = unapply_all(api, rule, since=applied[0]["appliedAt"])
    assert removed == sum(len(tags) for tags in added.values())
    assert not any(by_the_rule(api, rule).values())
    assert_counters_exact(world)


def test_a_restore_meeting_a_gone_tag_puts_back_the_links_of_the_tags_still_there(
        api, world, rule, removal, monkeypatch):
    assert {answer.status_code for answer in apply_all(api, rule)} == {200}
    removed, operation = unapply_all(api, rule)
    assert removed == 2 * QUERIES
    assert not any(by_the_rule(api, rule).values())

    remove_at(monkeypatch, removal, "restore_part", REMOVED_AT_PART, first=True)
    parts, more = [], True
    while more:
        response = api.post(RESTORE, {"operation": operation})
        assert response.status_code == 200, response.text
        parts.append(response.json())
        more = parts[-1]["more"]
    removal.finished()

    restored = [part["restored"] for part in parts]
    if on_postgres(world):  # from the third part on, only "brand" is there to put back
        assert restored == [20, 20] + [10] * 10 + [0], restored
    assert restored[:2] == [20, 20] and all(number in (10, 20) for number in restored[2:-1])
    added = by_the_rule(api, rule)
    brand, local = str(world.tags["brand"]), str(world.tags["local"])
    assert all(brand in tags for tags in added.values()) and len(added) == QUERIES
    # "sale" is gone; where it was merged, the links put back before went to "local".
    with_local = sum(1 for tags in added.values() if local in tags)
    assert with_local == (sum(restored) - QUERIES if removal.kind == "merge" else 0)
    assert all(set(tags) <= {brand, local} for tags in added.values())
    assert api.post(RESTORE, {"operation": operation}).json()["restored"] == 0
    assert_counters_exact(world)
