"""Rules on entry (service/engine/entry_rules.py), on SQLite and (TAGDESK_TEST_POSTGRES=1)
PostgreSQL: every query that enters a project — the command line's import-queries, the
settings page's upload, a few rows inserted at once — gets the tags of every active rule it
matches, in the import's transaction; the links say which rule added them (tagSources); the
report says how many queries rules tagged. Rules only add, and only as queries enter: queries
already there are never touched, a tag taken off by hand is not put back by a later import,
and a paused rule does nothing."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from service.engine.inserting import insert_queries
from service.imports.import_jobs import ImportJob
from service.org import admin
from service.store.models import OrgEvent
from tests.support.api import Api, by_rule
from tests.support.imports import HEADER, Administrator

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports"),
            "IMPORT_WAIT_SECONDS": 0, "IMPORT_BATCH_ROWS": 3}  # several ranges per file


def rule(api: Api, name: str, condition: dict, tag_ids: list[int]) -> dict:
    response = api.call("POST", "/api/rules/create",
                        json={"name": name, "condition": condition, "tagIds": tag_ids})
    assert response.status_code == 201, response.text
    return response.json()


def records(api: Api) -> dict[str, dict]:
    page = api.queries(limit=1000).json()["results"]
    return {record["query"]: record for record in page}


def tags_of(api: Api) -> dict[str, list[int]]:
    return {query: record["tags"] for query, record in records(api).items()}


FILE = HEADER + "".join(f"{query},{language},{country},{tags}\n" for query, language, country,
                        tags in [
                            ("laufschuhe damen", "de", "DE", ""),
                            ("laufschuhe herren", "de", "AT", "sale"),
                            ("running shoes", "en", "US", ""),
                            ("running shoes cheap", "en", "GB", "sale"),
                            ("schuhe kaufen", "de", "DE", "brand"),
                            ("boots", "en", "US", ""),
                            ("wanderschuhe", "de", "CH", ""),
                        ])


def test_an_import_on_the_command_line_tags_what_rules_match_and_says_how_many(
        api, world, flask_cli, tmp_path):
    brand, sale, question = world.tags["brand"], world.tags["sale"], world.tags["question"]
    world.add_queries([("laufschuhe alt", "de", "DE", [])])  # there before: never touched
    german = rule(api, "German", {"languages": ["de"]}, [brand])
    cheap = rule(api, "On sale or cheap", {"pattern": "cheap|billig"}, [sale, question])
    untagged_shoes = rule(api, "Untagged shoes", {"query": "schuhe", "untagged": True},
                          [question])
    path = tmp_path / "queries.csv"
    path.write_text(FILE, encoding="utf-8")
    result = flask_cli("import-queries", world.project_id, str(path))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == (
        "7 added, 0 already present, 0 rejected, 4 queries tagged by rules.")
    tags = tags_of(api)
    assert tags == {
        "laufschuhe alt": [],
        "laufschuhe damen": sorted([brand, question]),
        "laufschuhe herren": [brand, sale],
        "running shoes": [],
        "running shoes cheap": [sale, question],
        "schuhe kaufen": [brand],
        "boots": [],
        "wanderschuhe": sorted([brand, question]),
    }
    # Provenance: only the links a rule added, each with its rule.
    found = records(api)
    assert by_rule(found["boots"]) == {}
    assert by_rule(found["schuhe kaufen"]) == {}  # its file gave it brand already
    assert by_rule(found["laufschuhe herren"]) == {str(brand): german["id"]}
    assert by_rule(found["running shoes cheap"]) == {
        str(question): cheap["id"]}  # sale came with the file
    assert by_rule(found["laufschuhe damen"]) == {
        str(brand): german["id"], str(question): untagged_shoes["id"]}
    event = world.run(lambda s: s.scalars(select(OrgEvent).where(
        OrgEvent.action == "import.finished")).one())
    assert event.detail == (
        "queries.csv: 7 added, 0 already present, 0 rejected, 4 queries tagged by rules.")


def test_a_hand_removal_is_not_undone_by_a_later_import_and_a_paused_rule_does_nothing(
        api, world, flask_cli, tmp_path):
    brand = world.tags["brand"]
    german = rule(api, "German", {"languages": ["de"]}, [brand])
    first = tmp_path / "first.csv"
    first.write_text(HEADER + "laufschuhe,de,DE,\nschuhe,de,AT,\n", encoding="utf-8")
    assert flask_cli("import-queries", world.project_id, str(first)).exit_code == 0
    assert tags_of(api) == {"laufschuhe": [brand], "schuhe": [brand]}
    taken_off = api.set_tags([{"query": "laufschuhe", "language": "de", "country": "DE",
                               "tagIds": []}])
    assert taken_off.status_code == 200, taken_off.text
    second = tmp_path / "second.csv"
    second.write_text(HEADER + "laufschuhe,de,DE,\nwanderschuhe,de,CH,\n", encoding="utf-8")
    result = flask_cli("import-queries", world.project_id, str(second))
    assert result.stderr.splitlines()[-1] == (
        "1 added, 1 already present, 0 rejected, 1 query tagged by rules.")
    assert tags_of(api) == {"laufschuhe": [], "schuhe": [brand], "wanderschuhe": [brand]}
    assert by_rule(records(api)["laufschuhe"]) == {}
    paused = api.call("POST", "/api/rules/pause", json={"id": german["id"], "paused": True})
    assert paused.status_code == 200, paused.text
    third = tmp_path / "third.csv"
    third.write_text(HEADER + "bergschuhe,de,DE,\n", encoding="utf-8")
    result = flask_cli("import-queries", world.project_id, str(third))
    assert result.stderr.splitlines()[-1] == "1 added, 0 already present, 0 rejected."
    assert tags_of(api)["bergschuhe"] == []


def test_an_upload_on_the_settings_page_applies_rules_and_its_report_says_so(
        api, world, live_service):
    person = world.with_administrator(EMAIL, PASSWORD)
    brand = world.tags["brand"]
    german = rule(api, "German", {"languages": ["de"]}, [brand])
    http = Administrator(live_service.url, EMAIL, PASSWORD)
    report = http.upload(person.project_id, FILE)
    progress = http.finished(report)
    assert (progress["state"], progress["added"], progress["taggedByRules"]) == (
        "finished", 7, 3)
    assert progress["text"] == "7 added, 0 already present, 0 rejected, 3 queries tagged by rules."
    page = http.get(report).text
    assert "3 queries tagged by rules" in page
    job = world.run(lambda s: s.scalars(select(ImportJob)).one())
    assert (job.tagged_by_rules, job.summary) == (
        3, "7 added, 0 already present, 0 rejected, 3 queries tagged by rules")
    found = records(api)
    assert found["wanderschuhe"]["tags"] == [brand]
    assert by_rule(found["wanderschuhe"]) == {str(brand): german["id"]}


def test_a_few_rows_inserted_at_once_get_the_rules_tags_too(api, world):
    sale = world.tags["sale"]
    made = rule(api, "Boots", {"query": "boot"}, [sale])
    world.run(lambda session: insert_queries(session, world.project_id, [
        ("boots", "en", "US", [], None), ("shoes", "en", "US", [], None)]))
    found = records(api)
    assert (found["boots"]["tags"], found["shoes"]["tags"]) == ([sale], [])
    assert by_rule(found["boots"]) == {str(sale): made["id"]}
    assert admin.insert_queries is insert_queries  # the command line's few rows alike


CONDITIONS = [{"query": "running shoes"}, {"pattern": "^run.*s$"}, {"pattern": "cheap|billig"},
              {"query": "sh", "languages": ["en"]}, {"query": "schuh", "countries": ["DE", "AT"]},
              {"pattern": r"e\b", "languages": ["de"]}, {"query": "ÖL"}]
WORDS = ["running", "shoes", "cheap", "billig", "laufschuhe", "damen", "herren", "öl", "boots",
         "runners", "schuh"]


def test_what_rules_tag_on_entry_is_what_queries_list_matches_range_after_range(api, world):
    import io

    from service.imports import imports

    tags = [api.call("POST", "/api/tags/create", json={"name": f"rule {n}"}).json()["id"]
            for n in range(len(CONDITIONS))]
    for n, (condition, tag) in enumerate(zip(CONDITIONS, tags, strict=True)):
        rule(api, f"rule {n}", condition, [tag])
    rows = {(" ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7)[: 1 + i % 3]),
             ("de", "en")[i % 2], ("DE", "AT", "US", "GB")[i % 4]) for i in range(60)} | {
        ("running shoes", "en", "US"), ("cheap running shoes", "en", "GB"),
        ("running shoes damen", "de", "DE")}
    content = HEADER + "".join(f"{q},{lang},{country},\n" for q, lang, country in sorted(rows))
    counts = world.run(lambda s: imports.import_file(
        s, world.project_id, io.BytesIO(content.encode()), batch_rows=7))
    assert counts.added == len(rows)
    tagged = set()
    for condition, tag in zip(CONDITIONS, tags, strict=True):
        expected = {r["query"] + r["language"] for r in api.queries(limit=1000, **condition)
                    .json()["results"]}
        carrying = {r["query"] + r["language"] for r in api.queries(limit=1000, tagIds=[tag])
                    .json()["results"]}
        assert carrying == expected, condition
        assert expected, condition  # every condition matches something here
        tagged |= expected
    assert counts.tagged == len(tagged)
