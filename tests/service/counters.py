"""The counters the database's triggers keep (a project's, a language and country's, a tag's
queries), checked against a count over the rows; each link's copy of its query's time; on
PostgreSQL, the copy of the query texts its substring search reads too."""

from __future__ import annotations

from sqlalchemy import text


def recounted(session):
    """The counters as a plain count over the rows would give them (zero counters dropped)."""
    def rows(sql):
        return {tuple(row[:-1]): row[-1] for row in session.execute(text(sql)) if row[-1]}
    return (
        rows("SELECT id, query_count FROM projects"),
        rows("SELECT project_id, language, country, query_count FROM language_country_counts"),
        rows("SELECT id, query_count FROM tags"),
    ), (
        rows("SELECT project_id, count(*) FROM queries GROUP BY project_id"),
        rows("SELECT project_id, language, country, count(*) FROM queries "
             "GROUP BY project_id, language, country"),
        rows("SELECT tag_id, count(*) FROM query_tags GROUP BY tag_id"),
    )


def assert_counters_exact(world):
    kept, counted = world.run(recounted)
    assert kept == counted, (kept, counted)
    # Each link carries its query's updated_at (migration 0018).
    stale = world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM query_tags JOIN queries ON queries.pk = query_tags.query_pk "
        "WHERE query_tags.updated_at <> queries.updated_at")).scalar_one())
    assert stale == 0
    if world.app.extensions["tagdesk_engine"].dialect.name == "postgresql":
        # The copy that PostgreSQL's substring search reads (migrations 0006 and 0011).
        copied, actual = world.run(lambda s: (
            set(s.execute(text(
                "SELECT pk, projects.id, language, country, folded FROM query_texts "
                "JOIN projects ON projects.number = query_texts.project_number"))),
            set(s.execute(text(
                "SELECT pk, project_id, language, country, lower(query) FROM queries")))))
        assert copied == actual, copied ^ actual
