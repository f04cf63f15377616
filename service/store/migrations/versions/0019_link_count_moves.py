"""PostgreSQL: a tag's query counter follows a link moved to another tag from a row trigger
that fires only when `tag_id` changes.

The statement trigger of 0005 fired on every UPDATE of `query_tags`. Since 0018 every set-tags
call updates the links of the queries it touches (their copy of `updated_at`), and each time
that trigger gathered all those rows, took the project's row and found no counter to change.
A trigger with transition tables cannot name columns, so the rare move of a link (no code path
makes one) is counted row by row, as SQLite always did.
"""

from alembic import op

revision = "0019"
down_revision = "0018"

MOVED_FUNCTION = """
CREATE FUNCTION tagdesk_count_moved_link() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- The projects' rows first, in key order, as every writer of tag counters takes them.
    PERFORM 1 FROM projects WHERE id IN (
        SELECT project_id FROM tags WHERE id IN (old.tag_id, new.tag_id))
    ORDER BY id FOR NO KEY UPDATE;
    UPDATE tags SET query_count = query_count - 1 WHERE id = old.tag_id;
    UPDATE tags SET query_count = query_count + 1 WHERE id = new.tag_id;
    RETURN NULL;
END $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER query_tags_count_update ON query_tags")
    op.execute(MOVED_FUNCTION)
    op.execute("CREATE TRIGGER query_tags_count_moved AFTER UPDATE OF tag_id ON query_tags "
               "FOR EACH ROW WHEN (old.tag_id IS DISTINCT FROM new.tag_id) "
               "EXECUTE FUNCTION tagdesk_count_moved_link()")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER query_tags_count_moved ON query_tags")
    op.execute("DROP FUNCTION tagdesk_count_moved_link()")
    op.execute("CREATE TRIGGER query_tags_count_update AFTER UPDATE ON query_tags "
               "REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT "
               "EXECUTE FUNCTION tagdesk_count_tag_links()")
