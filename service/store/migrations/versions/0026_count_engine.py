"""One count engine on both databases (service/engine): per project, roaring bitmaps of the
row keys of all queries, of each word and each one- or two-character string of their folded
texts, of each language, country and tag, in pieces of 2^18 keys (`engine_pieces`), kept by the
one write path in the same transaction as the rows.

What they make redundant goes, with every trigger that kept derived data: on SQLite the FTS5
trigram index, the short-string counters and their folding tables, the counters per language
and country, per project and per tag, the texts and links versions; on PostgreSQL the same
counters and versions, the copy of the texts (`query_texts`) and the bitmap tables of 0023.
The triggers that check foreign keys and referential actions stay. New: `changes_outside`,
moved by triggers whenever a write to a project's queries or links goes around the engine
(hand-written SQL), so that the engine builds that project's bitmaps again before it counts.

Each project's bitmaps are built right after, by `init-db` (service/schema.py), with the
engine's own code. Everything dropped is written down first
(`engine_undo`, its definitions as the database holds them), so that the downgrade puts it
back exactly; the downgrade then inserts the queries and links again with the old triggers in
place, and they derive everything as they always did.
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"

SQLITE_TRIGGERS = [
    "language_country_count_delete", "language_country_count_insert",
    "language_country_count_update", "queries_count_delete", "queries_count_insert",
    "queries_fts_delete", "queries_fts_insert", "queries_fts_update",
    "queries_text_grams_delete", "queries_text_grams_insert", "queries_text_grams_update",
    "queries_texts_version_delete", "queries_texts_version_insert",
    "queries_texts_version_update", "query_tags_follow_time", "tag_count_delete",
    "tag_count_insert", "tag_count_update", "tag_links_moved_to_query"]
SQLITE_TABLES = ["queries_fts", "language_country_counts", "text_gram_counts", "text_folds",
                 "text_positions", "bulk_load"]
# Tables whose rows are not derived from the queries: kept in engine_undo with their rows.
SQLITE_CONSTANT_TABLES = ["text_folds", "text_positions"]
COLUMNS = {"projects": ["query_count", "texts_version"],
           "tags": ["query_count", "links_version"]}
POSTGRES_COLUMNS = {"projects": ["query_count", "texts_version", "words_version", "number"],
                    "tags": ["query_count", "links_version", "keys_version"]}
POSTGRES_TRIGGERS = [
    ("queries", "queries_copy_texts"), ("queries", "queries_count_delete"),
    ("queries", "queries_count_insert"), ("queries", "queries_count_moved"),
    ("queries", "queries_move_text"), ("queries", "queries_text_grams_delete"),
    ("queries", "queries_text_grams_insert"), ("queries", "queries_text_grams_truncate"),
    ("queries", "queries_text_grams_update"), ("queries", "queries_texts_version_delete"),
    ("queries", "queries_texts_version_insert"), ("queries", "queries_texts_version_truncate"),
    ("queries", "queries_texts_version_update"), ("queries", "query_tags_follow_time"),
    ("query_tags", "query_tags_count_delete"), ("query_tags", "query_tags_count_insert"),
    ("query_tags", "query_tags_count_moved"), ("query_tags", "query_tags_truncate_counts")]
POSTGRES_FUNCTIONS = [
    "tagdesk_bump_all_texts_versions", "tagdesk_bump_texts_version",
    "tagdesk_bump_texts_version_moved", "tagdesk_clear_text_grams",
    "tagdesk_copy_query_texts", "tagdesk_count_moved_link", "tagdesk_count_moved_query",
    "tagdesk_count_moved_text_grams", "tagdesk_count_queries", "tagdesk_count_tag_links",
    "tagdesk_count_text_grams", "tagdesk_count_text_grams_of", "tagdesk_links_follow_time",
    "tagdesk_move_query_text", "tagdesk_truncate_link_counts"]
# Dropped in this order (the later ones refer to the earlier ones' columns).
POSTGRES_TABLES = ["text_words", "code_keys", "tag_keys", "query_texts",
                   "language_country_counts", "text_gram_counts"]
# Functions that stay, with the line that deleted from a dropped table taken out.
POSTGRES_KEPT_FUNCTIONS = {
    "tagdesk_delete_query_rows": "DELETE FROM query_texts WHERE pk IN (SELECT pk FROM removed);",
    "tagdesk_truncate_query_rows": "DELETE FROM query_texts;",
}

TRUNCATED = ["queries", "query_tags"]
ENGINE_COLUMNS = ["changes_outside", "changes_indexed", "engine_stamp", "texts_stamp",
                  "engine_epoch"]

# SQLite: the counting triggers stand aside while the engine writes (a row in engine_writing
# that only its own transaction sees: SQLite has one writer at a time).
OUTSIDE = "NOT EXISTS (SELECT 1 FROM engine_writing)"
MOVE_PROJECT = "UPDATE projects SET changes_outside = changes_outside + 1 WHERE id = {}"
LINK_PROJECT = "(SELECT project_id FROM queries WHERE pk = {}.query_pk)"
LINKS_PROJECTS = "SELECT q.project_id FROM rows r JOIN queries q ON q.pk = r.query_pk"
SQLITE_COUNTING = {
    "engine_outside_query_insert": ("AFTER INSERT ON queries",
                                    MOVE_PROJECT.format("new.project_id")),
    "engine_outside_query_delete": ("AFTER DELETE ON queries",
                                    MOVE_PROJECT.format("old.project_id")),
    "engine_outside_query_update": ("AFTER UPDATE ON queries", MOVE_PROJECT.format(
        "old.project_id") + "; " + MOVE_PROJECT.format("new.project_id")),
    "engine_outside_link_insert": ("AFTER INSERT ON query_tags",
                                   MOVE_PROJECT.format(LINK_PROJECT.format("new"))),
    "engine_outside_link_delete": ("AFTER DELETE ON query_tags",
                                   MOVE_PROJECT.format(LINK_PROJECT.format("old"))),
    "engine_outside_link_update": ("AFTER UPDATE ON query_tags", MOVE_PROJECT.format(
        LINK_PROJECT.format("old")) + "; " + MOVE_PROJECT.format(LINK_PROJECT.format("new"))),
    "engine_outside_tag_delete": ("AFTER DELETE ON tags", MOVE_PROJECT.format("old.project_id")),
}
# PostgreSQL: once per statement, for the projects its rows belong to, unless the engine
# wrote them (its transaction's setting).
POSTGRES_OUTSIDE = "current_setting('tagdesk.engine_writing', true) IS DISTINCT FROM 'on'"
POSTGRES_COUNTING = {
    # name: (table, events and transition tables, the projects' ids from them)
    "engine_outside_query_insert": ("queries", "INSERT", "NEW TABLE AS rows",
                                    "SELECT project_id FROM rows"),
    "engine_outside_query_delete": ("queries", "DELETE", "OLD TABLE AS rows",
                                    "SELECT project_id FROM rows"),
    "engine_outside_query_update": ("queries", "UPDATE", "OLD TABLE AS rows NEW TABLE AS moved",
                                    "SELECT project_id FROM rows UNION "
                                    "SELECT project_id FROM moved"),
    "engine_outside_link_insert": ("query_tags", "INSERT", "NEW TABLE AS rows", LINKS_PROJECTS),
    "engine_outside_link_delete": ("query_tags", "DELETE", "OLD TABLE AS rows", LINKS_PROJECTS),
    "engine_outside_link_update": ("query_tags", "UPDATE", "OLD TABLE AS rows NEW TABLE AS moved",
                                   "SELECT q.project_id FROM queries q WHERE q.pk IN ("
                                   "SELECT query_pk FROM rows UNION SELECT query_pk FROM moved)"),
    "engine_outside_tag_delete": ("tags", "DELETE", "OLD TABLE AS rows",
                                  "SELECT project_id FROM rows"),
}


def _run(statement: str, parameters=None):
    return op.get_bind().exec_driver_sql(statement, parameters or ())


def _postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"


# --- what is dropped, written down ---------------------------------------------------------


class _Undo:
    def __init__(self) -> None:
        self.statements: list[tuple[str, list | None]] = []

    def add(self, statement: str, rows: list | None = None) -> None:
        self.statements.append((statement, rows))

    def save(self) -> None:
        _run("CREATE TABLE engine_undo (position integer PRIMARY KEY, statement text NOT NULL, "
             "rows_json text)")
        marker = "%s" if _postgres() else "?"
        for position, (statement, rows) in enumerate(self.statements):
            _run(f"INSERT INTO engine_undo VALUES ({marker}, {marker}, {marker})",
                 (position, statement, None if rows is None else json.dumps(rows)))


def _sqlite_column(table: str, name: str) -> str:
    for _cid, column, kind, notnull, default, _pk in _run(f"PRAGMA table_info({table})"):
        if column == name:
            clauses = [kind]
            if default is not None:
                clauses.append(f"DEFAULT {default}")
            if notnull:
                clauses.append("NOT NULL")
            return f"ALTER TABLE {table} ADD COLUMN {name} {' '.join(clauses)}"
    raise RuntimeError(f"No column {table}.{name}")


def _sqlite_upgrade(undo: _Undo) -> None:
    definitions = dict(_run("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").all())
    for table in SQLITE_TABLES:
        rows = None
        if table in SQLITE_CONSTANT_TABLES:
            rows = [list(row) for row in _run(f"SELECT * FROM {table}")]
        undo.add(definitions[table], rows)
        for (sql,) in _run("SELECT sql FROM sqlite_master WHERE type = 'index' "
                                "AND tbl_name = ? AND sql IS NOT NULL", (table,)):
            undo.add(sql)
    for table, columns in COLUMNS.items():
        for column in columns:
            undo.add(_sqlite_column(table, column))
    for trigger in SQLITE_TRIGGERS:
        undo.add(definitions[trigger])
    for trigger in SQLITE_TRIGGERS:
        _run(f"DROP TRIGGER {trigger}")
    for table in SQLITE_TABLES:
        _run(f"DROP TABLE {table}")
    for table, columns in COLUMNS.items():
        for column in columns:
            _run(f"ALTER TABLE {table} DROP COLUMN {column}")
    _run("CREATE TABLE engine_writing (writing integer NOT NULL)")
    for name, (event, action) in SQLITE_COUNTING.items():
        _run(f"CREATE TRIGGER {name} {event} WHEN {OUTSIDE} BEGIN {action}; END")


def _postgres_column(table: str, name: str) -> str:
    kind, notnull, default, identity = _run(
        "SELECT format_type(a.atttypid, a.atttypmod), a.attnotnull, "
        "pg_get_expr(d.adbin, d.adrelid), a.attidentity FROM pg_attribute a "
        "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        "WHERE a.attrelid = %s::regclass AND a.attname = %s", (table, name)).one()
    clauses = [kind]
    if identity:
        clauses.append("GENERATED " + ("ALWAYS" if identity == "a" else "BY DEFAULT")
                       + " AS IDENTITY")
    if default is not None:
        clauses.append(f"DEFAULT {default}")
    if notnull and not identity:
        clauses.append("NOT NULL")
    return f"ALTER TABLE {table} ADD COLUMN {name} {' '.join(clauses)}"


def _postgres_table(table: str) -> list[str]:
    """The table's definition as the database holds it: columns, constraints, indexes."""
    columns = [f'{name} {kind}{" COLLATE " + collation if collation else ""}'
               f'{" NOT NULL" if notnull else ""}'
               f'{" DEFAULT " + default if default is not None else ""}'
               for name, kind, collation, notnull, default in _run(
                   "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
                   "CASE WHEN a.attcollation <> t.typcollation THEN quote_ident(c.collname) END, "
                   "a.attnotnull, pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a "
                   "JOIN pg_type t ON t.oid = a.atttypid "
                   "LEFT JOIN pg_collation c ON c.oid = a.attcollation "
                   "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
                   "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped "
                   "ORDER BY a.attnum", (table,))]
    constraints = [f"CONSTRAINT {name} {definition}" for name, definition in _run(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass ORDER BY contype DESC, conname", (table,))]
    statements = [f"CREATE TABLE {table} ({', '.join(columns + constraints)})"]
    statements += [definition for (definition,) in _run(
        "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i "
        "WHERE i.indrelid = %s::regclass AND NOT EXISTS ("
        "SELECT FROM pg_constraint c WHERE c.conindid = i.indexrelid) ORDER BY 1", (table,))]
    return statements


def _postgres_upgrade(undo: _Undo) -> None:
    for table, columns in POSTGRES_COLUMNS.items():
        for column in columns:
            undo.add(_postgres_column(table, column))
        # Constraints on those columns (projects.number is unique, for 0023's references).
        for name, definition in _run(
                "SELECT c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
                "WHERE c.conrelid = %s::regclass AND a.attname = ANY (%s) "
                "AND c.contype IN ('u', 'c')", (table, columns)):
            undo.add(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")
    for table in reversed(POSTGRES_TABLES):
        for statement in _postgres_table(table):
            undo.add(statement)
    for function in [*POSTGRES_FUNCTIONS, *POSTGRES_KEPT_FUNCTIONS]:
        undo.add(_run("SELECT pg_get_functiondef(%s::regproc)", (function,)).scalar_one())
    for table, trigger in POSTGRES_TRIGGERS:
        undo.add(_run("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = %s "
                      "AND tgrelid = %s::regclass", (trigger, table)).scalar_one())
    for table, trigger in POSTGRES_TRIGGERS:
        _run(f"DROP TRIGGER {trigger} ON {table}")
    for function in POSTGRES_FUNCTIONS:
        _run(f"DROP FUNCTION {function}")
    for function, line in POSTGRES_KEPT_FUNCTIONS.items():
        definition = _run("SELECT pg_get_functiondef(%s::regproc)", (function,)).scalar_one()
        if definition.count(line) != 1:
            raise RuntimeError(f"Unexpected function: {definition}")
        _run(definition.replace(line, ""))
    for table in POSTGRES_TABLES:
        _run(f"DROP TABLE {table}")
    for table, columns in POSTGRES_COLUMNS.items():
        for column in columns:
            _run(f"ALTER TABLE {table} DROP COLUMN {column}")
    for name, (table, event, transitions, projects) in POSTGRES_COUNTING.items():
        function = f"tagdesk_{name}"
        _run(f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
             f"IF {POSTGRES_OUTSIDE} THEN UPDATE projects SET changes_outside = "
             f"changes_outside + 1 WHERE id IN ({projects}); END IF; RETURN NULL; END $$")
        _run(f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {transitions} "
             f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()")
    # A TRUNCATE has no rows to name its projects: every project counts as changed.
    _run("CREATE FUNCTION tagdesk_engine_outside_truncate() RETURNS trigger LANGUAGE plpgsql "
         f"AS $$ BEGIN IF {POSTGRES_OUTSIDE} THEN UPDATE projects SET changes_outside = "
         "changes_outside + 1; END IF; RETURN NULL; END $$")
    for table in TRUNCATED:
        _run(f"CREATE TRIGGER engine_outside_{table}_truncate AFTER TRUNCATE ON {table} "
             "FOR EACH STATEMENT EXECUTE FUNCTION tagdesk_engine_outside_truncate()")


def upgrade() -> None:
    undo = _Undo()
    if _postgres():
        _postgres_upgrade(undo)
    else:
        _sqlite_upgrade(undo)
    undo.save()
    for column in ENGINE_COLUMNS:
        op.add_column("projects", sa.Column(column, sa.Integer(), nullable=False,
                                            server_default="0"))
    value = sa.Text().with_variant(sa.Text(collation="C"), "postgresql")
    project_id = sa.String(36).with_variant(sa.Uuid(as_uuid=False), "postgresql")
    op.create_table(
        "engine_pieces",
        sa.Column("project_id", project_id,
                  sa.ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("value", value, nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=False),
        sa.Column("stamp", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("keys", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("project_id", "kind", "value", "chunk"),
    )
    op.create_index("ix_engine_pieces_stamp", "engine_pieces", ["project_id", "stamp"])
    # No project has bitmaps yet: each counts as changed outside the engine, whose bitmaps
    # are built by `init-db` right after (service/schema.py), or by a project's first read.
    _run("UPDATE projects SET changes_outside = 1")


def downgrade() -> None:
    postgres = _postgres()
    if postgres:
        for name, (table, *_rest) in POSTGRES_COUNTING.items():
            _run(f"DROP TRIGGER {name} ON {table}")
            _run(f"DROP FUNCTION tagdesk_{name}")
        for table in TRUNCATED:
            _run(f"DROP TRIGGER engine_outside_{table}_truncate ON {table}")
        _run("DROP FUNCTION tagdesk_engine_outside_truncate")
    else:
        for name in SQLITE_COUNTING:
            _run(f"DROP TRIGGER {name}")
        _run("DROP TABLE engine_writing")
    op.drop_table("engine_pieces")
    for column in ENGINE_COLUMNS:
        op.drop_column("projects", column)
    # The queries and links leave, to come back once the old triggers are in place.
    _run("CREATE TEMP TABLE engine_undo_queries AS SELECT * FROM queries")
    _run("CREATE TEMP TABLE engine_undo_links AS SELECT * FROM query_tags")
    _run("DELETE FROM query_tags")
    _run("DELETE FROM queries")
    for statement, rows in _run("SELECT statement, rows_json FROM engine_undo "
                                "ORDER BY position").all():
        _run(statement)
        if rows:
            table = statement.split()[2]
            markers = ", ".join(["?"] * len(json.loads(rows)[0]))
            op.get_bind().exec_driver_sql(f"INSERT INTO {table} VALUES ({markers})",
                                          [tuple(row) for row in json.loads(rows)])
    _run("DROP TABLE engine_undo")
    _run("INSERT INTO queries SELECT * FROM engine_undo_queries ORDER BY pk")
    _run("INSERT INTO query_tags SELECT * FROM engine_undo_links ORDER BY query_pk, tag_id")
    _run("DROP TABLE engine_undo_queries")
    _run("DROP TABLE engine_undo_links")
    if postgres:
        _index_0023()


def _index_0023() -> None:
    """PostgreSQL: 0023's bitmap tables, built as 0023 built them, and made current."""
    import importlib

    bitmaps = importlib.import_module("service.store.migrations.versions.0023_bitmap_index")
    for table in bitmaps.TABLES:
        bitmaps._index(table)
    _run("UPDATE projects SET words_version = texts_version")
    _run("UPDATE tags SET keys_version = links_version")
