"""Organizations, keys, projects, tags, queries, and the substring index.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import create_org_table, org_id, project_id, serial_id

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "organizations",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("limit_per_second", sa.Integer),
        sa.Column("limit_per_minute", sa.Integer),
        sa.Column("limit_per_hour", sa.Integer),
    )
    op.create_table(
        "projects",
        sa.Column("id", sa.String(36), primary_key=True),
        org_id(),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_projects_org_id", "projects", ["org_id"])
    create_org_table(
        "api_keys",
        project_id(),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(40), nullable=False),
        sa.Column("last_four", sa.String(4), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("last_used_at", sa.DateTime),
        sa.Column("revoked_at", sa.DateTime),
    )
    op.create_table(
        "tags",
        serial_id(),
        project_id(nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("name_folded", sa.String(200), nullable=False),
        sa.Column("color", sa.String(7), nullable=False),
        sa.UniqueConstraint("project_id", "name_folded"),
    )
    op.create_table(
        "queries",
        sa.Column("pk", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(36), nullable=False, unique=True),
        project_id(nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("language", sa.String(35), nullable=False),
        sa.Column("country", sa.String(35), nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("project_id", "query", "language", "country", name="uq_queries_key"),
    )
    op.create_index("ix_queries_updated", "queries", ["project_id", "updated_at", "id"])
    op.create_index("ix_queries_language", "queries", ["project_id", "language", "country"])
    op.create_index("ix_queries_country", "queries", ["project_id", "country"])
    op.create_table(
        "query_tags",
        sa.Column(
            "query_pk",
            sa.Integer,
            sa.ForeignKey("queries.pk", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "tag_id", sa.Integer, sa.ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True
        ),
    )
    op.create_index("ix_query_tags_tag", "query_tags", ["tag_id", "query_pk"])

    if op.get_bind().dialect.name == "sqlite":
        # Trigram FTS5 gives case-insensitive substring search without a table scan. Query
        # texts never change after import, so only inserts and deletes need mirroring.
        op.execute(
            "CREATE VIRTUAL TABLE queries_fts USING fts5("
            "query, content='queries', content_rowid='pk', tokenize='trigram')"
        )
        op.execute(
            "CREATE TRIGGER queries_fts_insert AFTER INSERT ON queries BEGIN "
            "INSERT INTO queries_fts(rowid, query) VALUES (new.pk, new.query); END"
        )
        op.execute(
            "CREATE TRIGGER queries_fts_delete AFTER DELETE ON queries BEGIN "
            "INSERT INTO queries_fts(queries_fts, rowid, query) "
            "VALUES ('delete', old.pk, old.query); END"
        )
        op.execute(
            "CREATE TRIGGER queries_fts_update AFTER UPDATE OF query ON queries BEGIN "
            "INSERT INTO queries_fts(queries_fts, rowid, query) "
            "VALUES ('delete', old.pk, old.query); "
            "INSERT INTO queries_fts(rowid, query) VALUES (new.pk, new.query); END"
        )
    else:
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute(
            "CREATE INDEX ix_queries_query_trgm ON queries USING gin (query gin_trgm_ops)"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS queries_fts")
    op.drop_table("query_tags")
    op.drop_table("queries")
    op.drop_table("tags")
    op.drop_table("api_keys")
    op.drop_table("projects")
    op.drop_table("organizations")
