"""On PostgreSQL the update-time index is in the default order and holds each query's key
(migration 0044): a filtered page walks it as it stands and keeps the keys its filter holds,
reading no table page for rows already marked all-visible and sorting no ties. On SQLite every
index holds the row's key, and this one is in that order since migration 0007."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from service import schema
from tests.service.migrating import engine_of_its_own, migrate, model_differences_after

POSTGRES_ONLY = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
# The walk of a page in the default order (engine/listing.py: updatedAt DESC, then id).
NEWEST_FIRST = ("EXPLAIN SELECT pk FROM queries WHERE project_id = %(project)s "
                "ORDER BY updated_at DESC, id ASC")


@POSTGRES_ONLY
def test_a_walk_newest_first_reads_the_keys_from_the_index_alone(service_app, world):
    world.add_queries([(f"query {n}", "en", "US", []) for n in range(300)])
    engine = service_app.extensions["tagdesk_engine"]
    schema.analyze(engine)  # VACUUM ANALYZE, as after a large import: the pages all-visible
    with engine.connect() as connection:
        # A table this small is read whole otherwise, or by another index then sorted (CI:
        # other tests' rows in the same database, their pages not all-visible); a project
        # of millions is not. Without a sort, the walk must come in the index's order.
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            connection.exec_driver_sql(f"SET {setting} = off")
        plan = "\n".join(connection.exec_driver_sql(
            NEWEST_FIRST, {"project": world.project_id}).scalars())
    # In the index's own order: no sort of the rows that share a time (an import's).
    assert "Index Only Scan using ix_queries_updated" in plan and "Sort" not in plan, plan


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0044_puts_the_key_in_the_update_time_index_and_takes_it_out(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_updated_index_") as engine:
        differences = model_differences_after(engine, "0043", "0044")
        assert [d for d in differences if "ix_queries_updated" in repr(d)] == []
        postgres = kind == "postgres"
        assert update_time_index(engine) == (["project_id", "updated_at", "id"],
                                             "updated_at DESC, id) INCLUDE (pk)" if postgres
                                             else "")
        migrate(engine, "0043", down=True)
        assert update_time_index(engine) == (["project_id", "updated_at", "id"],
                                             "updated_at, id)" if postgres else "")
        migrate(engine, "head")


def update_time_index(engine) -> tuple[list[str], str]:
    """The index's columns, and on PostgreSQL the end of its definition ("" elsewhere)."""
    found = next(index for index in inspect(engine).get_indexes("queries")
                 if index["name"] == "ix_queries_updated")
    include = ""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            definition = connection.execute(text(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_queries_updated'")).scalar()
        include = definition.split("(project_id, ", 1)[1]
    return found["column_names"], include
