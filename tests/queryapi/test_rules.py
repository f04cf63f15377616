"""The client side of rules (POST /api/rules/…, an extension) against the live service over
HTTP: created, listed, previewed, updated, paused and deleted as typed records; the tag
sources of query records; the service's refusals as the client's errors; a deployment that
hides the extension; and tiny servers for what the service never answers (a malformed rule,
a lost answer to a create)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from queryapi import (
    ApiError,
    Capabilities,
    Client,
    Conflict,
    InvalidRequest,
    Mode,
    NotFound,
    QueryFilters,
    Rule,
    RulePreview,
    TransportError,
)
from tests.support.clients import FAST

from .servers import Answer, RawServer, TinyServer, hang_up_before_answer, routes

KEY = "tdk_live_cnVsZXMgb2YgdGhlIGNsaWVudCBvayBvayBvayBvayBvayBvayBvayBvaw"
PROJECT = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"

def test_the_pattern_filter_is_sent_only_when_set_and_reads_back():
    assert QueryFilters(pattern="").to_body() == {}
    assert QueryFilters(text="x", pattern="cheap|billig").to_body() == {
        "query": "x", "pattern": "cheap|billig"}


def test_rules_are_created_listed_previewed_updated_paused_and_deleted(client, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert client.capabilities().rules
    german = QueryFilters(languages=("de",))
    rule = client.create_rule(seeded.project_id, "German", german, [brand])
    assert isinstance(rule, Rule)
    assert (rule.name, rule.condition, rule.tag_ids, rule.paused, rule.paused_reason) == (
        "German", german, (brand,), False, None)
    assert (rule.matching, rule.carrying) == (2, 1)
    assert rule.created_at == rule.updated_at and rule.created_at.tzinfo is not None
    assert client.list_rules(seeded.project_id) == (rule,)

    preview = client.preview_rule(seeded.project_id, QueryFilters(pattern="schuh|shoe"),
                                  [brand, sale])
    assert isinstance(preview, RulePreview)
    assert (preview.matching, preview.lacking) == (4, 3)
    assert sorted(query.query for query in preview.sample) == [
        "laufschuhe", "schuhe damen", "shoe store"]

    changed = client.update_rule(seeded.project_id, rule.id, name="Deutsch",
                                 condition=QueryFilters(text="schuh"), tag_ids=[sale])
    assert (changed.name, changed.condition, changed.tag_ids) == (
        "Deutsch", QueryFilters(text="schuh"), (sale,))
    assert (changed.matching, changed.carrying) == (2, 0)
    paused = client.pause_rule(seeded.project_id, rule.id, True)
    assert paused.paused is True
    assert client.pause_rule(seeded.project_id, rule.id, False).paused is False
    assert client.delete_rule(seeded.project_id, rule.id) is None
    assert client.list_rules(seeded.project_id) == ()
    with pytest.raises(NotFound, match="Rule not found"):
        client.delete_rule(seeded.project_id, rule.id)


def test_query_records_say_which_rule_added_a_tag(client, seeded):
    sale = seeded.tags["sale"]
    rule = client.create_rule(seeded.project_id, "Boots on sale", QueryFilters(text="boot"),
                              [sale])
    seeded.add_queries([("boots", "en", "US", ["brand"]), ("sandals", "en", "US", [])])
    found = {query.query: query for query in client.iter_queries(seeded.project_id)}
    boots = found["boots"]
    assert boots.tags == (seeded.tags["brand"], sale)
    [source] = boots.tag_sources
    assert (source.tag_id, source.rule_id, source.added_by) == (sale, rule.id, None)
    assert abs((datetime.now(UTC) - source.added_at).total_seconds()) < 60
    assert (boots.rule_of(sale), boots.rule_of(seeded.tags["brand"])) == (rule.id, None)
    assert found["sandals"].tag_sources == () and found["laufschuhe"].tag_sources == ()


def test_the_services_refusals_are_the_clients_errors(client, seeded, world):
    brand = seeded.tags["brand"]
    client.create_rule(seeded.project_id, "Brand it", QueryFilters(), [brand])
    with pytest.raises(Conflict, match='A rule named "Brand it" already exists'):
        client.create_rule(seeded.project_id, "BRAND IT", QueryFilters(), [brand])
    with pytest.raises(InvalidRequest, match="999999 is not a tag of this project"):
        client.create_rule(seeded.project_id, "other", QueryFilters(), [999_999])
    with pytest.raises(InvalidRequest, match="pattern"):
        client.preview_rule(seeded.project_id, QueryFilters(pattern="(unclosed"), [brand])
    with pytest.raises(NotFound, match="Rule not found"):
        client.pause_rule(seeded.project_id, 2**31 - 1, True)
    _org, their_key, their_project = world.new_org("Rival")
    with pytest.raises(NotFound, match="Project not found"):
        client.list_rules(their_project)


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: c.create_rule(PROJECT, 5, QueryFilters(), [1]), "A rule's name is text."),
    (lambda c: c.create_rule(PROJECT, "x", {"query": "a"}, [1]),
     "A rule's condition is QueryFilters."),
    (lambda c: c.create_rule(PROJECT, "x", QueryFilters(), []), "A rule adds at least one tag."),
    (lambda c: c.preview_rule(PROJECT, QueryFilters(), ["1"]),
     "A rule's tags are tag ids (whole numbers)."),
    (lambda c: c.pause_rule(PROJECT, 1, "yes"), "paused is True or False."),
    (lambda c: c.delete_rule(PROJECT, True), "A rule's id is a whole number."),
])
def test_what_the_service_would_refuse_is_refused_before_sending(call, message):
    with Client("http://127.0.0.1:9", KEY) as client, pytest.raises(InvalidRequest) as caught:
        call(client)
    assert str(caught.value) == message
    assert client.stats.requests == 0


def test_without_the_extension_nothing_is_offered(without_extensions, world):
    with Client(without_extensions.url, world.key) as client:
        assert client.capabilities() == Capabilities()
        with pytest.raises(NotFound):
            client.list_rules(world.project_id)
        page = client.list_queries(world.project_id)
        assert page.results == ()


@pytest.mark.parametrize(("payload", "problem"), [
    ({"results": [{"id": 1, "name": "x", "condition": {}, "tagIds": [1], "paused": "no",
                   "matching": 0, "carrying": 0, "createdAt": "2026-01-01T00:00:00Z",
                   "updatedAt": "2026-01-01T00:00:00Z"}]},
     "results[0].paused is not true or false ('no')"),
    ({"results": [{"id": 1, "name": "x", "condition": {}, "tagIds": [1], "paused": False,
                   "matching": -1, "carrying": 0, "createdAt": "2026-01-01T00:00:00Z",
                   "updatedAt": "2026-01-01T00:00:00Z"}]},
     "results[0].matching is a negative count (-1)"),
    ({"rules": []}, "results is missing"),
])
def test_malformed_rules_are_api_errors_with_a_sentence(payload, problem):
    path = "/api/rules/list"
    with (TinyServer(routes({("POST", path): lambda s: Answer(200, payload)})) as server,
          Client(server.url, KEY) as client, pytest.raises(ApiError) as caught):
        client.list_rules(PROJECT)
    assert str(caught.value) == (
        f"The service's answer to POST {path} could not be read: {problem}.")


def test_malformed_tag_sources_are_an_api_error():
    record = {"id": "q", "project": PROJECT, "tags": [1], "query": "x", "language": "en",
              "country": "US", "updatedAt": "2026-01-01T00:00:00Z",
              "tagSources": {"1": {"ruleId": "five"}}}
    page = {"page": {"totalRecords": 1, "limit": 50, "currentPage": 1, "totalPages": 1},
            "results": [record]}
    path = "/api/queries/list"
    with (TinyServer(routes({("POST", path): lambda s: Answer(200, page)})) as server,
          Client(server.url, KEY) as client, pytest.raises(ApiError) as caught):
        client.list_queries(PROJECT)
    assert "results[0].tagSources.1.ruleId is not a whole number" in str(caught.value)


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_create_whose_answer_was_lost_is_not_sent_again(mode):
    with (RawServer(hang_up_before_answer) as server,
          Client(server.url, KEY, mode, **FAST) as client):
        with pytest.raises(TransportError):
            client.create_rule(PROJECT, "once", QueryFilters(), [1])
        assert server.accepted == 1


def test_a_rule_is_applied_taken_back_and_put_back_a_part_at_a_time(client, seeded, live_service):
    sale = seeded.tags["sale"]
    rule = client.create_rule(seeded.project_id, "Shoes", QueryFilters(text="schuh"), [sale])
    applied = client.apply_rule(seeded.project_id, rule.id)
    assert (applied.tagged, applied.checked, applied.matching, applied.remaining,
            applied.cursor) == (2, 2, 2, 0, None)
    assert applied.applied_at.endswith("Z")
    taken = client.unapply_rule(seeded.project_id, rule.id, since=applied.applied_at)
    assert (taken.removed, taken.queries, taken.more) == (2, 2, False)
    assert len(taken.operation) == 32
    assert client.list_queries(seeded.project_id, QueryFilters(tag_ids=(sale,))) \
        .page.total_records == 1
    back = client.restore_rule(seeded.project_id, taken.operation)
    assert (back.removed, back.queries, back.more) == (2, 2, False)
    with pytest.raises(InvalidRequest):
        client.apply_rule(seeded.project_id, rule.id, cursor=-1)
    # Who makes a change: said by the client, recorded with the tags it adds.
    with Client(live_service.url, seeded.key, actor="Zoë Ünal") as named:
        [shoe] = [q for q in named.iter_queries(seeded.project_id) if q.query == "shoe store"]
        named.set_tags(seeded.project_id, [shoe.assignment([sale])])
        [shoe] = [q for q in named.iter_queries(seeded.project_id) if q.query == "shoe store"]
    source = shoe.source_of(sale)
    assert (source.added_by, source.rule_id) == ("Zoë Ünal", None)


def test_the_person_a_client_names_is_in_the_activity_of_the_rules_it_changes(live_service,
                                                                              seeded):
    """The client names who changes a rule on every call that changes one, as on set_tags:
    the organization's activity log shows that person, not the command line."""
    from sqlalchemy import select

    from service.store.models import OrgEvent

    with Client(live_service.url, seeded.key, actor="Zoë Ünal") as named:
        rule = named.create_rule(seeded.project_id, "Named", QueryFilters(),
                                 [seeded.tags["brand"]])
        named.pause_rule(seeded.project_id, rule.id, True)
        named.delete_rule(seeded.project_id, rule.id)
    events = seeded.run(lambda session: session.execute(
        select(OrgEvent.action, OrgEvent.actor_name, OrgEvent.key_prefix)
        .where(OrgEvent.action.like("rule.%")).order_by(OrgEvent.id)).all())
    assert [tuple(event) for event in events] == [
        ("rule.created", "Zoë Ünal", "tdk_live_"), ("rule.paused", "Zoë Ünal", "tdk_live_"),
        ("rule.deleted", "Zoë Ünal", "tdk_live_")]
