"""On PostgreSQL the bitmaps' pieces are stored as they are, never compressed again
(migration 0045): they are roaring bitmaps, compressed already, and an import writes them
again at every range of rows."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from service.engine.kinds import TAG
from tests.service.migrating import engine_of_its_own, migrate, model_differences_after


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0045_stores_the_pieces_uncompressed_and_back(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_pieces_storage_") as engine:
        assert [d for d in model_differences_after(engine, "0044", "0045")
                if "engine_pieces" in repr(d)] == []
        assert storage_of_the_keys(engine) == ("e" if kind == "postgres" else None)
        migrate(engine, "0044", down=True)
        assert storage_of_the_keys(engine) == ("x" if kind == "postgres" else None)
        migrate(engine, "head")
        assert storage_of_the_keys(engine) == ("e" if kind == "postgres" else None)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_large_piece_is_written_uncompressed(service_app, world):
    """A piece past the size PostgreSQL compresses at (2 KB): a tag on every other query of
    20,000, whose bitmap has no runs to shrink it."""
    tag = world.tags["brand"]
    world.add_queries([(f"query {n}", "en", "US", ["brand"] if n % 2 else [])
                       for n in range(20_000)])
    with service_app.extensions["tagdesk_engine"].connect() as connection:
        written, stored = connection.execute(text(
            "SELECT octet_length(keys), pg_column_size(keys) FROM engine_pieces "
            "WHERE kind = :kind AND value = :tag"), {"kind": TAG, "tag": str(tag)}).one()
    assert written > 2048 and stored >= written


def storage_of_the_keys(engine) -> str | None:
    """pg_attribute.attstorage of engine_pieces.keys (None on SQLite)."""
    if engine.dialect.name != "postgresql":
        return None
    with engine.connect() as connection:
        return connection.execute(text(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'engine_pieces'::regclass "
            "AND attname = 'keys'")).scalar_one()
