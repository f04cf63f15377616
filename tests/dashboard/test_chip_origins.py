"""A chip says where its tag came from: "Added by the import of Queries.csv on …" for a tag an
import's tags column named, as it says a rule or a person; and a chip not added by a person (a
rule, an import) carries a visible mark, its origin in words after it for screen readers. The
import is made in the settings over real HTTP, on the same app."""

from __future__ import annotations

import re

import pytest

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


def test_a_tag_from_an_import_says_its_file_and_is_marked(signed_in, shop, administrator):
    report = administrator.upload(
        shop.project_id, "query,language,country,tags\nimportierte schuhe,de,DE,brand\n",
        name="Queries.csv")
    assert administrator.finished(report)["added"] == 1
    html = signed_in.get(f"/projects/{shop.project_id}/queries?q=importierte").get_data(
        as_text=True)
    chip = re.search(r'<span class="([^"]*)"[^>]*title="(Added by the import of Queries.csv on '
                     r'[^"]+ UTC)">brand</span><span class="visually-hidden"> \(\2\)</span>',
                     html)
    assert chip, html
    assert "chip--by-import" in chip.group(1).split()
