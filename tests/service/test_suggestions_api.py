"""Suggested tags as a feature of the service (an extension, POST /api/suggestions/…), over
real HTTP on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL: the status and its states,
learning in the background, queries/list's `include: ["suggestions"]`, the filter
`suggestedTagIds` (+ `minConfidence`) and the facets' `suggested` counts against a brute
force over the kept suggestions, accepting in parts with a cursor and its Undo, rejecting for
good, and that a suggestion never stands beside its tag whoever writes the link."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from service.engine import accepting, deleting
from service.learning.learner import of_app
from tests.service.counters import assert_counters_exact
from tests.service.migrating import engine_of_its_own, migrate, model_differences_after
from tests.support.api import Api

STATUS, REFRESH, ACCEPT, REJECT = (f"/api/suggestions/{name}"
                                   for name in ("status", "refresh", "accept", "reject"))
SHOES = ["running", "trail", "leather", "kids", "hiking", "walking", "tennis", "soccer",
         "winter", "summer", "canvas", "suede", "slip on", "lace up"]
BAGS = ["travel", "laptop", "tote", "school", "gym", "beach", "leather", "canvas", "weekend",
        "shopping", "diaper", "camera", "duffel", "messenger"]


def rows(tagged: int = 12) -> list[tuple]:
    """Shoes tagged brand, bags tagged sale: `tagged` of each, the others untagged."""
    found = []
    for n, word in enumerate(SHOES):
        found.append((f"{word} shoes", "en", "US", ["brand"] if n < tagged else []))
        found.append((f"{word} shoes sale", "en", "GB", []))
    for n, word in enumerate(BAGS):
        found.append((f"{word} bag", "en", "US", ["sale"] if n < tagged else []))
        found.append((f"{word} bags cheap", "en", "GB", []))
    return found


def learned(api: Api, app) -> dict:
    response = api.post(REFRESH, {})
    assert response.status_code == 202, response.text
    of_app(app).wait(120)
    status = api.post(STATUS, {})
    assert status.status_code == 200, status.text
    return status.json()


def listed(api: Api, **body) -> dict[str, dict]:
    found = api.queries(limit=1000, **body)
    assert found.status_code == 200, found.text
    return {record["query"]: record for record in found.json()["results"]}


def kept(world) -> set[tuple[int, int, float]]:
    """Every suggestion kept: (query key, tag, confidence)."""
    return world.run(lambda s: {tuple(row) for row in s.execute(text(
        "SELECT query_pk, tag_id, confidence FROM query_suggestions"))})


def key_of(world) -> dict[str, int]:
    return world.run(lambda s: dict(s.execute(text("SELECT query, pk FROM queries")).all()))


def links(world) -> set[tuple[int, int]]:
    return world.run(lambda s: {tuple(row) for row in s.execute(text(
        "SELECT query_pk, tag_id FROM query_tags"))})


@pytest.fixture
def ready(api, world, service_app) -> dict:
    world.add_queries(rows())
    status = learned(api, service_app)
    assert status["state"] == "ready", status
    return status


def test_too_few_tags_says_how_many_more_are_needed(api, world):
    world.add_queries(rows(tagged=4))
    status = api.post(STATUS, {}).json()
    assert status["state"] == "too few tags"
    assert status["needed"] == 6
    assert status["learnedAt"] is None and status["defaultConfidence"] is None
    assert status["tags"] == []


def test_learning_then_ready_with_what_it_learned_from(api, world, service_app):
    world.add_queries(rows())
    first = api.post(STATUS, {}).json()  # enough tags, never learned: it starts learning
    assert first["state"] == "learning"
    of_app(service_app).wait(120)
    status = api.post(STATUS, {}).json()
    assert status["state"] == "ready"
    assert status["learnedFrom"] == 24
    assert status["learnedAt"].endswith("Z")
    assert 0.5 <= status["defaultConfidence"] <= 1
    assert 0 <= status["heldBackRight"] <= 1
    assert {tag["id"] for tag in status["tags"]} == {world.tags["brand"], world.tags["sale"]}
    assert sum(tag["suggested"] for tag in status["tags"]) > 0


def test_a_suggestion_is_never_listed_for_a_tag_the_query_has(api, world, ready):
    records = listed(api, include=["suggestions"], minConfidence=0)
    given = 0
    for record in records.values():
        confidences = [item["confidence"] for item in record["suggestions"]]
        assert confidences == sorted(confidences, reverse=True)
        for item in record["suggestions"]:
            assert item["tagId"] not in record["tags"]
            given += 1
    assert given > 0
    # At the default confidence by default.
    default = ready["defaultConfidence"]
    for record in listed(api, include=["suggestions"]).values():
        assert all(item["confidence"] >= default for item in record["suggestions"])
    assert_counters_exact(world)


@pytest.mark.parametrize("minimum", [None, 0.6])
def test_filters_and_facets_by_suggestion_equal_a_brute_force(api, world, ready, minimum):
    brand, sale = world.tags["brand"], world.tags["sale"]
    threshold = ready["defaultConfidence"] if minimum is None else minimum
    keys = key_of(world)
    by_key = {pk: query for query, pk in keys.items()}
    pairs = {(pk, tag) for pk, tag, confidence in kept(world) if confidence >= threshold}
    extra = {} if minimum is None else {"minConfidence": minimum}
    for chosen in ([brand], [sale], [brand, sale]):
        expected = {by_key[pk] for pk, tag in pairs if tag in chosen}
        assert set(listed(api, suggestedTagIds=chosen, **extra)) == expected
        # With another filter beside it.
        assert set(listed(api, suggestedTagIds=chosen, countries=["GB"], **extra)) == {
            query for query in expected if query.endswith(("sale", "cheap"))}
    facets = api.post("/api/queries/facets", {"countries": ["GB"], **extra}).json()
    gb = {pk for query, pk in keys.items() if query.endswith(("sale", "cheap"))}
    assert facets["suggested"] == sorted(
        ({"id": tag, "count": len({pk for pk, each in pairs if each == tag} & gb)}
         for tag in {tag for _pk, tag in pairs}),
        key=lambda item: (-item["count"], item["id"]))
    # The facet leaves its own filter out: choosing brand still counts sale.
    chosen = api.post("/api/queries/facets", {"suggestedTagIds": [brand], **extra}).json()
    assert {item["id"]: item["count"] for item in chosen["suggested"]} == {
        tag: len({pk for pk, each in pairs if each == tag}) for tag in {t for _p, t in pairs}}
    assert chosen["totalRecords"] == len({pk for pk, tag in pairs if tag == brand})


def test_a_tag_not_the_projects_matches_nothing(api, ready):
    assert listed(api, suggestedTagIds=[999999]) == {}


def test_accept_in_parts_with_a_cursor_and_undo_takes_exactly_those(api, world, ready,
                                                                    monkeypatch):
    monkeypatch.setattr(accepting, "PART", 3)  # the server runs in this process
    brand = world.tags["brand"]
    before_links = links(world)
    suggested = set(listed(api, suggestedTagIds=[brand]))
    assert len(suggested) > 3
    parts, cursor = [], 0
    while cursor is not None:
        response = api.post(ACCEPT, {"tagId": brand, "filters": {"suggestedTagIds": [brand]},
                                     "cursor": cursor}, **{"x-tagdesk-actor": "Ana"})
        assert response.status_code == 200, response.text
        parts.append(response.json())
        cursor = parts[-1]["cursor"]
    assert [part["checked"] for part in parts[:-1]] == [3] * (len(parts) - 1)
    accepted = [query for part in parts for query in part["queries"]]
    assert {query["query"] for query in accepted} == suggested
    assert sum(part["tagged"] for part in parts) == len(suggested)
    records = listed(api, include=["suggestions"], minConfidence=0)
    for name in suggested:
        record = records[name]
        assert brand in record["tags"]
        assert record["tagSources"][str(brand)]["suggested"] is True
        assert record["tagSources"][str(brand)]["addedBy"] == "Ana"
        assert brand not in {item["tagId"] for item in record["suggestions"]}
    assert listed(api, suggestedTagIds=[brand]) == {}
    assert_counters_exact(world)
    # Undo: tags-edit removes exactly the links the accept made.
    undo = api.call("PATCH", "/api/queries/many/tags-edit", {"queries": [
        {"query": query["query"], "language": query["language"], "country": query["country"],
         "remove": [brand]} for query in accepted]})
    assert undo.status_code == 200, undo.text
    assert links(world) == before_links


def test_an_accepted_suggestion_taken_away_again_comes_back_at_its_confidence(api, world,
                                                                              ready):
    """An Undo of an accept (tags-edit taking the tag away) or set-tags leaving the tag out
    gives the suggestion back as it was, at its confidence, in lists, filters and counts; a
    link made by hand and taken away gives nothing."""
    brand, question = world.tags["brand"], world.tags["question"]
    before = kept(world)
    records = listed(api, include=["suggestions"])
    chosen = [record for record in records.values()
              if brand in {item["tagId"] for item in record["suggestions"]}][:3]
    assert len(chosen) == 3
    by_hand = next(record for record in records.values() if record not in chosen)
    done = api.post(ACCEPT, {"tagId": brand, "queryIds": [r["id"] for r in chosen]})
    assert done.json()["tagged"] == 3
    assert api.set_tags([{"query": by_hand["query"], "language": by_hand["language"],
                          "country": by_hand["country"],
                          "tagIds": [*by_hand["tags"], question]}]).status_code == 200
    assert not kept(world) >= before
    # Two taken away by tags-edit (as Undo does), one by set-tags; the hand-made link too.
    undo = api.call("PATCH", "/api/queries/many/tags-edit", {"queries": [
        {"query": r["query"], "language": r["language"], "country": r["country"],
         "remove": [brand]} for r in chosen[:2]]})
    assert undo.status_code == 200, undo.text
    last = chosen[2]
    assert api.set_tags([
        {"query": last["query"], "language": last["language"], "country": last["country"],
         "tagIds": last["tags"]},
        {"query": by_hand["query"], "language": by_hand["language"],
         "country": by_hand["country"], "tagIds": by_hand["tags"]}]).status_code == 200
    assert kept(world) == before
    after = listed(api, include=["suggestions"])
    for record in (*chosen, by_hand):
        assert after[record["query"]]["suggestions"] == record["suggestions"]
    assert {r["query"] for r in chosen} <= set(listed(api, suggestedTagIds=[brand]))
    assert_counters_exact(world)


def test_accept_by_query_ids(api, world, ready):
    brand = world.tags["brand"]
    records = listed(api, include=["suggestions"])
    chosen = [record for record in records.values()
              if brand in {item["tagId"] for item in record["suggestions"]}][:2]
    unsuggested = next(record for record in records.values()
                       if not record["suggestions"] and brand not in record["tags"])
    done = api.post(ACCEPT, {"tagId": brand, "queryIds": [r["id"] for r in chosen]
                             + [unsuggested["id"]]}).json()
    assert {query["id"] for query in done["queries"]} == {r["id"] for r in chosen}
    assert done["cursor"] is None
    after = listed(api)
    assert all(brand in after[r["query"]]["tags"] for r in chosen)
    assert brand not in after[unsuggested["query"]]["tags"]


def test_accepting_one_row_reads_only_its_own_suggestions(api, world, ready, statements):
    """A row's Accept (the dashboard's `a`) after any write asks for that row's suggestions,
    not every suggestion of the tag in the project (a read that grows with the project)."""
    brand = world.tags["brand"]
    records = [record for record in listed(api, include=["suggestions"]).values()
               if brand in {item["tagId"] for item in record["suggestions"]}]
    for record in records[:2]:  # each accept is a write: the next reads afresh
        statements.clear()
        done = api.post(ACCEPT, {"tagId": brand, "queryIds": [record["id"]]})
        assert [query["id"] for query in done.json()["queries"]] == [record["id"]]
        read = [statement for statement in statements
                if "FROM query_suggestions" in statement and "confidence >=" in statement]
        assert read and all("json_each" in statement or "ANY" in statement.upper()
                            for statement in read), read


def test_rejected_is_never_suggested_again_even_after_relearning(api, world, ready,
                                                                  service_app):
    brand = world.tags["brand"]
    records = listed(api, include=["suggestions"], minConfidence=0)
    chosen = [record for record in records.values()
              if brand in {item["tagId"] for item in record["suggestions"]}]
    response = api.post(REJECT, {"tagId": brand, "queryIds": [r["id"] for r in chosen]})
    assert response.status_code == 200, response.text
    assert response.json() == {"rejected": len(chosen)}
    assert api.post(REJECT, {"tagId": brand, "queryIds": [chosen[0]["id"]]}).json() == {
        "rejected": 0}

    def none_of_brand() -> None:
        for record in listed(api, include=["suggestions"], minConfidence=0).values():
            assert brand not in {item["tagId"] for item in record["suggestions"]} or \
                record["id"] not in {r["id"] for r in chosen}
        names = set(listed(api, suggestedTagIds=[brand], minConfidence=0))
        assert not names & {r["query"] for r in chosen}

    none_of_brand()
    assert_counters_exact(world)
    assert learned(api, service_app)["state"] == "ready"
    none_of_brand()
    assert_counters_exact(world)


def test_any_writer_adding_the_link_takes_the_suggestion_away(api, world, ready):
    brand = world.tags["brand"]
    records = listed(api, include=["suggestions"], minConfidence=0)
    chosen = [record for record in records.values()
              if brand in {item["tagId"] for item in record["suggestions"]}]
    first, second = chosen[0], chosen[1]
    # set-tags
    response = api.set_tags([{"query": first["query"], "language": first["language"],
                              "country": first["country"], "tagIds": [brand]}])
    assert response.status_code == 200, response.text
    # a rule
    rule = api.post("/api/rules/create", {"name": "One", "condition": {
        "query": second["query"]}, "tagIds": [brand]}).json()
    assert api.post("/api/rules/apply", {"id": rule["id"]}).status_code == 200
    pairs = {(pk, tag) for pk, tag, _c in kept(world)}
    assert not pairs & links(world)
    left = listed(api, include=["suggestions"], minConfidence=0)
    for record in (first, second):
        assert brand in left[record["query"]]["tags"]
        assert brand not in {item["tagId"] for item in left[record["query"]]["suggestions"]}
    assert_counters_exact(world)


def test_a_deleted_tag_takes_its_suggestions_and_rejections_with_it(api, world, ready):
    sale = world.tags["sale"]
    some = next(record for record in listed(api, include=["suggestions"]).values()
                if sale in {item["tagId"] for item in record["suggestions"]})
    api.post(REJECT, {"tagId": sale, "queryIds": [some["id"]]})
    world.run(lambda s: deleting.delete_tag(s, world.project_id, sale))
    assert world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM query_suggestions WHERE tag_id = :t"), {"t": sale}).scalar()) == 0
    assert world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM suggestion_rejections WHERE tag_id = :t"), {"t": sale}
    ).scalar()) == 0
    assert_counters_exact(world)


@pytest.mark.parametrize(("path", "body", "message"), [
    (ACCEPT, {"tagId": 1}, "give 'queryIds' or 'filters', one of the two"),
    (ACCEPT, {"tagId": 1, "queryIds": ["x"], "filters": {}},
     "give 'queryIds' or 'filters', one of the two"),
    (ACCEPT, {"tagId": 999999, "filters": {}}, "'tagId': 999999 is not a tag of this project."),
    (REJECT, {"tagId": 999999, "queryIds": ["x"]},
     "'tagId': 999999 is not a tag of this project."),
    (REJECT, {"tagId": "brand", "queryIds": ["x"]}, "tagId"),
    (REJECT, {"tagId": 1, "queryIds": []}, "queryIds"),
    ("/api/queries/list", {"minConfidence": 1.5}, "minConfidence"),
    ("/api/queries/list", {"include": ["suggestion"]}, "include"),
    (STATUS, {"projectId": "x"}, "projectId"),
])
def test_validation_answers_with_sentences(api, world, path, body, message):
    response = api.post(path, body)
    assert response.status_code == 400, response.text
    assert message in response.text


def test_unknown_query_ids_are_named_and_not_found(api, world, ready):
    brand = world.tags["brand"]
    response = api.post(REJECT, {"tagId": brand, "queryIds": ["nope"]})
    assert response.status_code == 404, response.text
    assert "No query nope in this project." in response.text


def test_other_organizations_and_other_projects_are_404(api, world, live_service):
    _org, key, project = world.new_org()
    assert Api(live_service.url, key, project).post(STATUS, {}).status_code == 200
    mine_from_them = Api(live_service.url, key, world.project_id)
    for path, body in ((STATUS, {}), (REFRESH, {}), (REJECT, {"tagId": 1, "queryIds": ["x"]}),
                       (ACCEPT, {"tagId": 1, "filters": {}})):
        assert mine_from_them.post(path, body).status_code == 404
    scoped = Api(live_service.url, world.new_key(project_id=world.project_id),
                 world.other_project_id)
    assert scoped.post(STATUS, {}).status_code == 404


def test_a_rule_cannot_match_by_suggestions(api, world):
    for condition in ({"suggestedTagIds": [world.tags["brand"]]}, {"minConfidence": 0.9}):
        response = api.post("/api/rules/create", {"name": "R", "condition": condition,
                                                  "tagIds": [world.tags["sale"]]})
        assert response.status_code == 400
        assert "a rule cannot match by suggestions" in response.text


SUGGESTION_TABLES = {"suggestion_models", "query_suggestions", "suggestion_rejections"}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0039_adds_the_suggestions_tables_and_takes_them_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_suggestions_") as engine:
        differences = model_differences_after(engine, "0038", "0039")
        assert [d for d in differences if "suggest" in repr(d) and "suggestion_jobs" not in
                repr(d) and "learning_" not in repr(d)  # suggestion_jobs: 0041
                and "linked_suggested" not in repr(d)  # 0042
                and "suggested_confidence" not in repr(d)] == []  # 0043
        assert set(inspect(engine).get_table_names()) >= SUGGESTION_TABLES
        migrate(engine, "0038", down=True)
        assert not SUGGESTION_TABLES & set(inspect(engine).get_table_names())
        assert "suggested" not in {c["name"] for c in inspect(engine).get_columns("query_tags")}
        migrate(engine, "head")


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0043_keeps_an_accepted_suggestions_confidence_and_takes_it_away(kind,
                                                                                 tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_accepted_confidence_") as engine:
        differences = model_differences_after(engine, "0042", "0043")
        assert [d for d in differences if "suggested_confidence" in repr(d)] == []
        assert "suggested_confidence" in link_columns(engine)
        migrate(engine, "0042", down=True)
        assert "suggested_confidence" not in link_columns(engine)
        migrate(engine, "head")


def link_columns(engine) -> set[str]:
    return {column["name"] for column in inspect(engine).get_columns("query_tags")}


def test_without_a_default_confidence_the_status_says_null_and_nothing_is_suggested(
        api, world, service_app):
    """Tags that nothing in the texts tells apart: no confidence is right often enough."""
    world.add_queries([(f"query number {n}", "en", "US", ["brand" if n % 2 else "sale"])
                       for n in range(40)] + [(f"other {n}", "en", "US", []) for n in range(10)])
    status = learned(api, service_app)
    assert status["state"] == "ready"
    assert status["defaultConfidence"] is None and status["heldBackRight"] is None
    assert all(tag["suggested"] == 0 for tag in status["tags"])
    for record in listed(api, include=["suggestions"], minConfidence=0).values():
        assert record["suggestions"] == []
    assert listed(api, suggestedTagIds=[world.tags["brand"]], minConfidence=0) == {}
    assert api.post("/api/queries/facets", {"minConfidence": 0}).json()["suggested"] == []


POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)


@POSTGRES_ONLY
def test_each_learning_vacuums_the_suggestions_it_wrote_again(api, world, service_app):
    """Each learning writes every suggestion again: the old rows are vacuumed at its end, not
    left dead until autovacuum (at 10M they slowed a page's suggestions to 577 ms)."""
    world.add_queries(rows())
    assert learned(api, service_app)["state"] == "ready"
    first = last_vacuum(world)
    assert first is not None
    world.add_queries([(f"more boots {n}", "en", "US", ["brand"]) for n in range(30)])
    learned(api, service_app)
    assert last_vacuum(world) > first


def last_vacuum(world):
    return world.run(lambda s: s.execute(text(
        "SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'query_suggestions'"
    )).scalar())
