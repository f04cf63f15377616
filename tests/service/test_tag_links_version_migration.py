"""Migration 0021: each tag's `links_version` moves with its links from the moment the column
exists, the tag counters stay exact on the way there and back, and the way back leaves the
triggers as 0020 had them."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from tests.service.migrating import P1, engine_of_its_own, migrate, migrated_with_rows

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR")]
TAG = "SELECT query_count{version} FROM tags WHERE id = 1"


def link(connection, query_pk: int) -> None:
    connection.execute(text("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
                            "VALUES (:pk, 1, '2026-01-01')"), {"pk": query_pk})


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_links_move_their_tags_version_and_the_way_back_keeps_the_counts(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_links_version_") as engine:
        migrated_with_rows(engine, "0020", ROWS)
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO tags (project_id, name, name_folded, color) "
                                    f"VALUES ('{P1}', 'brand', 'brand', '#123456')"))
            link(connection, 1)
        migrate(engine, "0021")
        version = TAG.format(version=", links_version")
        with engine.begin() as connection:
            assert connection.execute(text(version)).one() == (1, 0)
            link(connection, 2)
            assert connection.execute(text(version)).one() == (2, 1)
            connection.execute(text("DELETE FROM query_tags WHERE query_pk = 1"))
            assert connection.execute(text(version)).one() == (1, 2)
            connection.execute(text("UPDATE query_tags SET query_pk = 3"))
            count, moved = connection.execute(text(version)).one()
            assert count == 1 and moved > 2
        migrate(engine, "0020", down=True)
        columns = {c["name"] for c in inspect(engine).get_columns("tags")}
        assert "links_version" not in columns
        with engine.begin() as connection:  # the triggers count as before
            link(connection, 1)
            assert connection.execute(text(TAG.format(version=""))).scalar_one() == 2
            connection.execute(text("DELETE FROM query_tags WHERE query_pk = 3"))
            assert connection.execute(text(TAG.format(version=""))).scalar_one() == 1
        migrate(engine, "0021")
        with engine.begin() as connection:
            link(connection, 2)
            assert connection.execute(text(version)).one() == (2, 1)
