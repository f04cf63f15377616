"""PostgreSQL: substring search on a narrow copy of the query texts, kept by triggers.

The trigram index moves from `queries` to `query_texts` (row key, project, lower-cased text):

- Counting the matches of a substring must read every candidate row (trigrams do not prove a
  match). A row of `query_texts` is a third of a `queries` row, and its text is already
  lower-cased, so the check is a plain LIKE instead of ILIKE lower-casing every candidate.
- Setting tags rewrites `queries` rows (updated_at is indexed, so PostgreSQL cannot update them
  in place) and every index of `queries` gets a new entry; texts never change, so the trigram
  index no longer pays for tag edits.

Also drops `ix_queries_project_pk` on PostgreSQL: only SQLite's full-text counting uses it, and
on PostgreSQL it was one more index for every tag edit to update. SQLite is unchanged.
"""

from alembic import op

from service.store.migrations.helpers import COPY_QUERY_TEXTS, MOVE_QUERY_TEXT

revision = "0006"
down_revision = "0005"

COPY_TEXTS = COPY_QUERY_TEXTS.format(create="CREATE")
# A query's text or project changed (no code path does this today).
MOVE_TEXT = MOVE_QUERY_TEXT.format(create="CREATE")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    # Deleted with their query (and emptied with it by TRUNCATE … CASCADE).
    op.execute("CREATE TABLE query_texts ("
               "pk integer PRIMARY KEY REFERENCES queries (pk) ON DELETE CASCADE, "
               "project_id varchar(36) NOT NULL, folded text NOT NULL)")
    op.execute("INSERT INTO query_texts (pk, project_id, folded) "
               "SELECT pk, project_id, lower(query) FROM queries ORDER BY pk")
    op.execute("CREATE INDEX ix_query_texts_trgm ON query_texts USING gin (folded gin_trgm_ops)")
    op.execute("DROP INDEX ix_queries_query_trgm")
    op.execute("DROP INDEX ix_queries_project_pk")
    op.execute(COPY_TEXTS)
    op.execute("CREATE TRIGGER queries_copy_texts AFTER INSERT ON queries "
               "REFERENCING NEW TABLE AS changed FOR EACH STATEMENT "
               "EXECUTE FUNCTION tagdesk_copy_query_texts()")
    op.execute(MOVE_TEXT)
    op.execute("CREATE TRIGGER queries_move_text AFTER UPDATE OF query, project_id ON queries "
               "FOR EACH ROW WHEN ((old.query, old.project_id) IS DISTINCT FROM "
               "(new.query, new.project_id)) EXECUTE FUNCTION tagdesk_move_query_text()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    op.execute("DROP TRIGGER IF EXISTS queries_move_text ON queries")
    op.execute("DROP TRIGGER IF EXISTS queries_copy_texts ON queries")
    op.execute("DROP FUNCTION IF EXISTS tagdesk_move_query_text()")
    op.execute("DROP FUNCTION IF EXISTS tagdesk_copy_query_texts()")
    op.execute("DROP TABLE query_texts")
    op.execute("CREATE INDEX ix_queries_project_pk ON queries (project_id, pk)")
    op.execute("CREATE INDEX ix_queries_query_trgm ON queries USING gin (query gin_trgm_ops)")
