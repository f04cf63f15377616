"""SQLite: the insert triggers of `queries` and `query_tags` stand aside during a bulk load.

Every query inserted fired five triggers on SQLite (the FTS5 trigram index, the project's
query counter and texts version, the counter of its language and country, its short strings
in `text_gram_counts`) and every tag link one more: about 100 µs a row, most of an import's
time. A bulk load (service/bulk_load.py) does their work itself, once per chunk of rows, with
set-based statements.

While the loading transaction holds a row in `bulk_load`, each of those triggers is skipped
(`WHEN NOT EXISTS (SELECT 1 FROM bulk_load)`). The row is inserted and deleted inside that
transaction, so no other connection ever sees it, and no other connection writes meanwhile:
SQLite lets one writer at a time. (A trigger of the main database may not read a temporary
table, which would have been the connection's own.) The table is empty at every other moment;
the check costs an ordinary insert a look at an empty table.

Only the triggers listed are guarded, by name, each rewritten from its own text in
`sqlite_master`: whatever a migration before this one made them (0013 refolded the short
strings) stays as it was, with the condition added. A trigger a later migration adds fires
during bulk loads too, until the bulk load learns its work.

PostgreSQL is unchanged: its triggers fire once per statement, and a bulk load inserts a chunk
with one statement. Its short-term counters are left to the loader with
`tagdesk.defer_text_grams` (0009).
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import rewrite_sqlite_trigger

revision = "0017"
down_revision = "0016"

# The insert triggers whose work service/bulk_load.py does itself.
GUARDED = {
    "queries_fts_insert": "queries",
    "queries_count_insert": "queries",
    "language_country_count_insert": "queries",
    "queries_texts_version_insert": "queries",
    "queries_text_grams_insert": "queries",
    "tag_count_insert": "query_tags",
}
EVENT = "AFTER INSERT ON {table} "
GUARD = "WHEN NOT EXISTS (SELECT 1 FROM bulk_load) "


def _rewrite(change) -> None:
    """Each guarded trigger dropped and made again from its own text, changed by `change`."""
    for name, table in GUARDED.items():
        rewrite_sqlite_trigger(name, lambda sql, table=table: change(
            sql, EVENT.format(table=table)))


def _guarded(sql: str, event: str) -> str:
    if sql.count(event) != 1 or " WHEN " in sql.split(" BEGIN", 1)[0]:
        raise RuntimeError(f"Unexpected trigger: {sql}")
    return sql.replace(event, event + GUARD)


def _unguarded(sql: str, event: str) -> str:
    if sql.count(event + GUARD) != 1:
        raise RuntimeError(f"Unexpected trigger: {sql}")
    return sql.replace(event + GUARD, event)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    # A row only while a bulk load's transaction runs (never committed).
    op.create_table("bulk_load", sa.Column("id", sa.Integer, primary_key=True))
    _rewrite(_guarded)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _rewrite(_unguarded)
    op.drop_table("bulk_load")
