"""Migrations 0018 and 0019: each tag link gets its query's `updated_at`, for the links already
there, and keeps following it when the query's time changes; and both can be undone."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from tests.service.migrating import P1, engine_of_its_own, migrate, migrated_with_rows

ROWS = [("Laufschuhe Damen", "de", "DE"), ("running shoes", "en", "US"),
        ("Chaussures", "fr", "FR")]
STALE_LINKS = ("SELECT count(*) FROM query_tags JOIN queries ON queries.pk = query_tags.query_pk "
               "WHERE query_tags.updated_at <> queries.updated_at")


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_links_take_their_querys_time_and_follow_it(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_link_times_") as engine:
        migrated_with_rows(engine, "0017", ROWS)
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO tags (project_id, name, name_folded, color) "
                f"VALUES ('{P1}', 'brand', 'brand', '#123456')"))
            for pk in (1, 2, 3):
                connection.execute(text("UPDATE queries SET updated_at = :at WHERE pk = :pk"),
                                   {"at": f"2026-03-0{pk} 00:00:00", "pk": pk})
            connection.execute(text(
                "INSERT INTO query_tags (query_pk, tag_id) SELECT pk, 1 FROM queries"))
        migrate(engine, "0019")
        with engine.begin() as connection:
            times = connection.execute(text(
                "SELECT query_tags.updated_at FROM query_tags ORDER BY query_pk")).scalars()
            assert [str(t)[:10] for t in times] == [f"2026-03-0{pk}" for pk in (1, 2, 3)]
            connection.execute(text(
                "UPDATE queries SET updated_at = '2026-04-01 10:00:00' WHERE pk IN (1, 3)"))
            connection.execute(text("UPDATE queries SET query = 'shoes' WHERE pk = 2"))
            assert connection.execute(text(STALE_LINKS)).scalar_one() == 0
        with pytest.raises(IntegrityError), engine.begin() as connection:
            # A link without its time is refused (SQLite: its column has a default).
            connection.execute(text("INSERT INTO tags (project_id, name, name_folded, color) "
                                    f"VALUES ('{P1}', 'sale', 'sale', '#123456')"))
            connection.execute(text("INSERT INTO query_tags (query_pk, tag_id) VALUES (1, 2)"))
        indexes = {i["name"] for i in inspect(engine).get_indexes("query_tags")}
        assert "ix_query_tags_tag_time" in indexes and "ix_query_tags_tag" not in indexes
        migrate(engine, "0017", down=True)
        columns = {c["name"] for c in inspect(engine).get_columns("query_tags")}
        indexes = {i["name"] for i in inspect(engine).get_indexes("query_tags")}
        assert columns == {"query_pk", "tag_id"} and indexes == {"ix_query_tags_tag"}
        with engine.begin() as connection:  # the trigger went with the column
            connection.execute(text("UPDATE queries SET updated_at = '2026-05-01'"))
