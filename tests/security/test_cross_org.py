"""Cross-organization attempts: another organization's project, queries, tags, edits and keys,
named on every API endpoint and every dashboard page, partial and form that takes them. Each
attempt gets what an id that does not exist gets — the same status, the same body, in about
the same time — and nothing of the other organization shows.

Endpoints and pages are read from docs/openapi.yaml and from the URL maps, so new ones are
covered when they are added (a new kind of id makes the test ask for a value for it).
"""

from __future__ import annotations

import statistics
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from sqlalchemy import select

from jobs.store import new_id
from service.org import admin, keys
from service.store.db import session_scope
from service.store.models import ApiKey, Rule, SavedView
from tests.support.api import Api
from tests.support.dashboard import CSRF_FIELD, CSRF_META
from tests.support.security import make_org, row_keys, start_site, tag_rows

SPEC = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
PROJECT_HEADER = "#/components/parameters/ProjectIdHeader"
# A request body for each project endpoint (a new endpoint needs one here).
BODIES = {"listQueries": {}, "listTags": {}, "setQueryTags": {"queries": []},
          "editQueryTags": {"queries": []}, "queryVersions": {"ids": []},
          "listImports": {},
          "createTag": {"name": "planted"}, "queryFacets": {}, "listViews": {},
          "createView": {"name": "planted", "filters": {}}, "updateView": {"id": 1},
          "deleteView": {"id": 1}, "listRules": {},
          "previewRule": {"condition": {}, "tagIds": [1]},
          "createRule": {"name": "planted", "condition": {}, "tagIds": [1]},
          "updateRule": {"id": 1}, "pauseRule": {"id": 1, "paused": True},
          "deleteRule": {"id": 1}, "applyRule": {"id": 1}, "unapplyRule": {"id": 1},
          "restoreRule": {"operation": "0" * 32}, "updateTag": {"id": 1},
          "mergeTag": {"id": 1, "intoId": 2}, "unmergeTag": {"operation": "0" * 32},
          "queryWords": {}, "suggestionStatus": {}, "refreshSuggestions": {},
          "acceptSuggestions": {"tagId": 1, "queryIds": ["0"]},
          "rejectSuggestions": {"tagId": 1, "queryIds": ["0"]}}
TIMING_PAIRS = 40
# How far apart the medians of "another organization's" and "does not exist" may be. Both take
# the same path through the code; the gap measured is well under a millisecond on an idle
# machine, and the pairing (one of each, alternately first) keeps a busy one from skewing it.
TIMING_TOLERANCE = 0.003
# A busy CI machine once put 3.2 ms between the medians of one round. Noise moves from round to
# round; a real difference in the code's path is there in every round, so a round within the
# tolerance is enough and only a gap in all of them fails.
TIMING_ROUNDS = 3
RIVAL_SECRETS = ("Rival secret project", "rival-secret-tag", "rival secret query")


def project_operations() -> list[tuple[str, str, str]]:
    """(operationId, method, path) of every operation that takes x-project-id."""
    document = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    found = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            refs = [p.get("$ref") for p in operation.get("parameters", [])]
            if PROJECT_HEADER in refs:
                found.append((operation["operationId"], method.upper(), path))
    return found


def paired_gap(first, second, pairs: int = TIMING_PAIRS) -> tuple[float, float, float]:
    """Median time of each call and the median of their paired differences (seconds). One of
    each per pair, alternately first, so drift and bursts of load hit both alike."""
    for _ in range(5):
        first(), second()
    times_first, times_second, gaps = [], [], []
    for index in range(pairs):
        order = (first, second) if index % 2 == 0 else (second, first)
        spent = []
        for call in order:
            started = time.perf_counter()
            call()
            spent.append(time.perf_counter() - started)
        a, b = spent if index % 2 == 0 else spent[::-1]
        times_first.append(a)
        times_second.append(b)
        gaps.append(a - b)
    return statistics.median(times_first), statistics.median(times_second), \
        statistics.median(gaps)


def assert_same_time(first, second) -> None:
    """The two calls take as long as each other in at least one of TIMING_ROUNDS rounds."""
    rounds = []
    for _ in range(TIMING_ROUNDS):
        rounds.append(paired_gap(first, second))
        if abs(rounds[-1][2]) < TIMING_TOLERANCE:
            return
    raise AssertionError(f"(first, second, gap) in every round: {rounds}")


# --- the API --------------------------------------------------------------------------------------


@pytest.fixture
def rival(live_service, world):
    """Another organization with a project, a tag and a tagged query."""
    org_id, key, project_id = world.new_org("Rival")

    def fill(session):
        tag_id = admin.create_tag(session, project_id, "rival-secret-tag", "#123456")
        admin.insert_queries(session, project_id, [
            (*admin.normalize_query("rival secret query", "en", "US"), [tag_id], None)])
        return tag_id

    tag_id = world.run(fill)
    world.add_queries([("running shoes", "en", "US", ["brand"])])
    return {"org_id": org_id, "key": key, "project_id": project_id, "tag_id": tag_id,
            "api": Api(live_service.url, key, project_id)}


def test_every_project_endpoint_answers_another_organizations_project_like_a_missing_one(
        live_service, world, rival, api):
    operations = project_operations()
    assert {op for op, _, _ in operations} == set(BODIES), "give each new endpoint a body"
    missing = str(uuid.uuid4())
    scoped = Api(live_service.url, world.new_key(project_id=world.project_id), None)
    for operation, method, path in operations:
        for caller, project_id in ((api, rival["project_id"]),
                                   (scoped, world.other_project_id)):
            foreign = caller.call(method, path, json=BODIES[operation],
                                  headers={"x-project-id": project_id})
            absent = caller.call(method, path, json=BODIES[operation],
                                 headers={"x-project-id": missing})
            assert foreign.status_code == absent.status_code == 404, (operation, foreign.text)
            assert foreign.json() == absent.json() == {
                "statusCode": 404, "message": "Project not found.", "error": "Not Found"}
            assert set(foreign.headers) == set(absent.headers)
    listed = api.projects().json()["results"]
    assert rival["project_id"] not in {project["id"] for project in listed}


def test_another_organizations_queries_are_not_found_by_suggestions(world, rival, api):
    """Accepting or rejecting a suggestion for its query answers as for a made-up id."""
    theirs = rival["api"].queries().json()["results"][0]["id"]
    tag_id = next(iter(world.tags.values()))
    for path in ("/api/suggestions/accept", "/api/suggestions/reject"):
        foreign = api.post(path, {"tagId": tag_id, "queryIds": [theirs]})
        absent = api.post(path, {"tagId": tag_id, "queryIds": [str(uuid.uuid4())]})
        assert foreign.status_code == absent.status_code == 404, (path, foreign.text)
        assert foreign.json()["message"] == f"No query {theirs} in this project."
    assert [row["tags"] for row in rival["api"].queries().json()["results"]] == [
        [rival["tag_id"]]]


def test_another_organizations_tags_and_queries_are_unknown_here(world, rival, api):
    rival_before = rival["api"].queries().json()["results"]
    made_up_tag = 2_000_000_000
    # Filtering by its tags finds nothing, as for tags that do not exist.
    for body in ({"tagIds": [rival["tag_id"]]}, {"tagNames": ["rival-secret-tag"]}):
        listed = api.queries(**body)
        assert listed.status_code == 200 and listed.json()["results"] == []
    assert api.queries(tagIds=[made_up_tag]).json() == api.queries(
        tagIds=[rival["tag_id"]]).json()
    # Setting its tags on our query is refused, naming the id as for a made-up one.
    ours = {"query": "running shoes", "language": "en", "country": "US"}
    foreign = api.set_tags([{**ours, "tagIds": [rival["tag_id"]]}])
    absent = api.set_tags([{**ours, "tagIds": [made_up_tag]}])
    assert foreign.status_code == absent.status_code == 400
    assert foreign.json()["message"] == [f"Tag {rival['tag_id']} is not a tag of this project."]
    assert absent.json()["message"] == [f"Tag {made_up_tag} is not a tag of this project."]
    # Its query, named in our project, is a query that does not exist here.
    theirs = {"query": "rival secret query", "language": "en", "country": "US", "tagIds": []}
    foreign = api.set_tags([theirs])
    absent = api.set_tags([{**theirs, "query": "no such query anywhere"}])
    assert foreign.status_code == absent.status_code == 404
    assert foreign.json()["message"].replace("rival secret query", "…") == \
        absent.json()["message"].replace("no such query anywhere", "…")
    assert rival["api"].queries().json()["results"] == rival_before


def test_another_organizations_project_takes_as_long_as_a_missing_one(world, rival, api):
    missing = str(uuid.uuid4())

    def call(project_id):
        return lambda: api.call("POST", "/api/queries/list", json={},
                                headers={"x-project-id": project_id})

    assert_same_time(call(rival["project_id"]), call(missing))


# --- the dashboard --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    """Acme (signed in, the attacker) and Rival, each with a project, tags, queries, an edit
    and a finished export; and Rival's settings account with a key."""
    site = start_site(tmp_path_factory.mktemp("cross-org"), sqlite_template,
                      EXPORT_STREAM_LIMIT=1)
    tags = {"brand": "#1f77b4", "rival-secret-tag": "#123456"}
    site.acme = make_org(site.service_app, "Acme", {"Shop search": [
        ("running shoes", "en", "US", []), ("laufschuhe", "de", "DE", [])], "Help desk": []},
        tags, email="ann@acme.example")
    site.rival = make_org(site.service_app, "Rival", {"Rival secret project": [
        ("rival secret query", "en", "US", ["rival-secret-tag"]),
        ("another rival query", "fr", "FR", [])]}, tags, email="bob@rival.example")
    rival = site.visitor()
    assert rival.sign_in(site.rival.key).status_code == 303
    project = site.rival.project_id
    site.rival_edit = tag_rows(rival, project, site.rival.tags["Rival secret project"]["brand"],
                               row_keys(rival, project))
    token = CSRF_META.search(rival.get(f"/projects/{project}/queries").text).group(1)
    started = rival.post(f"/projects/{project}/export", data={"csrf_token": token},
                         headers={"HX-Request": "true"})
    assert started.status_code == 200, started.text[:300]
    store = site.app.extensions["tagdesk_jobs"]
    site.rival_export = next(e.id for e in store.for_project(project, 10, 0)
                             if e.kind == "export")
    assert store.get(site.rival_export).state == "done"
    saved = rival.post(f"/projects/{project}/views", data={
        "csrf_token": token, "name": "Rival secret view", "view": "?q=secret"},
        headers={"HX-Request": "true"})
    assert saved.status_code == 200 and "Rival secret view" in saved.text, saved.text[:300]
    ruled = rival.post(f"/projects/{project}/rules", data={
        "csrf_token": token, "name": "Rival secret rule", "view": "?q=secret",
        "add": "rival-secret-tag", "step": "save"})
    assert ruled.status_code == 302, ruled.text[:300]
    with session_scope(site.service_app) as session:
        site.rival_rule = str(session.scalar(select(Rule.id).where(Rule.project_id == project)))
        site.rival_key_id = session.scalar(select(ApiKey.id).where(
            ApiKey.key_hash == keys.digest(site.rival.key)))
        site.rival_view = str(session.scalar(select(SavedView.id).where(
            SavedView.project_id == project)))
    site.attacker = site.visitor()
    assert site.attacker.sign_in(site.acme.key).status_code == 303
    assert site.attacker.settings_sign_in(site.acme.email).status_code == 303
    yield site
    site.stop()


def without_tokens(text: str, *ids: str) -> str:
    """A page with its CSRF tokens and the ids it was asked about blanked out."""
    text = CSRF_FIELD.sub('name="csrf_token" value=""', CSRF_META.sub("", text))
    for value in ids:
        text = text.replace(value, "…")
    return text


def assert_nothing_leaked(text: str) -> None:
    for secret in RIVAL_SECRETS:
        assert secret not in text


def project_routes(app) -> list[tuple[object, str]]:
    return [(rule, method) for rule in app.url_map.iter_rules()
            if "project_id" in rule.arguments
            for method in sorted(rule.methods & {"GET", "POST"})]


def build(app, rule, method: str, values: dict) -> str:
    unknown = set(rule.arguments) - set(values)
    assert not unknown, f"{rule.rule}: give this test a value for {sorted(unknown)}"
    return app.url_map.bind("localhost").build(
        rule.endpoint, {name: values[name] for name in rule.arguments}, method=method)


ABSENT_VIEW = str(2**31 - 1)


def test_every_page_answers_another_organizations_ids_like_missing_ones(site):
    attacker, rival = site.attacker, site.visitor()
    assert rival.sign_in(site.rival.key).status_code == 303
    token = attacker.token(f"/projects/{site.acme.project_id}/queries")
    rival_tag = site.rival.tags["Rival secret project"]["rival-secret-tag"]
    rival_rows = row_keys(rival, site.rival.project_id)
    form = {"csrf_token": token, "action": "add", "apply_tag": str(rival_tag), "name": "Mine",
            "selected": rival_rows, "scope": "all", "plan": "", "context": "notice"}
    routes = project_routes(site.app)
    assert {rule.endpoint for rule, _ in routes} >= {
        "queries.index", "tags.index", "bulk.apply", "bulk.confirm", "bulk.job_status",
        "activity.index", "export.download", "export.job_file", "bulk.undo"}
    acme_project = site.acme.project_id
    for rule, method in routes:
        edit = site.rival_export if rule.endpoint == "export.job_file" else site.rival_edit
        attempts = [
            # Their project (and their edit), against a project and edit that do not exist.
            ({"project_id": site.rival.project_id, "edit_id": edit, "view_id": site.rival_view,
              "rule_id": site.rival_rule, "tag_id": str(rival_tag)},
             {"project_id": str(uuid.uuid4()), "edit_id": new_id(), "view_id": ABSENT_VIEW,
              "rule_id": ABSENT_VIEW, "tag_id": ABSENT_VIEW}),
        ]
        if "edit_id" in rule.arguments:
            # Our project with their edit, against our project with an edit that does not exist.
            attempts.append(({"project_id": acme_project, "edit_id": edit},
                             {"project_id": acme_project, "edit_id": new_id()}))
        for name, theirs in (("view_id", site.rival_view), ("rule_id", site.rival_rule),
                             ("tag_id", str(rival_tag))):
            if name in rule.arguments:
                # Our project with their saved view, rule or tag, against one that does not
                # exist.
                attempts.append(({"project_id": acme_project, name: theirs},
                                 {"project_id": acme_project, name: ABSENT_VIEW}))
        for foreign_values, absent_values in attempts:
            for headers in ({}, {"HX-Request": "true"}):
                foreign_url = build(site.app, rule, method, foreign_values)
                absent_url = build(site.app, rule, method, absent_values)
                data = form if method == "POST" else None
                foreign = attacker.request(method, foreign_url, data=data, headers=headers)
                absent = attacker.request(method, absent_url, data=data, headers=headers)
                where = (method, foreign_url, headers)
                expected = 302 if rule.endpoint == "projects.show" else 404
                assert foreign.status_code == absent.status_code == expected, where
                ids = [values[name] for values in (foreign_values, absent_values)
                       for name in rule.arguments]
                assert without_tokens(foreign.text, *ids) == without_tokens(absent.text, *ids), \
                    where
                assert without_tokens(foreign.headers.get("Location", ""), *ids) == \
                    without_tokens(absent.headers.get("Location", ""), *ids), where
                assert_nothing_leaked(foreign.text)


def test_forms_on_our_project_cannot_reach_another_organizations_tags_or_rows(site):
    attacker, rival = site.attacker, site.visitor()
    assert rival.sign_in(site.rival.key).status_code == 303
    acme_project, rival_project = site.acme.project_id, site.rival.project_id
    rival_before = rival.get(f"/projects/{rival_project}/export.csv").text
    token = attacker.token(f"/projects/{acme_project}/queries")
    rival_tag = site.rival.tags["Rival secret project"]["rival-secret-tag"]

    def apply(tag_id: int, selected: list[str]):
        return attacker.post(f"/projects/{acme_project}/bulk", headers={"HX-Request": "true"},
                             data={"csrf_token": token, "action": "add",
                                   "apply_tag": str(tag_id), "selected": selected})

    ours = row_keys(attacker, acme_project)
    foreign, absent = apply(rival_tag, ours), apply(2_000_000_000, ours)
    assert foreign.status_code == absent.status_code == 400
    assert without_tokens(foreign.text) == without_tokens(absent.text)
    assert "not a tag of this project" in foreign.text
    # Their rows, sent with one of our tags, change nothing of theirs.
    acme_tag = site.acme.tags["Shop search"]["brand"]
    attacker.request("POST", f"/projects/{acme_project}/bulk", headers={"HX-Request": "true"},
                     data={"csrf_token": token, "action": "add", "apply_tag": str(acme_tag),
                           "selected": row_keys(rival, rival_project)})
    assert rival.get(f"/projects/{rival_project}/export.csv").text == rival_before
    # Their project as "the last one used" does not take us there; one of ours does.
    help_desk = site.acme.projects["Help desk"]
    for remembered, landing in ((rival_project, "/projects"),
                                (help_desk, f"/projects/{help_desk}/queries")):
        attacker.http.cookies.set("tagdesk_project", remembered,
                                  domain=urlsplit(site.url).hostname, path="/")
        assert attacker.get("/").headers["Location"] == landing


def test_the_settings_area_answers_another_organizations_key_like_a_missing_one(site):
    attacker = site.attacker
    token = attacker.token("/settings/api/generate")
    rules = [rule for rule in site.service_app.url_map.iter_rules() if "key_id" in rule.arguments]
    assert rules
    for rule in rules:
        for method in sorted(rule.methods & {"GET", "POST"}):
            foreign_url = build(site.service_app, rule, method, {"key_id": site.rival_key_id})
            absent_url = build(site.service_app, rule, method, {"key_id": 999_999})
            data = {"csrf_token": token} if method == "POST" else None
            foreign = attacker.request(method, foreign_url, data=data)
            absent = attacker.request(method, absent_url, data=data)
            assert foreign.status_code == absent.status_code == 404, (method, foreign_url)
            assert without_tokens(foreign.text) == without_tokens(absent.text)
            assert "Rival" not in foreign.text
    with session_scope(site.service_app) as session:
        assert session.get(ApiKey, site.rival_key_id).revoked_at is None


def test_another_organizations_page_takes_as_long_as_a_missing_one(site):
    attacker = site.attacker

    def page(project_id):
        return lambda: attacker.get(f"/projects/{project_id}/queries")

    assert_same_time(page(site.rival.project_id), page(str(uuid.uuid4())))
