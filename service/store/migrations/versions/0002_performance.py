"""Indexes and a query counter for large projects.

- projects.query_count, kept by triggers, answers the unfiltered totalRecords without
  counting a million rows on every page.
- Every sort order has an index that ends in `id` (the tie-breaker), so a page of a sorted
  view is read in order instead of sorting the whole project.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import count_queries_function

revision = "0002"
down_revision = "0001"

INDEXES = {
    "ix_queries_project_id": ["project_id", "id"],
    "ix_queries_language_id": ["project_id", "language", "id"],
    "ix_queries_country_id": ["project_id", "country", "id"],
    "ix_queries_language_country_updated": [
        "project_id", "language", "country", "updated_at", "id"],
}


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(sa.Column("query_count", sa.Integer, nullable=False,
                                   server_default="0"))
    op.execute("UPDATE projects SET query_count = "
               "(SELECT count(*) FROM queries WHERE queries.project_id = projects.id)")
    op.drop_index("ix_queries_language", "queries")
    op.drop_index("ix_queries_country", "queries")
    for name, columns in INDEXES.items():
        op.create_index(name, "queries", columns)

    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER queries_count_insert AFTER INSERT ON queries BEGIN "
            "UPDATE projects SET query_count = query_count + 1 WHERE id = new.project_id; END")
        op.execute(
            "CREATE TRIGGER queries_count_delete AFTER DELETE ON queries BEGIN "
            "UPDATE projects SET query_count = query_count - 1 WHERE id = old.project_id; END")
    else:
        # Statement-level triggers: one UPDATE per import batch, not one per row (a row
        # trigger would leave a dead version of the project row behind for every query).
        op.execute(count_queries_function("CREATE", " " * 12))
        op.execute("CREATE TRIGGER queries_count_insert AFTER INSERT ON queries "
                   "REFERENCING NEW TABLE AS changed FOR EACH STATEMENT "
                   "EXECUTE FUNCTION tagdesk_count_queries()")
        op.execute("CREATE TRIGGER queries_count_delete AFTER DELETE ON queries "
                   "REFERENCING OLD TABLE AS changed FOR EACH STATEMENT "
                   "EXECUTE FUNCTION tagdesk_count_queries()")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS queries_count_insert" +
               ("" if op.get_bind().dialect.name == "sqlite" else " ON queries"))
    op.execute("DROP TRIGGER IF EXISTS queries_count_delete" +
               ("" if op.get_bind().dialect.name == "sqlite" else " ON queries"))
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION IF EXISTS tagdesk_count_queries()")
    for name in INDEXES:
        op.drop_index(name, "queries")
    op.create_index("ix_queries_language", "queries", ["project_id", "language", "country"])
    op.create_index("ix_queries_country", "queries", ["project_id", "country"])
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("query_count")
