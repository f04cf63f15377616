"""What several migrations build alike: the columns that tie a row to its organization or
project, the integer key of a table, a table of an organization's records or of a project's
named items, the SQLite triggers and backfill of the text-gram counters, a SQLite trigger made
again from its own text, and the PostgreSQL functions that copy query texts as migration 0006
made them.

Released migrations use these, so what each one makes must never change: a migration that
wants something else gets a helper (or a parameter) of its own.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import sqlalchemy as sa
from alembic import op


def serial_id() -> sa.Column:
    """An integer primary key `id` the database numbers."""
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def org_id() -> sa.Column:
    """The row's organization: deleted with it."""
    return sa.Column("org_id", sa.String(36),
                     sa.ForeignKey("organizations.id", ondelete="CASCADE"), nullable=False)


def create_org_table(table: str, *columns, **options) -> None:
    """A table of an organization's records: an integer key, the organization (its rows
    deleted with it), then `columns` of its own."""
    op.create_table(table, serial_id(), org_id(), *columns, **options)


def project_id(**options) -> sa.Column:
    """The row's project: deleted with it. `options`: nullable=False, primary_key=True…"""
    return sa.Column("project_id", sa.String(36),
                     sa.ForeignKey("projects.id", ondelete="CASCADE"), **options)


def project_ref() -> sa.Column:
    """The row's project as every column that refers to one since 0022: `uuid` on PostgreSQL;
    deleted with it."""
    return sa.Column("project_id", sa.String(36).with_variant(sa.Uuid(as_uuid=False), "postgresql"),
                     sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False)


def create_named_items(table: str, *columns: sa.Column) -> None:
    """A table of a project's named items (0027's saved views, 0028's rules): ids never given
    twice (AUTOINCREMENT on SQLite), a name unique in its project as its folded form says,
    `columns` of its own, then when it was made and last changed."""
    op.create_table(
        table,
        serial_id(),
        project_ref(),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("name_folded", sa.String(100), nullable=False),
        *columns,
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        # Also the index of a project's items.
        sa.UniqueConstraint("project_id", "name_folded"),
        sqlite_autoincrement=True,
    )


def count_queries_function(create: str, indent: str) -> str:
    """PostgreSQL: migration 0002's statement-level function that keeps projects.query_count
    (0005 puts it back when it goes back to 0002's counters). `create`: "CREATE" or "CREATE OR
    REPLACE"; `indent`: what each line of the function starts with, as each migration has
    stored its source since its release."""
    return textwrap.indent(f"""
{create} FUNCTION tagdesk_count_queries() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE projects p SET query_count = p.query_count + n.c
        FROM (SELECT project_id, count(*) AS c FROM changed GROUP BY project_id) n
        WHERE p.id = n.project_id;
    ELSE
        UPDATE projects p SET query_count = p.query_count - n.c
        FROM (SELECT project_id, count(*) AS c FROM changed GROUP BY project_id) n
        WHERE p.id = n.project_id;
    END IF;
    RETURN NULL;
END $$ LANGUAGE plpgsql
""", indent)


def sqlite_text_gram_triggers(grams: Callable[[str], str]) -> dict[str, str]:
    """SQLite: the triggers (name: what follows CREATE TRIGGER name) that keep text_gram_counts
    as queries are added, deleted or moved; `grams(row)` selects the distinct strings (`gram`)
    counted for the text of `row` ("new" or "old")."""
    add = f"""
            INSERT INTO text_gram_counts (project_id, gram, query_count)
            SELECT new.project_id, gram, 1 FROM ({grams("new")})
            WHERE true
            ON CONFLICT (project_id, gram) DO UPDATE SET query_count = query_count + 1;"""
    remove = f"""
            UPDATE text_gram_counts SET query_count = query_count - 1
            WHERE project_id = old.project_id AND gram IN ({grams("old")});"""
    return {
        "queries_text_grams_insert": f"AFTER INSERT ON queries BEGIN {add} END",
        "queries_text_grams_delete": f"AFTER DELETE ON queries BEGIN {remove} END",
        "queries_text_grams_update": "AFTER UPDATE OF query, project_id ON queries "
                                     "WHEN old.query IS NOT new.query "
                                     "OR old.project_id IS NOT new.project_id "
                                     f"BEGIN {remove} {add} END",
    }


# Every query's distinct strings of 1 and 2 characters, folded by lower() (ASCII only), counted
# once: migration 0009's backfill (and 0013's when it goes back to 0009's folding).
SQLITE_LOWERED_BACKFILL = """
    INSERT INTO text_gram_counts (project_id, gram, query_count)
    SELECT project_id, gram, count(*) FROM (
        SELECT DISTINCT q.pk, q.project_id, substr(lower(q.query), p.n, l.l) AS gram
        FROM queries q
        JOIN text_positions p ON p.n <= length(q.query)
        JOIN (SELECT 1 AS l UNION ALL SELECT 2) l ON p.n + l.l - 1 <= length(q.query))
    GROUP BY project_id, gram"""

# PostgreSQL: migration 0006's functions that keep query_texts (0011 puts them back when it
# goes back to 0006). `create`: "CREATE", or "CREATE OR REPLACE" over a later version.
COPY_QUERY_TEXTS = """
    {create} FUNCTION tagdesk_copy_query_texts() RETURNS trigger AS $$
    BEGIN
        INSERT INTO query_texts (pk, project_id, folded)
        SELECT pk, project_id, lower(query) FROM changed;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""
MOVE_QUERY_TEXT = """
    {create} FUNCTION tagdesk_move_query_text() RETURNS trigger AS $$
    BEGIN
        UPDATE query_texts SET project_id = new.project_id, folded = lower(new.query)
        WHERE pk = new.pk;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""


def rewrite_sqlite_trigger(name: str, change: Callable[[str], str]) -> None:
    """Drop a SQLite trigger and make it again from its own text, as the database holds it,
    changed by `change` (which raises on a text it does not expect)."""
    sql = op.get_bind().execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :name"),
        {"name": name}).scalar_one()
    changed = change(sql)
    op.execute(f"DROP TRIGGER {name}")
    op.execute(changed)
