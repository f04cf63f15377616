"""projects.texts_version: a number that changes whenever a project's queries change in any
way other than their tags.

A filter without tags (text, languages, countries) matches the same queries for as long as
this number stays the same: tags are the only thing the API changes on a query. The service
remembers the exact count of such a filter under the project's version (service/match_counts.py),
so that paging, re-sorting and editing tags within a substring search no longer recount it
(32,000 matches of a four-letter substring cost 20–40 ms to count on PostgreSQL at a million
queries; remembered, nothing).

Kept by triggers, so every writer bumps it in the transaction that changes the rows: a count
read with version v is a count of exactly the rows of version v. Inserts and deletes bump it
(once per statement on PostgreSQL, as the counters of 0005 do), and so do changes of a
query's text, language, country or project, and TRUNCATE. Setting tags writes `updated_at`
only and leaves it alone.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"

SQLITE_TRIGGERS = {
    "queries_texts_version_insert": """AFTER INSERT ON queries BEGIN
            UPDATE projects SET texts_version = texts_version + 1 WHERE id = new.project_id;
        END""",
    "queries_texts_version_delete": """AFTER DELETE ON queries BEGIN
            UPDATE projects SET texts_version = texts_version + 1 WHERE id = old.project_id;
        END""",
    # A change of any column a tag-free filter reads.
    "queries_texts_version_update": """AFTER UPDATE OF query, language, country, project_id
        ON queries WHEN old.query IS NOT new.query OR old.language IS NOT new.language
            OR old.country IS NOT new.country OR old.project_id IS NOT new.project_id BEGIN
            UPDATE projects SET texts_version = texts_version + 1
            WHERE id IN (old.project_id, new.project_id);
        END""",
}

POSTGRES_FUNCTIONS = {
    # Statement level: the rows a statement inserted or deleted, as `changed`.
    "tagdesk_bump_texts_version": """RETURNS trigger AS $$
        BEGIN
            UPDATE projects SET texts_version = texts_version + 1
            WHERE id IN (SELECT project_id FROM changed);
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
    # Row level: no code path changes these columns; kept right for any that would.
    "tagdesk_bump_texts_version_moved": """RETURNS trigger AS $$
        BEGIN
            UPDATE projects SET texts_version = texts_version + 1
            WHERE id IN (old.project_id, new.project_id);
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
    # TRUNCATE fires no delete triggers.
    "tagdesk_bump_all_texts_versions": """RETURNS trigger AS $$
        BEGIN
            UPDATE projects SET texts_version = texts_version + 1;
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
}

POSTGRES_TRIGGERS = {
    "queries_texts_version_insert": "AFTER INSERT ON queries REFERENCING NEW TABLE AS changed "
                                    "FOR EACH STATEMENT EXECUTE FUNCTION "
                                    "tagdesk_bump_texts_version()",
    "queries_texts_version_delete": "AFTER DELETE ON queries REFERENCING OLD TABLE AS changed "
                                    "FOR EACH STATEMENT EXECUTE FUNCTION "
                                    "tagdesk_bump_texts_version()",
    "queries_texts_version_update": "AFTER UPDATE OF query, language, country, project_id "
                                    "ON queries FOR EACH ROW WHEN ("
                                    "(old.query, old.language, old.country, old.project_id) "
                                    "IS DISTINCT FROM "
                                    "(new.query, new.language, new.country, new.project_id)) "
                                    "EXECUTE FUNCTION tagdesk_bump_texts_version_moved()",
    "queries_texts_version_truncate": "AFTER TRUNCATE ON queries FOR EACH STATEMENT "
                                      "EXECUTE FUNCTION tagdesk_bump_all_texts_versions()",
}


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("texts_version", sa.Integer, nullable=False,
                                   server_default="0"))
    if op.get_bind().dialect.name == "sqlite":
        for name, body in SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {body}")
        return
    for name, body in POSTGRES_FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() {body}")
    for name, definition in POSTGRES_TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {definition}")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name != "sqlite"
    for name in SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON queries" if postgres else ""))
    if postgres:
        op.execute("DROP TRIGGER IF EXISTS queries_texts_version_truncate ON queries")
        for name in POSTGRES_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("texts_version")
