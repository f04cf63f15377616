"""Every tag name the API accepts comes back exactly from the dashboard's export, through every
import: names holding the separators a tags cell is split at (";" always, "," and "|" when a
file's separator is chosen or guessed), double quotes, apostrophes, formula characters the
spreadsheet guard touches (=, +, -, @), non-ASCII letters and C1 controls.

Over real HTTP, on a live dashboard with its service (SQLite and, with TAGDESK_TEST_POSTGRES=1,
PostgreSQL): tags are created and queries tagged through the API, the project is exported by
the dashboard (the streamed download and an export job's file), and each file is imported
into an empty copy of the project — uploaded in the settings area, and by the command line in
the import's own shape, with the tags column named and its separator "," or "|", and with the
tags created by the import — after which every query carries exactly the names it had.
"""

from __future__ import annotations

import csv
import io
from types import SimpleNamespace

import pytest
import requests

from service import cli
from service.org import admin
from service.store.db import session_scope
from tests.security.test_csv_injection import export_jobs_file
from tests.security.test_csv_round_trip import counts, exported, imported
from tests.support.security import Site, make_org, start_site

EMAIL = "ann@acme.example"
# Every class of character a name may hold, each where a reader could mistake it: at its
# start, its end, alone, doubled, beside another.
NAMES = [
    "price; cheap", ";", ";;", "; leading", "trailing;", "a;b;c",
    "red, green", ",", "trailing,", ", leading", "x | y", "|", "a|b,c;d",
    '"quoted"', '"', '""', 'say "hi"', '5" screen', '"open', 'close"', '"a;b"', '";"',
    '" , "', "'", "''", "'quoted'", "it's", "'=apostrophe first",
    "=SUM(1+1)", "+1", "-minus", "@at", "a;=b", "x, -y", "p|@q", '"=quoted formula"',
    "=", "-", "two  inner  spaces", "größe", "日本語", "Ελληνικά", "עברית", "emoji 🎉",
    "a\u0085b", "c\u009fd", "back\\slash", "tab\u00a0nbsp", "plain",
]
PADDED = "   padded name   "  # trimmed by the API: its name is "padded name"
QUERIES = 24


def api(site: Site, key: str, project_id: str) -> requests.Session:
    session = requests.Session()
    session.headers.update({"x-api-key": key, "x-project-id": project_id})
    return session


def create_tags(site: Site, key: str, project_id: str, names: list[str]) -> dict[str, int]:
    """The tags, made through the API: their stored names → ids."""
    made = {}
    with api(site, key, project_id) as http:
        for name in names:
            answer = http.post(f"{site.url}/api/tags/create", json={"name": name}, timeout=30)
            assert answer.status_code == 201, (name, answer.text)
            made[answer.json()["name"]] = answer.json()["id"]
    return made


def names_by_query(site: Site, key: str, project_id: str) -> dict[tuple[str, str, str], list]:
    """Each query of the project with its tags' names, sorted, read through the API."""
    with api(site, key, project_id) as http:
        tags = http.post(f"{site.url}/api/tags/list", json={"limit": 1000}, timeout=30).json()
        named = {tag["id"]: tag["name"] for tag in tags["results"]}
        found = http.post(f"{site.url}/api/queries/list", json={"limit": 1000},
                          timeout=30).json()["results"]
    return {(q["query"], q["language"], q["country"]): sorted(named[t] for t in q["tags"])
            for q in found}


@pytest.fixture
def site(tmp_path, sqlite_template, database_url):
    # Views of more than two rows are exported by a job: the streamed download (GET) and a
    # job's file (POST) both export the project.
    site = start_site(tmp_path, sqlite_template, EXPORT_STREAM_LIMIT=2, SERVICE={
        "DATABASE_URL": database_url, "IMPORTS_FOLDER": str(tmp_path / "imports")})
    rows = [(f"query {number}", "en", "US", []) for number in range(QUERIES)]
    site.org = make_org(site.service_app, "Acme", {"Shop search": rows}, {}, email=EMAIL)
    project = site.org.project_id
    tags = create_tags(site, site.org.key, project, [*NAMES, PADDED])
    assert "padded name" in tags and len(tags) == len(NAMES) + 1
    # Each query a few names, each name on some query; one query every name, one none.
    ids = list(tags.values())
    items = [{"query": f"query {n}", "language": "en", "country": "US",
              "tagIds": sorted({ids[n % len(ids)], ids[(n * 7 + 3) % len(ids)],
                                ids[(n * 5 + 11) % len(ids)]})} for n in range(QUERIES - 2)]
    items.append({"query": f"query {QUERIES - 2}", "language": "en", "country": "US",
                  "tagIds": ids})
    with api(site, site.org.key, project) as http:
        tagged = http.patch(f"{site.url}/api/queries/many/tags-only",
                            json={"queries": items}, timeout=30)
    assert tagged.status_code == 200, tagged.text
    site.tags = tags
    yield site
    site.stop()


def empty_copy(site: Site, name: str, with_tags: bool = True) -> str:
    """A project of the organization with no query, and the first project's tags (made
    through the API) unless `with_tags` is false."""
    with session_scope(site.service_app) as session:
        project_id = admin.create_project(session, site.org.org_id, name)
    if with_tags:
        create_tags(site, site.org.key, project_id, list(site.tags))
    return project_id


def import_by_command_line(site: Site, project_id: str, content: bytes, folder,
                           *options: str) -> None:
    path = folder / "export.csv"
    path.write_bytes(content)
    result = site.service_app.test_cli_runner().invoke(
        cli.import_queries, [project_id, str(path), *options])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(QUERIES), result.output


def test_every_tag_name_survives_the_export_and_every_import(site, tmp_path):
    project, key = site.org.project_id, site.org.key
    expected = names_by_query(site, key, project)
    assert expected[(f"query {QUERIES - 2}", "en", "US")] == sorted(site.tags)
    assert expected[(f"query {QUERIES - 1}", "en", "US")] == []
    dashboard = site.visitor()
    assert dashboard.sign_in(key).status_code == 303
    settings = site.visitor()
    assert settings.settings_sign_in(EMAIL).status_code == 303

    download = exported(dashboard, project)
    job_file = export_jobs_file(SimpleNamespace(org=site.org, visitor_=dashboard)).encode()
    assert len(list(csv.reader(io.StringIO(download.decode())))) == QUERIES + 1

    for number, content in enumerate([download, job_file]):
        uploaded = empty_copy(site, f"Uploaded {number}")
        progress, _ = imported(settings, uploaded, content, "export.csv")
        assert counts(progress) == (QUERIES, 0, 0), progress
        assert names_by_query(site, key, uploaded) == expected

    ways = [(), ("--tags-column", "tags"), ("--tags-column", "tags", "--tags-separator", ","),
            ("--tags-column", "tags", "--tags-separator", "|")]
    for number, options in enumerate(ways):
        copy = empty_copy(site, f"Command line {number}")
        import_by_command_line(site, copy, download, tmp_path, *options)
        assert names_by_query(site, key, copy) == expected, options

    # The import creates the tags the file names: with exactly the names exported.
    for number, options in enumerate([(), ("--tags-column", "tags")]):
        created = empty_copy(site, f"Created {number}", with_tags=False)
        import_by_command_line(site, created, download, tmp_path, "--create-tags", *options)
        assert names_by_query(site, key, created) == expected, options
