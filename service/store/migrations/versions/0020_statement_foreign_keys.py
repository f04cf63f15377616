"""PostgreSQL: the four foreign keys that every imported row paid for one at a time are kept
by statement triggers instead: a query's project, a link's query and tag, a text copy's query.

A foreign key checks each new row on its own (one locking look-up of the referenced row, through
the executor, per row) and cascades each deleted row with a statement of its own. An import
of 50,000 rows made ~210,000 such checks (a fifth of its time in `EXPLAIN ANALYZE`). The
triggers below do the same work once per statement, for all its rows:

- **Checks.** After an INSERT into `queries` or `query_tags`, the rows it names in `projects`,
  `tags` and `queries` must exist, and are locked `FOR KEY SHARE` as the foreign key's check
  locked them: a concurrent delete of one waits for this transaction, and its cascade then
  sees (and deletes) what this transaction added. A query whose current version this
  transaction wrote (an import's new rows; set-tags' updated rows) is not locked again:
  nobody else can delete it before this transaction ends. A violation raises SQLSTATE 23503
  (foreign_key_violation) with the old constraint's name, as before. Moving a query to
  another project, or a link to another query or tag (no code path does either), is checked
  row by row.
- **Cascades.** Deleting projects deletes their queries; deleting queries deletes their links
  and text copies; deleting tags deletes their links: one statement each. TRUNCATE of
  `projects`, `queries` or `tags` empties what depended on them, as TRUNCATE … CASCADE did
  (with DELETE: a TRUNCATE inside a TRUNCATE of the same tables is refused as "in use").

`query_texts` is written only by the triggers of `queries` (0006, 0011), so its copy needs no
check. SQLite keeps its foreign keys: its imports already meet their target with them.
"""

from alembic import op

revision = "0020"
down_revision = "0019"

# name: the table, its column, the table it refers to and that table's key.
FOREIGN_KEYS = {
    "queries_project_id_fkey": ("queries", "project_id", "projects", "id"),
    "query_tags_query_pk_fkey": ("query_tags", "query_pk", "queries", "pk"),
    "query_tags_tag_id_fkey": ("query_tags", "tag_id", "tags", "id"),
    "query_texts_pk_fkey": ("query_texts", "pk", "queries", "pk"),
}


def _violation(constraint: str, table: str) -> str:
    return (f"RAISE EXCEPTION 'insert or update on table \"{table}\" violates foreign key "
            f"constraint \"{constraint}\"' USING ERRCODE = 'foreign_key_violation', "
            f"TABLE = '{table}', CONSTRAINT = '{constraint}'")


def _check_all(constraint: str, table: str, column: str, referenced: str, key: str, *,
               skip_own: bool = False) -> str:
    """PL/pgSQL: every `column` of the statement's rows (`added`) names a row of `referenced`,
    each locked FOR KEY SHARE — with `skip_own`, but those whose current version this
    transaction wrote (`mine`), which are only counted."""
    named = f"{key} IN (SELECT {column} FROM added)"
    own = (f"SELECT count(*) INTO own FROM {referenced} WHERE {named} AND xmin = mine;"
           if skip_own else "own := 0;")
    return f"""
            SELECT count(DISTINCT {column}) INTO wanted FROM added;
            PERFORM 1 FROM {referenced} WHERE {named}{" AND xmin <> mine" if skip_own else ""}
            ORDER BY {key} FOR KEY SHARE;
            GET DIAGNOSTICS locked = ROW_COUNT;
            {own}
            IF locked + own < wanted THEN
                {_violation(constraint, table)};
            END IF;"""


def _check_one(constraint: str, table: str, referenced: str, key: str, column: str) -> str:
    """PL/pgSQL of a row trigger: the new row's `column` names a row of `referenced`, locked
    FOR KEY SHARE."""
    return f"""
            PERFORM 1 FROM {referenced} WHERE {key} = new.{column} FOR KEY SHARE;
            IF NOT FOUND THEN
                {_violation(constraint, table)};
            END IF;"""


def _statements(*statements: str) -> str:
    """PL/pgSQL of a trigger that runs these statements."""
    lines = "".join(f"            {statement};\n" for statement in statements)
    return f"\n        BEGIN\n{lines}            RETURN NULL;\n        END"


# The variables the checks of _check_all use.
CHECK_VARIABLES = """
        DECLARE
            mine xid := pg_current_xact_id()::xid;
            wanted integer;
            locked integer;
            own integer;"""

FUNCTIONS = {
    "tagdesk_check_query_projects": f"""{CHECK_VARIABLES}
        BEGIN{_check_all("queries_project_id_fkey", "queries", "project_id", "projects", "id")}
            RETURN NULL;
        END""",
    "tagdesk_check_moved_query": f"""
        BEGIN{_check_one("queries_project_id_fkey", "queries", "projects", "id", "project_id")}
            RETURN NULL;
        END""",
    "tagdesk_check_links": f"""{CHECK_VARIABLES}
        BEGIN{_check_all("query_tags_tag_id_fkey", "query_tags", "tag_id", "tags", "id")}{
            _check_all("query_tags_query_pk_fkey", "query_tags", "query_pk", "queries", "pk",
                       skip_own=True)}
            RETURN NULL;
        END""",
    "tagdesk_check_moved_link": f"""
        BEGIN{_check_one("query_tags_tag_id_fkey", "query_tags", "tags", "id", "tag_id")}{
            _check_one("query_tags_query_pk_fkey", "query_tags", "queries", "pk", "query_pk")}
            RETURN NULL;
        END""",
    "tagdesk_delete_project_queries": _statements(
        "DELETE FROM queries WHERE project_id IN (SELECT id FROM removed)"),
    "tagdesk_delete_query_rows": _statements(
        "DELETE FROM query_tags WHERE query_pk IN (SELECT pk FROM removed)",
        "DELETE FROM query_texts WHERE pk IN (SELECT pk FROM removed)"),
    "tagdesk_delete_tag_links": _statements(
        "DELETE FROM query_tags WHERE tag_id IN (SELECT id FROM removed)"),
    "tagdesk_truncate_project_queries": _statements("DELETE FROM queries"),
    "tagdesk_truncate_query_rows": _statements("DELETE FROM query_tags",
                                               "DELETE FROM query_texts"),
    "tagdesk_truncate_tag_links": _statements("DELETE FROM query_tags"),
}

# name: (table, when, function). The checks are named to fire first among their table's
# AFTER INSERT triggers (alphabetical order): nothing is counted or copied for a refused row.
TRIGGERS = {
    "queries_check_project": (
        "queries", "AFTER INSERT ON queries REFERENCING NEW TABLE AS added FOR EACH STATEMENT",
        "tagdesk_check_query_projects"),
    "queries_check_moved_project": (
        "queries", "AFTER UPDATE OF project_id ON queries FOR EACH ROW "
        "WHEN (old.project_id IS DISTINCT FROM new.project_id)", "tagdesk_check_moved_query"),
    "query_tags_check_links": (
        "query_tags", "AFTER INSERT ON query_tags REFERENCING NEW TABLE AS added "
        "FOR EACH STATEMENT", "tagdesk_check_links"),
    "query_tags_check_moved_link": (
        "query_tags", "AFTER UPDATE OF query_pk, tag_id ON query_tags FOR EACH ROW "
        "WHEN ((old.query_pk, old.tag_id) IS DISTINCT FROM (new.query_pk, new.tag_id))",
        "tagdesk_check_moved_link"),
    "projects_delete_queries": (
        "projects", "AFTER DELETE ON projects REFERENCING OLD TABLE AS removed "
        "FOR EACH STATEMENT", "tagdesk_delete_project_queries"),
    "queries_delete_rows": (
        "queries", "AFTER DELETE ON queries REFERENCING OLD TABLE AS removed FOR EACH STATEMENT",
        "tagdesk_delete_query_rows"),
    "tags_delete_links": (
        "tags", "AFTER DELETE ON tags REFERENCING OLD TABLE AS removed FOR EACH STATEMENT",
        "tagdesk_delete_tag_links"),
    "projects_truncate_queries": (
        "projects", "AFTER TRUNCATE ON projects FOR EACH STATEMENT",
        "tagdesk_truncate_project_queries"),
    "queries_truncate_rows": (
        "queries", "AFTER TRUNCATE ON queries FOR EACH STATEMENT", "tagdesk_truncate_query_rows"),
    "tags_truncate_links": (
        "tags", "AFTER TRUNCATE ON tags FOR EACH STATEMENT", "tagdesk_truncate_tag_links"),
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, (table, *_reference) in FOREIGN_KEYS.items():
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
    for name, body in FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $${body}$$")
    for name, (_table, when, function) in TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION {function}()")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, (table, *_rest) in TRIGGERS.items():
        op.execute(f"DROP TRIGGER {name} ON {table}")
    for name in FUNCTIONS:
        op.execute(f"DROP FUNCTION {name}()")
    for name, (table, column, referenced, key) in FOREIGN_KEYS.items():
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY ({column}) "
                   f"REFERENCES {referenced} ({key}) ON DELETE CASCADE")
