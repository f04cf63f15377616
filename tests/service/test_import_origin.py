"""A tag that came from an import's tags column says so: its link keeps the file's name and the
import's time (`query_tags.imported_from`, `added_at`), shown in queries/list's `tagSources`
as `importedFrom` and `addedAt`; a merge keeps it on the link it makes. Over real HTTP on a live
service (settings import) and the command line, SQLite and (TAGDESK_TEST_POSTGRES=1)
PostgreSQL; migration 0036 forward and back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import inspect

from tests.service.migrating import engine_of_its_own, migrate, model_differences_after
from tests.support.api import Api
from tests.support.imports import Administrator

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"
# In key order, the second row is the second connection's on PostgreSQL.
FILE = ("query,language,country,tags\nschuhe,de,DE,brand;sale\nsocken,de,DE,brand\n"
        "stiefel,de,DE,\n")


@pytest.fixture
def service_config(service_config, tmp_path):
    # A row per range: on PostgreSQL a second connection adds every other range, so the
    # links it makes must carry the origin too.
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports"),
            "IMPORT_BATCH_ROWS": 1}


def sources(api: Api) -> dict[str, dict]:
    """query text → its tagSources."""
    page = api.post("/api/queries/list", {"limit": 100}).json()
    return {record["query"]: record.get("tagSources", {}) for record in page["results"]}


def assert_imported(source: dict, file_name: str) -> None:
    assert source["importedFrom"] == file_name and "ruleId" not in source, source
    added_at = datetime.fromisoformat(source["addedAt"])
    assert abs(datetime.now(UTC) - added_at) < timedelta(minutes=5)


def test_tags_from_a_settings_import_name_its_file(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    administrator = Administrator(live_service.url, EMAIL, PASSWORD)
    administrator.finished(administrator.upload(world.project_id, FILE, name="Queries.csv"))
    api = Api(live_service.url, world.key, world.project_id)
    found = sources(api)
    assert set(found["schuhe"]) == {str(world.tags["brand"]), str(world.tags["sale"])}
    for source in found["schuhe"].values():
        assert_imported(source, "Queries.csv")
    assert_imported(found["socken"][str(world.tags["brand"])], "Queries.csv")
    assert found["stiefel"] == {}
    # Merged into another tag, the link the merge makes keeps where it came from.
    merged = api.post("/api/tags/merge", {"id": world.tags["sale"],
                                          "intoId": world.tags["local"]})
    assert merged.status_code == 200, merged.text
    assert_imported(sources(api)["schuhe"][str(world.tags["local"])], "Queries.csv")
    undone = api.post("/api/tags/unmerge", {"operation": merged.json()["operation"]})
    assert undone.status_code == 200, undone.text
    assert_imported(sources(api)["schuhe"][str(world.tags["sale"])], "Queries.csv")


def test_tags_from_a_command_line_import_name_its_file(live_service, world, flask_cli, tmp_path):
    path = tmp_path / "Keywords 2026.csv"
    path.write_text(FILE, encoding="utf-8")
    done = flask_cli("import-queries", world.project_id, path)
    assert done.exit_code == 0, done.output
    found = sources(Api(live_service.url, world.key, world.project_id))
    assert_imported(found["schuhe"][str(world.tags["brand"])], "Keywords 2026.csv")


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_import_origin_columns_migrate_up_and_down(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_import_origin_") as engine:
        differences = model_differences_after(engine, "0035", "0036")
        assert [d for d in differences if "imported_from" in repr(d)
                or "linked_from" in repr(d)] == []
        assert "imported_from" in {c["name"] for c in inspect(engine).get_columns("query_tags")}
        assert "linked_from" in {c["name"] for c in
                                 inspect(engine).get_columns("tag_merge_links")}
        migrate(engine, "0035", down=True)
        assert "imported_from" not in {c["name"] for c in
                                       inspect(engine).get_columns("query_tags")}
        assert "linked_from" not in {c["name"] for c in
                                     inspect(engine).get_columns("tag_merge_links")}
