"""tags.links_version: a number that changes whenever a link of the tag is added or removed.

A filter with tags (and text, codes or another tag) matches the same queries until the
project's queries change (`projects.texts_version`, 0008) or a link of one of its tags does.
Its count is remembered under both (service/match_counts.py), so paging, sorting and selecting
through a tagged view count once, not on every request: at ten million queries such a count
takes 400 ms. Each version only grows, so the sum of a filter's tags' versions changes whenever
any of them does.

The version moves in the very statements that keep `tags.query_count` (0005, 0019): no new
row is written, no new lock taken. PostgreSQL: its statement trigger now also touches a tag
whose links were both added and removed in one statement (its count unchanged), and a link
moved to another query moves the versions of its tag; TRUNCATE of `query_tags` (which fires
no delete trigger) empties the counters and moves every version. SQLite: its row triggers
are rewritten from their own text (the bulk load's guard of 0017 stays), and a link moved to
another query gets a trigger of its own; service/bulk_load.py moves the versions of what it
adds itself.
"""

import importlib

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import rewrite_sqlite_trigger

revision = "0021"
down_revision = "0020"

# SQLite: each trigger that keeps a tag's count, with the count's change as 0005 wrote it.
SQLITE_COUNTED = {
    "tag_count_insert": ["query_count = query_count + 1"],
    "tag_count_delete": ["query_count = query_count - 1"],
    "tag_count_update": ["query_count = query_count - 1", "query_count = query_count + 1"],
}
VERSION_STEP = ", links_version = links_version + 1"
SQLITE_MOVED_TO_QUERY = """CREATE TRIGGER tag_links_moved_to_query
    AFTER UPDATE OF query_pk ON query_tags WHEN old.query_pk IS NOT new.query_pk BEGIN
        UPDATE tags SET links_version = links_version + 1 WHERE id IN (old.tag_id, new.tag_id);
    END"""

# 0005's function, as it replaces the one in place: for the way back.
POSTGRES_COUNT_LINKS_BEFORE = importlib.import_module(
    "service.store.migrations.versions.0005_exact_counts").POSTGRES_TAG_COUNTS.replace(
    "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)
# The same, moving the version beside the count, and for every tag a statement touched.
POSTGRES_COUNT_LINKS = (
    POSTGRES_COUNT_LINKS_BEFORE
    .replace("query_count = t.query_count + n.c\n", "query_count = t.query_count + n.c,\n"
             "                          links_version = t.links_version + 1\n", 1)
    .replace("WHERE t.id = n.tag_id AND n.c <> 0;", "WHERE t.id = n.tag_id;", 1))

POSTGRES_MOVED_LINK = """
CREATE OR REPLACE FUNCTION tagdesk_count_moved_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The projects' rows first, in key order, as every writer of tag counters takes them.
    PERFORM 1 FROM projects WHERE id IN (
        SELECT project_id FROM tags WHERE id IN (old.tag_id, new.tag_id))
    ORDER BY id FOR NO KEY UPDATE;
    -- A link moved to another query changes the tag's matches, not its count.
    UPDATE tags SET query_count = query_count - (old.tag_id <> new.tag_id)::integer,
                    links_version = links_version + 1 WHERE id = old.tag_id;
    UPDATE tags SET query_count = query_count + (old.tag_id <> new.tag_id)::integer,
                    links_version = links_version + 1 WHERE id = new.tag_id;
    RETURN NULL;
END $$
"""
# 0019's text, for the way back.
POSTGRES_MOVED_LINK_BEFORE = (
    POSTGRES_MOVED_LINK
    .replace("    -- A link moved to another query changes the tag's matches, not its count.\n", "")
    .replace(" (old.tag_id <> new.tag_id)::integer,\n"
             "                    links_version = links_version + 1 WHERE", " 1 WHERE"))
POSTGRES_MOVED_TRIGGER = (
    "CREATE TRIGGER query_tags_count_moved AFTER UPDATE OF {columns} ON query_tags "
    "FOR EACH ROW WHEN ({condition}) EXECUTE FUNCTION tagdesk_count_moved_link()")
MOVED_NOW = {"columns": "query_pk, tag_id",
             "condition": "(old.query_pk, old.tag_id) IS DISTINCT FROM "
                          "(new.query_pk, new.tag_id)"}
MOVED_BEFORE = {"columns": "tag_id", "condition": "old.tag_id IS DISTINCT FROM new.tag_id"}
POSTGRES_TRUNCATED_LINKS = """
CREATE FUNCTION tagdesk_truncate_link_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tags SET query_count = 0, links_version = links_version + 1;
    RETURN NULL;
END $$
"""


def _rewrite_sqlite(change) -> None:
    def changed(sql: str, counted: list[str]) -> str:
        for step in dict.fromkeys(counted):
            sql = change(sql, step, counted.count(step))
        return sql

    for name, counted in SQLITE_COUNTED.items():
        rewrite_sqlite_trigger(name, lambda sql, counted=counted: changed(sql, counted))


def _with_version(sql: str, step: str, times: int) -> str:
    if sql.count(step) != times or sql.count(step + VERSION_STEP):
        raise RuntimeError(f"Unexpected trigger: {sql}")
    return sql.replace(step, step + VERSION_STEP)


def _without_version(sql: str, step: str, times: int) -> str:
    if sql.count(step + VERSION_STEP) != times:
        raise RuntimeError(f"Unexpected trigger: {sql}")
    return sql.replace(step + VERSION_STEP, step)


def upgrade() -> None:
    op.add_column("tags", sa.Column("links_version", sa.Integer, nullable=False,
                                    server_default="0"))
    if op.get_bind().dialect.name == "sqlite":
        _rewrite_sqlite(_with_version)
        op.execute(SQLITE_MOVED_TO_QUERY)
        return
    op.execute(POSTGRES_COUNT_LINKS)
    op.execute(POSTGRES_MOVED_LINK)
    op.execute("DROP TRIGGER query_tags_count_moved ON query_tags")
    op.execute(POSTGRES_MOVED_TRIGGER.format(**MOVED_NOW))
    op.execute(POSTGRES_TRUNCATED_LINKS)
    op.execute("CREATE TRIGGER query_tags_truncate_counts AFTER TRUNCATE ON query_tags "
               "FOR EACH STATEMENT EXECUTE FUNCTION tagdesk_truncate_link_counts()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER tag_links_moved_to_query")
        _rewrite_sqlite(_without_version)
    else:
        op.execute("DROP TRIGGER query_tags_truncate_counts ON query_tags")
        op.execute("DROP FUNCTION tagdesk_truncate_link_counts()")
        op.execute("DROP TRIGGER query_tags_count_moved ON query_tags")
        op.execute(POSTGRES_MOVED_TRIGGER.format(**MOVED_BEFORE))
        op.execute(POSTGRES_MOVED_LINK_BEFORE)
        op.execute(POSTGRES_COUNT_LINKS_BEFORE)
    # In place (SQLite too): a copy of the table could not be renamed under the triggers that
    # name it.
    op.drop_column("tags", "links_version")
