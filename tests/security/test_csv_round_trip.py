"""Our own CSV files imported again: the apostrophes the dashboard's export and the file of
rejected rows put before formula-like cells (weblib/spreadsheet_cells.py) are taken off by the
import, so every text comes back as it was — no duplicate queries (`'=cmd…` beside `=cmd…`),
no tag names refused for an apostrophe of ours.

Over real HTTP, on a live dashboard with its service (SQLite and, with TAGDESK_TEST_POSTGRES=1,
PostgreSQL): every hostile text of the test suite, with hostile codes and tag names, exported
by the dashboard, uploaded in the settings area and imported by the command line adds nothing;
uploaded into a project that lacks a tag, every row is rejected, and the file of rejected rows,
once the tag exists, imports exactly those rows.
"""

from __future__ import annotations

import csv
import io

import pytest
from sqlalchemy import select

from service import cli
from service.engine.tables import Query, query_tags
from service.org import admin
from service.store.db import session_scope
from service.store.models import Tag
from tests.dashboard.test_queries_read import HOSTILE as HOSTILE_VIEW_PARAMETERS
from tests.security import test_csv_injection, test_xss_browser
from tests.security.test_signin import HOSTILE_NEXT
from tests.service.test_bad_input import HOSTILE as HOSTILE_API_TEXTS
from tests.support.dashboard import csrf_token
from tests.support.security import Site, Visitor, make_org, start_site
from tests.support.waiting import wait_until

EMAIL = "ann@acme.example"
KEEP = "keep"  # every row's tag: a project without it rejects every row

# Texts the guard must give back exactly: apostrophes of their own, before formulas, spaces
# and double quotes before formulas, formulas after separators inside the text.
OWN_TEXTS = [
    "'=already quoted", "''=twice", "'plain apostrophe", "' =spaced", "'", "''", "semi;=1+1;",
    "semi;'=1+1;", "a,=1,'=2,''=3", "x; -2+3", "list;@SUM(1);+1", "\"=1+1\"", "a,\"=1",
    "'\"@x", "=", "-", "+1", "@", "'-'", "1;'", "end;", ";=start", "\u3000=ideographic",
    "\u00a0+nbsp",
]
XSS_TEXTS = [test_xss_browser.SCRIPT, test_xss_browser.IMG, test_xss_browser.SVG,
             test_xss_browser.HTMX, test_xss_browser.ATTRIBUTE, test_xss_browser.STYLE,
             test_xss_browser.TEMPLATE, test_xss_browser.IFRAME, test_xss_browser.CLOSE,
             test_xss_browser.LINK, test_xss_browser.PROJECT, test_xss_browser.OTHER_PROJECT,
             test_xss_browser.DISPLAY_NAME, test_xss_browser.KEY_NAME]
CANDIDATE_TEXTS = [
    *HOSTILE_API_TEXTS, *XSS_TEXTS, *HOSTILE_NEXT, *HOSTILE_VIEW_PARAMETERS,
    *(row[0] for row in test_csv_injection.ROWS), *OWN_TEXTS,
]
CANDIDATE_CODES = [
    *(code for row in test_csv_injection.ROWS for code in row[1:3]),
    *(code for row in test_xss_browser.ROWS for code in row[1:3]),
    "'=x", "''@y", "' -1", "\"=1", "en", "US",
]
# A name holding ";" ("ok;=evil") is written in double quotes in its cell, and read whole.
CANDIDATE_TAGS = [*test_csv_injection.TAGS, *test_xss_browser.TAGS, "'=quoted tag", "' +1",
                  "\"@x\"", "- dash"]


def accepted_rows() -> tuple[list[tuple[str, str, str, list[str]]], list[str]]:
    """The hostile rows the API accepts (its rules: admin.normalize_query), each text once, with
    hostile codes and one or two hostile tags besides KEEP; and the tag names."""
    tags = list(dict.fromkeys(CANDIDATE_TAGS))
    codes = []
    for code in dict.fromkeys(CANDIDATE_CODES):
        try:
            admin.normalize_query("x", code, code)
        except admin.AdminError:
            continue
        codes.append(code)
    rows, seen = [], set()
    for number, text in enumerate(CANDIDATE_TEXTS):
        language, country = codes[number % len(codes)], codes[(number * 7 + 3) % len(codes)]
        try:
            key = admin.normalize_query(text, language, country)
        except admin.AdminError:
            continue  # a control character, or too long: the API refuses it
        if key in seen:
            continue
        seen.add(key)
        names = [KEEP, tags[number % len(tags)], tags[(number * 3 + 1) % len(tags)]]
        rows.append((text, language, country, list(dict.fromkeys(names))))
    return rows, tags


ROWS, TAGS = accepted_rows()


@pytest.fixture
def site(tmp_path, sqlite_template, database_url):
    site = start_site(tmp_path, sqlite_template, SERVICE={
        "DATABASE_URL": database_url, "IMPORTS_FOLDER": str(tmp_path / "imports")})
    # KEEP made last: a cell of tag names then starts with a hostile one.
    colours = dict.fromkeys([*TAGS, KEEP], "#1f77b4")
    site.org = make_org(site.service_app, "Acme", {"Shop search": ROWS}, colours, email=EMAIL)
    yield site
    site.stop()


def stored(site: Site, project_id: str) -> set[tuple[str, str, str, frozenset[str]]]:
    """The project's queries as the service keeps them, with their tag names."""
    found: dict[tuple[str, str, str], set[str]] = {}
    with session_scope(site.service_app) as session:
        for query, language, country, name in session.execute(
                select(Query.query, Query.language, Query.country, Tag.name)
                .outerjoin(query_tags, query_tags.c.query_pk == Query.pk)
                .outerjoin(Tag, Tag.id == query_tags.c.tag_id)
                .where(Query.project_id == project_id)):
            found.setdefault((query, language, country), set()).update([name] if name else [])
    return {(*key, frozenset(names)) for key, names in found.items()}


def exported(visitor: Visitor, project_id: str) -> bytes:
    download = visitor.get(f"/projects/{project_id}/export.csv")
    assert download.status_code == 200
    return download.content


def imported(visitor: Visitor, project_id: str, content: bytes, name: str,
             state: str = "finished") -> tuple[dict, str]:
    """Upload the file in the settings area and wait for its import: (its counts, the address
    of its report)."""
    path = f"/settings/projects/{project_id}/imports"
    uploaded = visitor.post(path, data={"csrf_token": csrf_token(visitor.get(path).text)},
                            files={"file": (name, content, "text/csv")})
    assert uploaded.status_code == 303, uploaded.text[:500]
    report = uploaded.headers["Location"]
    assert wait_until(lambda: visitor.get(report + "/progress").json()["done"], 60, 0.05)
    progress = visitor.get(report + "/progress").json()
    assert progress["state"] == state, progress
    return progress, report


def counts(progress: dict) -> tuple[int, int, int]:
    return progress["added"], progress["present"], progress["rejected"]


def test_every_hostile_text_survives_export_then_import_and_adds_nothing(site, tmp_path):
    project = site.org.project_id
    expected = stored(site, project)
    assert len(expected) == len(ROWS) > 100
    dashboard = site.visitor()
    assert dashboard.sign_in(site.org.key).status_code == 303
    settings = site.visitor()
    assert settings.settings_sign_in(EMAIL).status_code == 303

    export = exported(dashboard, project)
    assert len(list(csv.reader(io.StringIO(export.decode())))) == len(ROWS) + 1
    # Apostrophes were added: the round trip is a real test of taking them off.
    assert "'=HYPERLINK(" in export.decode() and "''=twice" in export.decode()

    progress, _ = imported(settings, project, export, "export.csv")
    assert counts(progress) == (0, len(ROWS), 0)

    # The command line reads files with the same importer.
    path = tmp_path / "export.csv"
    path.write_bytes(export)
    result = site.service_app.test_cli_runner().invoke(cli.import_queries, [project, str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "0"
    assert stored(site, project) == expected


def test_the_rejected_rows_file_imports_exactly_the_rejected_rows(site):
    first = site.org.project_id
    with session_scope(site.service_app) as session:
        second = admin.create_project(session, site.org.org_id, "Shop search copy")
        for name in TAGS:
            admin.create_tag(session, second, name, "#ff7f0e")
    dashboard = site.visitor()
    assert dashboard.sign_in(site.org.key).status_code == 303
    settings = site.visitor()
    assert settings.settings_sign_in(EMAIL).status_code == 303

    # The copy lacks the tag every row has: every row is rejected, as the file had it (an
    # import that adds nothing that way has failed).
    progress, report = imported(settings, second, exported(dashboard, first), "export.csv",
                                state="failed")
    assert counts(progress) == (0, 0, len(ROWS))
    download = settings.get(report + "/rejected.csv")
    assert download.status_code == 200
    rejected = download.content
    assert "'=HYPERLINK(" in rejected.decode("utf-8-sig")

    # Once the tag exists, the file of rejected rows brings every row in, as the first
    # project has it; and once more, it adds nothing.
    with session_scope(site.service_app) as session:
        admin.create_tag(session, second, KEEP, "#ff7f0e")
    progress, _ = imported(settings, second, rejected, "rejected-rows-export.csv")
    assert counts(progress) == (len(ROWS), 0, 0)
    assert stored(site, second) == stored(site, first)
    progress, _ = imported(settings, second, rejected, "rejected-rows-export.csv")
    assert counts(progress) == (0, len(ROWS), 0)

    # The copy's own export imports into the first project without adding anything.
    progress, _ = imported(settings, first, exported(dashboard, second), "copy.csv")
    assert counts(progress) == (0, len(ROWS), 0)
