"""What a read makes from a project's held bitmaps (the facets' sums' groups and arrays,
Project_.kept; the queries with no tag, Project_.no_tag) while another read brings those
bitmaps up to date is not kept as current: it saw some of the new bitmaps and not others.
And a read that sums while queries are added answers, from the arrays it took."""

from __future__ import annotations

import random

from service.engine import kinds, number_sums
from service.engine.held import header
from service.org import admin
from tests.service.test_facet_sums_families import Families, new_rows
from tests.service.test_numbers_exact import assert_sums

SUMS = ["clicks", "volume"]


def assert_tag_sums_exact(api, world) -> None:
    answer = api.call("POST", "/api/queries/facets", json={"sums": SUMS})
    assert answer.status_code == 200, answer.text
    rows = Families(world)
    for item in answer.json()["tags"]:
        these = rows.tag_set({}, item["id"])
        assert item["count"] == len(these), item["id"]
        assert_sums(item["sums"], rows.sums(these, SUMS), item["id"])


def held_now(service_app, world, session):
    """The project's bitmaps the live service holds, brought up to date (as a read does)."""
    connection = session.connection()
    return service_app.extensions["tagdesk_engine_held"].project(
        connection, world.project_id, header(connection, world.project_id))


def test_sums_made_while_the_tags_were_brought_up_to_date_are_made_again(
        api, world, service_app):
    tag_ids = list(world.tags.values())
    rng = random.Random(5)
    world.run(lambda s: admin.insert_queries(s, world.project_id, new_rows(rng, 200, tag_ids)))
    assert_tag_sums_exact(api, world)  # the groups made, as of this write

    project = world.run(lambda s: held_now(service_app, world, s))
    meanwhile = []

    class Watched(dict):
        """The held bitmaps; a read makes the groups as the second tag's bitmap is replaced
        (the first one's already is)."""

        def __setitem__(self, key, value):
            if key[0] == kinds.TAG and any(kind == kinds.TAG for kind, _value in meanwhile):
                number_sums.groups(project, number_sums.layout(project), dict(project.changed))
            meanwhile.append(key)
            super().__setitem__(key, value)

    project.whole = Watched(project.whole)
    untagged = [q for q in api.queries(limit=100).json()["results"] if not q["tags"]]
    answer = api.set_tags([{"query": q["query"], "language": q["language"],
                            "country": q["country"], "tagIds": [tag_id]}
                           for q, tag_id in zip(untagged, tag_ids[:2], strict=False)])
    assert answer.status_code == 200, answer.text
    assert_tag_sums_exact(api, world)
    assert sum(kind == kinds.TAG for kind, _value in meanwhile) == 2, meanwhile


def test_untagged_worked_out_while_the_bitmaps_were_brought_up_to_date_is_worked_out_again(
        api, world, service_app):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        (f"plain query {number}", "en", "US", [], None, {}) for number in range(50)]))
    assert api.queries(untagged=True, limit=1).json()["page"]["totalRecords"] == 50

    def project(session):
        return held_now(service_app, world, session)

    def tagged_query(text: str) -> None:
        world.run(lambda s: admin.insert_queries(s, world.project_id, [
            (text, "en", "US", [world.tags["brand"]], None, {})]))

    tagged_query("tagged one")
    held = world.run(project)  # brought up to date; its untagged queries not worked out yet
    tagged_query("tagged two")  # a write the process has not read yet

    class Watched(dict):
        """The held bitmaps; as a read works out the untagged queries from them, another read
        brings them up to date (after the first read took them as they were)."""

        def items(self):
            before = list(super().items())
            world.run(project)
            return iter(before)

    held.whole = Watched(held.whole)
    held.no_tag()
    held.whole = dict(held.whole)
    answer = api.queries(untagged=True, limit=1).json()
    assert answer["page"]["totalRecords"] == 50


def test_the_projects_sums_are_made_again_when_the_tags_change_while_a_read_sums(
        api, world, service_app, monkeypatch):
    tag_ids = list(world.tags.values())
    rng = random.Random(8)
    world.run(lambda s: admin.insert_queries(s, world.project_id, new_rows(rng, 200, tag_ids)))
    assert_tag_sums_exact(api, world)

    def project(session):
        return held_now(service_app, world, session)

    made = number_sums.groups
    writes = [lambda s: admin.insert_queries(s, world.project_id, [
        ("all tags at once", "en", "US", tag_ids, None, {"clicks": 11})])]

    def groups_then_a_write(held, at, as_of):
        """The groups a read sums by; then, before it sums the whole project, a write that
        makes a new group, which another read brings into the held bitmaps."""
        found = made(held, at, as_of)
        if writes:
            world.run(writes.pop())
            world.run(project)
        return found

    monkeypatch.setattr(number_sums, "groups", groups_then_a_write)
    world.run(lambda s: admin.insert_queries(s, world.project_id, [  # nothing kept is current
        ("one more", "en", "US", tag_ids[:1], None, {"clicks": 3})]))
    answer = api.call("POST", "/api/queries/facets", json={"sums": SUMS})
    assert answer.status_code == 200, answer.text
    assert not writes
    monkeypatch.undo()
    assert_tag_sums_exact(api, world)


def test_arrays_made_for_the_queries_before_a_write_are_made_again_for_those_after(
        api, world, service_app, monkeypatch):
    tag_ids = list(world.tags.values())
    world.run(lambda s: admin.insert_queries(s, world.project_id,
                                             new_rows(random.Random(9), 100, tag_ids)))
    def project(session):
        return held_now(service_app, world, session)

    held = world.run(project)
    laid_out = number_sums.layout
    writes = [lambda s: admin.insert_queries(s, world.project_id, [
        ("added meanwhile", "en", "US", tag_ids[:1], None, {"clicks": 4, "volume": 9})])]

    def layout_then_a_write(project_held):
        """The queries a read lays its arrays out for; then a write adds one, and another read
        brings it into the held bitmaps before the arrays are made."""
        found = laid_out(project_held)
        if writes:
            world.run(writes.pop())
            world.run(project)
        return found

    monkeypatch.setattr(number_sums, "layout", layout_then_a_write)
    number_sums.summing(held, tuple(SUMS))
    monkeypatch.undo()
    assert isinstance(number_sums.summing(held, tuple(SUMS)), number_sums.DenseSums)
    assert_tag_sums_exact(api, world)
