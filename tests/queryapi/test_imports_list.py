"""The client's list of a project's imports (POST /api/imports/list, an extension) against the
live service over HTTP, an import made in its settings; and the same service behind a proxy
that hides every extension, where the capability is absent."""

from __future__ import annotations

import pytest

from queryapi import Client, ImportRecord, InvalidRequest
from tests.support.imports import Administrator

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


def test_a_projects_imports_are_read_into_records(client, live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    administrator = Administrator(live_service.url, EMAIL, PASSWORD)
    report = administrator.upload(
        world.project_id, "query,language,country,tags\nschuhe,de,DE,brand\nx,de,DE,nope\n",
        name="Queries.csv")
    administrator.finished(report)
    assert client.capabilities().imports
    (listed,) = client.list_imports(world.project_id)
    assert isinstance(listed, ImportRecord)
    assert (listed.id, listed.file_name, listed.state, listed.added, listed.present,
            listed.rejected, listed.tagged_by_rules, listed.by) == (
        report.rsplit("/", 1)[-1], "Queries.csv", "finished", 1, 0, 1, 0, EMAIL)
    assert listed.finished_at >= listed.created_at
    assert client.list_imports(world.other_project_id) == ()
    sent = client.stats.requests
    with pytest.raises(InvalidRequest, match="from 1 to 100"):
        client.list_imports(world.project_id, limit=0)
    assert client.stats.requests == sent  # refused before it was sent


def test_a_deployment_without_the_extension_offers_no_imports(without_extensions, world):
    with Client(without_extensions.url, world.key) as client:
        assert not client.capabilities().imports
