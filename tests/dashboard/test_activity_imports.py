"""The dashboard's Activity lists the project's imports made in the settings (read through the
API, POST /api/imports/list): the file, added / already present / rejected, the queries rules
tagged, who and when, and a link to its report in the settings. A deployment without the
extension shows no such section. The settings are driven over real HTTP on the same app."""

from __future__ import annotations

import html
import re

import pytest

from tests.support.dashboard import AuthActions
from tests.support.imports import Administrator
from tests.support.servers import LiveServer

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(app, shop):
    shop.with_administrator(EMAIL, PASSWORD)
    server = LiveServer(app).start()
    yield Administrator(server.url, EMAIL, PASSWORD)
    server.stop()


def imports_rows(page: str) -> list[str]:
    """The Imports table's rows, as text."""
    section = re.search(r'<section[^>]*id="imports".*?</section>', page, re.S)
    assert section, "no Imports section"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", section.group(0), re.S)[1:]
    return [html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))).strip()
            for row in rows]


def test_the_projects_imports_are_listed_with_their_counts_and_report(
        signed_in, shop, administrator):
    report = administrator.upload(
        shop.project_id, "query,language,country,tags\nneu eins,de,DE,brand\n"
        "neu zwei,de,DE,nope\n", name="Queries.csv")
    assert administrator.finished(report)["added"] == 1
    page = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    (row,) = imports_rows(page)
    for said in ("Queries.csv", "1 added", "0 already present", "1 rejected", EMAIL):
        assert said in row, row
    assert f'href="{report}"' in page  # its report in the settings, for administrators


def test_no_imports_yet_is_said(signed_in, shop, administrator):
    page = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert "No imports yet" in page and imports_rows(page) == []


def test_without_the_extension_there_is_no_imports_section(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    page = client.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert 'id="imports"' not in page
