"""Counters for the common filters, kept by triggers, so their totalRecords is never a count
over hundreds of thousands of rows.

- language_country_counts: how many queries a project has per (language, country); the total
  of a language and/or country filter is a sum over a few dozen rows.
- tags.query_count: how many queries carry the tag; the total of a one-tag filter.

Triggers keep both exact under concurrent writers. On PostgreSQL every writer of a project's
counters holds the project's row first (the query counter's UPDATE, or a row lock taken by the
link trigger), so two writers never hold counter rows the other waits for.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import count_queries_function, project_id

revision = "0005"
down_revision = "0004"

SQLITE_TRIGGERS = {
    "language_country_count_insert": """
        AFTER INSERT ON queries BEGIN
            INSERT INTO language_country_counts (project_id, language, country, query_count)
            VALUES (new.project_id, new.language, new.country, 1)
            ON CONFLICT (project_id, language, country)
            DO UPDATE SET query_count = query_count + 1;
        END""",
    "language_country_count_delete": """
        AFTER DELETE ON queries BEGIN
            UPDATE language_country_counts SET query_count = query_count - 1
            WHERE project_id = old.project_id AND language = old.language
              AND country = old.country;
        END""",
    "language_country_count_update": """
        AFTER UPDATE OF project_id, language, country ON queries
        WHEN old.project_id IS NOT new.project_id OR old.language IS NOT new.language
          OR old.country IS NOT new.country
        BEGIN
            UPDATE language_country_counts SET query_count = query_count - 1
            WHERE project_id = old.project_id AND language = old.language
              AND country = old.country;
            INSERT INTO language_country_counts (project_id, language, country, query_count)
            VALUES (new.project_id, new.language, new.country, 1)
            ON CONFLICT (project_id, language, country)
            DO UPDATE SET query_count = query_count + 1;
            UPDATE projects SET query_count = query_count - 1
            WHERE id = old.project_id AND old.project_id IS NOT new.project_id;
            UPDATE projects SET query_count = query_count + 1
            WHERE id = new.project_id AND old.project_id IS NOT new.project_id;
        END""",
    "tag_count_insert": """
        AFTER INSERT ON query_tags BEGIN
            UPDATE tags SET query_count = query_count + 1 WHERE id = new.tag_id;
        END""",
    "tag_count_delete": """
        AFTER DELETE ON query_tags BEGIN
            UPDATE tags SET query_count = query_count - 1 WHERE id = old.tag_id;
        END""",
    "tag_count_update": """
        AFTER UPDATE OF tag_id ON query_tags WHEN old.tag_id IS NOT new.tag_id BEGIN
            UPDATE tags SET query_count = query_count - 1 WHERE id = old.tag_id;
            UPDATE tags SET query_count = query_count + 1 WHERE id = new.tag_id;
        END""",
}

# Statement-level: one counter update per statement (an import batch, a set-tags call), not
# one per row, which would also leave a dead counter row version behind for every row.
POSTGRES_QUERY_COUNTS = """
    CREATE OR REPLACE FUNCTION tagdesk_count_queries() RETURNS trigger AS $$
    BEGIN
        -- The project's row first: it orders every writer of this project's counters.
        IF TG_OP = 'INSERT' THEN
            UPDATE projects p SET query_count = p.query_count + n.c
            FROM (SELECT project_id, count(*) AS c FROM changed GROUP BY project_id) n
            WHERE p.id = n.project_id;
            INSERT INTO language_country_counts AS t
                (project_id, language, country, query_count)
            SELECT project_id, language, country, count(*) FROM changed
            GROUP BY project_id, language, country ORDER BY project_id, language, country
            ON CONFLICT (project_id, language, country)
            DO UPDATE SET query_count = t.query_count + excluded.query_count;
        ELSE
            UPDATE projects p SET query_count = p.query_count - n.c
            FROM (SELECT project_id, count(*) AS c FROM changed GROUP BY project_id) n
            WHERE p.id = n.project_id;
            -- Only UPDATE: when a project is deleted its counter rows may already be gone.
            UPDATE language_country_counts t SET query_count = t.query_count - n.c
            FROM (SELECT project_id, language, country, count(*) AS c FROM changed
                  GROUP BY project_id, language, country) n
            WHERE (t.project_id, t.language, t.country)
                = (n.project_id, n.language, n.country);
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""
POSTGRES_QUERY_COUNTS_BEFORE = count_queries_function("CREATE OR REPLACE", " " * 4)
# A query moved to another language, country or project (no code path does this today).
POSTGRES_QUERY_MOVED = """
    CREATE FUNCTION tagdesk_count_moved_query() RETURNS trigger AS $$
    BEGIN
        UPDATE projects SET query_count = query_count + CASE id
            WHEN old.project_id THEN -1 ELSE 1 END
        WHERE id IN (old.project_id, new.project_id) AND old.project_id <> new.project_id;
        UPDATE language_country_counts SET query_count = query_count - 1
        WHERE (project_id, language, country) = (old.project_id, old.language, old.country);
        INSERT INTO language_country_counts AS t (project_id, language, country, query_count)
        VALUES (new.project_id, new.language, new.country, 1)
        ON CONFLICT (project_id, language, country)
        DO UPDATE SET query_count = t.query_count + 1;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""
POSTGRES_TAG_COUNTS = """
    CREATE FUNCTION tagdesk_count_tag_links() RETURNS trigger AS $$
    DECLARE
        added_ids integer[] := '{}';
        removed_ids integer[] := '{}';
    BEGIN
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            SELECT coalesce(array_agg(tag_id), '{}') INTO added_ids FROM added;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            SELECT coalesce(array_agg(tag_id), '{}') INTO removed_ids FROM removed;
        END IF;
        -- Hold the projects' rows before any tag row, as the query counter does: a set-tags
        -- call removes links of some tags and adds links of others in two statements, and
        -- two such calls would otherwise take the same tag rows in opposite orders.
        PERFORM 1 FROM projects WHERE id IN (
            SELECT project_id FROM tags WHERE id = ANY (added_ids || removed_ids))
        ORDER BY id FOR NO KEY UPDATE;
        UPDATE tags t SET query_count = t.query_count + n.c
        FROM (SELECT tag_id, sum(step) AS c FROM (
                  SELECT unnest(added_ids) AS tag_id, 1 AS step
                  UNION ALL SELECT unnest(removed_ids), -1) steps
              GROUP BY tag_id) n
        WHERE t.id = n.tag_id AND n.c <> 0;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""
POSTGRES_TAG_TRIGGERS = {
    "query_tags_count_insert": "AFTER INSERT ON query_tags REFERENCING NEW TABLE AS added",
    "query_tags_count_delete": "AFTER DELETE ON query_tags REFERENCING OLD TABLE AS removed",
    "query_tags_count_update": "AFTER UPDATE ON query_tags "
                               "REFERENCING OLD TABLE AS removed NEW TABLE AS added",
}


def upgrade() -> None:
    op.create_table(
        "language_country_counts",
        project_id(primary_key=True),
        sa.Column("language", sa.String(35), primary_key=True),
        sa.Column("country", sa.String(35), primary_key=True),
        sa.Column("query_count", sa.Integer, nullable=False),
    )
    with op.batch_alter_table("tags") as batch:
        batch.add_column(sa.Column("query_count", sa.Integer, nullable=False,
                                   server_default="0"))
    op.execute("INSERT INTO language_country_counts "
               "(project_id, language, country, query_count) "
               "SELECT project_id, language, country, count(*) FROM queries "
               "GROUP BY project_id, language, country")
    op.execute("UPDATE tags SET query_count = "
               "(SELECT count(*) FROM query_tags WHERE query_tags.tag_id = tags.id)")

    if op.get_bind().dialect.name == "sqlite":
        for name, body in SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {body}")
        return
    op.execute(POSTGRES_QUERY_COUNTS)
    op.execute(POSTGRES_QUERY_MOVED)
    op.execute("CREATE TRIGGER queries_count_moved AFTER UPDATE OF project_id, language, "
               "country ON queries FOR EACH ROW WHEN ((old.project_id, old.language, "
               "old.country) IS DISTINCT FROM (new.project_id, new.language, new.country)) "
               "EXECUTE FUNCTION tagdesk_count_moved_query()")
    op.execute(POSTGRES_TAG_COUNTS)
    for name, event in POSTGRES_TAG_TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {event} FOR EACH STATEMENT "
                   "EXECUTE FUNCTION tagdesk_count_tag_links()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        for name in POSTGRES_TAG_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON query_tags")
        op.execute("DROP TRIGGER IF EXISTS queries_count_moved ON queries")
        op.execute("DROP FUNCTION IF EXISTS tagdesk_count_tag_links()")
        op.execute("DROP FUNCTION IF EXISTS tagdesk_count_moved_query()")
        op.execute(POSTGRES_QUERY_COUNTS_BEFORE)
    with op.batch_alter_table("tags") as batch:
        batch.drop_column("query_count")
    op.drop_table("language_country_counts")
