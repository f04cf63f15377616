"""The command line contract: `flask --app service <command>`, ids and keys on the last line."""

import gc
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from sqlalchemy import select

from service import create_app
from service.org import keys
from service.store.db import session_scope
from service.store.models import ApiKey, Organization, User
from tests.service.commands import command_line, last_line
from tests.support.servers import LiveServer
from weblib.collector import YOUNG_OBJECTS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(database_url):
    """Commands run in-process (tests/service/commands.py) on this test's database."""
    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    yield command_line(app)
    app.extensions["tagdesk_engine"].dispose()


def test_the_real_command_line_prints_ids_on_the_last_line(database_url):
    env = {**os.environ, "TAGDESK_DATABASE_URL": database_url}
    env.pop("TAGDESK_REDIS_URL", None)

    def flask(*args):
        result = subprocess.run([sys.executable, "-m", "flask", "--app", "service", *args],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip().splitlines()[-1]

    flask("init-db")
    org = flask("create-org", "Acme")
    assert len(org) == 36 and org.count("-") == 4
    assert flask("create-key", org).startswith("tdk_live_")
    assert flask("list-orgs") == f"{org}\tAcme"


def test_init_db_refreshes_statistics_only_when_it_migrated(tmp_path):
    """(What the refresh does: test_query_texts_migration.py.)"""
    path = tmp_path / "new.sqlite3"
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{path}"})
    runner = app.test_cli_runner()
    try:
        assert "migrated, statistics refreshed" in runner.invoke(args=["init-db"]).output
        assert runner.invoke(args=["init-db"]).output.strip() == "Database is up to date."
    finally:
        app.extensions["tagdesk_engine"].dispose()


def test_whole_command_line_against_a_live_service(cli, database_url, tmp_path):
    cli("init-db")
    org = last_line(cli("create-org", "Acme GmbH"))
    key = last_line(cli("create-key", org))
    project = last_line(cli("create-project", org, "Shop search"))
    tag = int(last_line(cli("create-tag", project, "brand", "#1F77B4")))
    csv_file = tmp_path / "queries.csv"
    csv_file.write_text("query,language,country,tags\n"
                        "laufschuhe damen,DE,de,brand\n"
                        '"shoes, red",en,US,\n'
                        "größe 39,de,AT,Brand;brand\n", encoding="utf-8")
    assert last_line(cli("import-queries", project, str(csv_file))) == "3"
    assert last_line(cli("import-queries", project, str(csv_file))) == "0"
    cli("set-limits", org, "2", "100", "1000")

    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    server = LiveServer(app).start()
    try:
        headers = {"x-api-key": key, "x-project-id": project}
        body = requests.post(server.url + "/api/queries/list", json={"sort": [{"field": "query"}]},
                             headers=headers, timeout=10).json()
        assert [(r["query"], r["language"], r["country"], r["tags"]) for r in body["results"]] == [
            ("größe 39", "de", "AT", [tag]),
            ("laufschuhe damen", "de", "DE", [tag]),
            ("shoes, red", "en", "US", []),
        ]
        third = [requests.get(server.url + "/api/projects/list", headers=headers, timeout=10)
                 for _ in range(2)][-1]
        assert third.status_code == 429 or third.headers["X-RateLimit-Limit"] == "2"
        cli("revoke-key", key)
        assert requests.get(server.url + "/api/projects/list", headers=headers,
                            timeout=10).status_code == 401
    finally:
        server.stop()
        app.extensions["tagdesk_engine"].dispose()


def test_seed_demo_prints_a_working_key(cli, database_url):
    result = cli("seed-demo", "--queries", "300")
    key = last_line(result)
    assert key.startswith("tdk_live_")
    administrator = re.search(r"^Demo administrator \(settings\): (\S+), password: (\S+)$",
                              result.stderr, re.M)
    assert administrator and administrator[1] == "admin@demo.example"
    assert administrator[2] not in result.stdout
    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    server = LiveServer(app).start()
    try:
        projects = requests.get(server.url + "/api/projects/list", headers={"x-api-key": key},
                                timeout=10).json()["results"]
        assert len(projects) == 3
        totals = []
        for project in projects:
            headers = {"x-api-key": key, "x-project-id": project["id"]}
            body = requests.post(server.url + "/api/queries/list", json={"limit": 1000},
                                 headers=headers, timeout=10).json()
            totals.append(body["page"]["totalRecords"])
            languages = {r["language"] for r in body["results"]}
            assert body["page"]["totalRecords"] == 0 or len(languages) >= 2
        assert sorted(totals) == [30, 30, 300]
        tags = requests.post(server.url + "/api/tags/list", json={}, timeout=10,
                             headers={"x-api-key": key, "x-project-id": projects[0]["id"]})
        assert tags.status_code == 200
    finally:
        server.stop()
        app.extensions["tagdesk_engine"].dispose()


@pytest.mark.parametrize("args,message", [
    (["create-key", "00000000-0000-4000-8000-000000000000"], "No organization"),
    (["create-project", "nope", "x"], "No organization"),
    (["create-tag", "nope", "x", "#000000"], "No project"),
    (["set-limits", "nope", "0", "1", "1"], "Invalid value"),
    (["revoke-key", "tdk_live_unknown"], "No such key"),
])
def test_errors_are_sentences_not_tracebacks(cli, args, message):
    cli("init-db")
    result = cli(*args, ok=False)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_bad_colour_and_bad_csv_are_refused(cli, tmp_path):
    cli("init-db")
    org = last_line(cli("create-org", "Acme"))
    project = last_line(cli("create-project", org, "P"))
    result = cli("create-tag", project, "x", "red", ok=False)
    assert "#RRGGBB" in result.output
    bad = tmp_path / "bad.csv"
    bad.write_text("query,language,country,tags\nx,en,US,unknown-tag\n", encoding="utf-8")
    result = cli("import-queries", project, str(bad), ok=False)
    assert "Line 2: This project has no tag named “unknown-tag”." in result.output


# --- organizations by name or id; the lists -----------------------------------------------------


def lines(result) -> list[list[str]]:
    return [line.split("\t") for line in result.stdout.splitlines()]


def test_every_command_that_takes_an_organization_takes_its_name_or_its_id(cli, database_url):
    cli("init-db")
    assert cli("list-orgs").stdout == ""
    acme = last_line(cli("create-org", "Acme GmbH"))
    beta = last_line(cli("create-org", "Beta"))
    assert lines(cli("list-orgs")) == [[acme, "Acme GmbH"], [beta, "Beta"]]
    assert cli("list-projects", "Beta").stdout == ""

    shop = last_line(cli("create-project", "Acme GmbH", "Shop search"))
    help_centre = last_line(cli("create-project", acme, "Help centre"))
    assert lines(cli("list-projects", "Acme GmbH")) == [[help_centre, "Help centre"],
                                                        [shop, "Shop search"]]
    assert lines(cli("list-projects", acme)) == lines(cli("list-projects", "Acme GmbH"))

    key = last_line(cli("create-key", "Acme GmbH", "--project", shop))
    cli("set-limits", "Beta", "1", "2", "3")
    user_id = int(last_line(cli("create-user", "Beta", "admin@beta.example",
                                input="a long enough password\n")))

    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    try:
        with session_scope(app) as session:
            assert session.scalar(select(ApiKey.org_id).where(
                ApiKey.key_hash == keys.digest(key))) == acme
            organization = session.get(Organization, beta)
            assert (organization.limit_per_second, organization.limit_per_minute,
                    organization.limit_per_hour) == (1, 2, 3)
            assert session.get(User, user_id).org_id == beta
    finally:
        app.extensions["tagdesk_engine"].dispose()


def test_a_name_two_organizations_share_is_refused_with_their_ids(cli):
    cli("init-db")
    first = last_line(cli("create-org", "Twin"))
    second = last_line(cli("create-org", "Twin"))
    assert sorted(lines(cli("list-orgs"))) == sorted([[first, "Twin"], [second, "Twin"]])
    for args in (["create-project", "Twin", "P"], ["create-key", "Twin"],
                 ["list-projects", "Twin"], ["set-limits", "Twin", "1", "1", "1"],
                 ["create-user", "Twin", "a@example.com"]):
        result = cli(*args, ok=False)
        assert result.exit_code != 0
        assert (f"2 organizations are named 'Twin': give the id of the one you mean instead: "
                f"{first}, {second}.") in result.output, args
        assert "Traceback" not in result.output
    assert cli("list-projects", first).stdout == ""  # nothing was created
    project = last_line(cli("create-project", second, "P"))  # the id says which
    assert lines(cli("list-projects", second)) == [[project, "P"]]


def test_an_organization_neither_id_nor_name_is_a_sentence(cli):
    cli("init-db")
    cli("create-org", "Acme")
    result = cli("create-project", "Nobody", "P", ok=False)
    assert "No organization has the id or the name 'Nobody'." in result.output
    assert "No organization has the id or the name 'Nobody'." in cli(
        "list-projects", "Nobody", ok=False).output


def test_an_import_collects_young_objects_less_often(cli, tmp_path):
    """An import's batches die before a young collection sees them (weblib/collector.py)."""
    project = last_line(cli("create-project", last_line(cli("create-org", "Acme")), "Web"))
    csv_file = tmp_path / "q.csv"
    csv_file.write_text("query,language,country,clicks\nshoes,en,US,12\n")
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, *before[1:])
        assert last_line(cli("import-queries", project, str(csv_file))) == "1"
        assert gc.get_threshold() == (YOUNG_OBJECTS, *before[1:])
    finally:
        gc.set_threshold(*before)
