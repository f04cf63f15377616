"""Ids that never come back, and settings sessions kept by the server.

**SQLite: AUTOINCREMENT.** A SQLite integer primary key without AUTOINCREMENT takes the
largest id in the table plus one, so the id of the newest row is given again once that row is
deleted: a removed administrator's id went to the next person created, in any organization,
and whatever still named the old id (a signed-in browser's cookie) named the new person. With
AUTOINCREMENT, SQLite keeps the largest id ever given (`sqlite_sequence`) and never goes below
it. The tables whose ids name something — users, api_keys, tags, key_events, org_events,
password_links — are rebuilt with it, as SQLite's documentation says a table is changed in
ways ALTER TABLE cannot (https://www.sqlite.org/lang_altertable.html#otheralter):

- the table's own text is taken from `sqlite_master` and changed only where its key is
  declared (`id INTEGER NOT NULL` … `PRIMARY KEY (id)` becomes `id INTEGER NOT NULL PRIMARY
  KEY AUTOINCREMENT`), so every column, default and constraint stays as this database has it;
- its indexes and triggers are read from `sqlite_master` before the rebuild and made again
  from that text after it (a table's indexes and triggers go with it), and its planner
  statistics (`sqlite_stat1`) are kept;
- the old table is renamed out of the way (with `legacy_alter_table`, so that nothing that
  names the table — other tables' foreign keys, other tables' triggers — is rewritten to
  follow it), the new one is created under the table's name, every row is copied with its
  id, and the old one is dropped. Foreign keys must be off meanwhile (`PRAGMA foreign_keys`
  cannot change inside a transaction; service/schema.py's `upgrade` turns them off around
  the migrations): with them on, dropping the old table would first delete its rows, and
  cascade to what refers to them (every link of every tag). The rebuilt tables (and
  `imports`, which refers to `users`) are checked with `PRAGMA foreign_key_check` before the
  migration ends; each table's rows are counted before and after.

The sequence starts at the largest id each table holds: an id deleted before this migration
above the largest remaining one can be given once more (the sessions below no longer name a
person by id, so a browser that held such an id holds nothing). PostgreSQL's sequences never
give an id twice, and need nothing.

**settings_sessions.** The settings area's session is a row here, named by the SHA-256 of a
random secret that only the browser's (signed) cookie carries, with its expiry: signing out
deletes the row, removing a person deletes all of theirs (the foreign key cascades), and a new
password deletes every other one of theirs. A copied cookie stops working at once.
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"

# Parents before the tables that refer to them (the order does not matter to SQLite with
# foreign keys off; it is the order the way back undoes them in).
TABLES = ("users", "api_keys", "tags", "key_events", "org_events", "password_links")
# The old table's name while the new one is filled.
ASIDE = "{table}__before_0024"

PLAIN_KEY = "\n\tid INTEGER NOT NULL, \n"
AUTOINCREMENT_KEY = "\n\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n"
TABLE_KEY = "\n\tPRIMARY KEY (id), \n"


def _with_autoincrement(sql: str) -> str:
    if sql.count(PLAIN_KEY) != 1 or sql.count(TABLE_KEY) != 1 or "AUTOINCREMENT" in sql:
        raise RuntimeError(f"Unexpected table: {sql}")
    return sql.replace(PLAIN_KEY, AUTOINCREMENT_KEY).replace(TABLE_KEY, "\n")


def _without_autoincrement(sql: str) -> str:
    if sql.count(AUTOINCREMENT_KEY) != 1 or TABLE_KEY in sql:
        raise RuntimeError(f"Unexpected table: {sql}")
    # The table-level key goes back where SQLAlchemy writes it: before the other constraints.
    columns, constraints = _split_constraints(sql.replace(AUTOINCREMENT_KEY, PLAIN_KEY))
    return columns + TABLE_KEY.lstrip("\n") + constraints


def _split_constraints(sql: str) -> tuple[str, str]:
    """The table's text up to (and with) the newline before its first table constraint, and
    the rest."""
    match = re.search(r"\n\t(?:UNIQUE|FOREIGN KEY|CHECK|CONSTRAINT)\b", sql)
    if match is None:
        raise RuntimeError(f"Unexpected table: {sql}")
    return sql[:match.start() + 1], sql[match.start() + 1:]


def _named(sql: str, table: str) -> str:
    """`sql` (a CREATE TABLE of `table`, as SQLite keeps it: quoted or not) as it created it."""
    header = re.compile(rf'CREATE TABLE\s+("?){re.escape(table)}\1\s*\(')
    if header.match(sql) is None:
        raise RuntimeError(f"Unexpected table: {sql}")
    return header.sub(f"CREATE TABLE {table} (", sql, count=1)


def _rebuild(connection, table: str, change) -> None:
    """Rebuild `table` from its own text changed by `change`, with its rows, ids, indexes,
    triggers and statistics."""
    sql = connection.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).scalar_one()
    made_with_it = connection.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND tbl_name = ? "
        "AND sql IS NOT NULL ORDER BY type, name", (table,)).scalars().all()
    has_statistics = connection.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'").first()
    statistics = connection.exec_driver_sql(
        "SELECT idx, stat FROM sqlite_stat1 WHERE tbl = ?", (table,)).all() \
        if has_statistics else []
    aside = ASIDE.format(table=table)
    connection.exec_driver_sql("PRAGMA legacy_alter_table = ON")
    try:
        connection.exec_driver_sql(f'ALTER TABLE "{table}" RENAME TO "{aside}"')
    finally:
        connection.exec_driver_sql("PRAGMA legacy_alter_table = OFF")
    connection.exec_driver_sql(change(_named(sql, table)))
    connection.exec_driver_sql(f'INSERT INTO "{table}" SELECT * FROM "{aside}"')
    connection.exec_driver_sql(f'DROP TABLE "{aside}"')
    for statement in made_with_it:
        connection.exec_driver_sql(statement)
    for index, stat in statistics:
        connection.exec_driver_sql(
            "INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", (table, index, stat))


def _rebuild_all(tables, change) -> None:
    tables = tuple(tables)
    connection = op.get_bind()
    if connection.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise RuntimeError(
            "Migration 0024 rebuilds tables and must run with SQLite's foreign keys off "
            "(PRAGMA foreign_keys = OFF before the transaction begins): service.schema.upgrade "
            "does so. With them on, rebuilding a table would delete what refers to its rows.")
    for table in tables:
        rows = connection.exec_driver_sql(f'SELECT count(*) FROM "{table}"').scalar()
        _rebuild(connection, table, change)
        if connection.exec_driver_sql(f'SELECT count(*) FROM "{table}"').scalar() != rows:
            raise RuntimeError(f"Rebuilding {table} lost rows")
    # What the rebuilt tables refer to, and the small tables that refer to them. Every row and
    # id was copied (counted above), so the tags' links (query_tags: millions of rows, not
    # read here) name the same tags as before.
    for table in (*tables, "imports"):
        problems = connection.exec_driver_sql(f'PRAGMA foreign_key_check("{table}")').all()
        if problems:
            raise RuntimeError(f"Foreign keys of {table} that name no row: {problems[:10]}")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_all(TABLES, _with_autoincrement)
    op.create_table(
        "settings_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_settings_sessions_user_id", "settings_sessions", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_settings_sessions_user_id", table_name="settings_sessions")
    op.drop_table("settings_sessions")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_all(reversed(TABLES), _without_autoincrement)
