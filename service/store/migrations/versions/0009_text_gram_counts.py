"""text_gram_counts: how many of a project's queries contain each short string, so that the
total of a short text filter is one row read, not a pass over every query.

A text contains a term of n characters exactly when the term is one of its substrings of n
characters. So for every query the distinct substrings of 1 to MAX characters of its folded
text are counted per project, and the total of a text-only filter of at most MAX characters is
that count. The folding is each database's own, the same the substring filter matches with:

- PostgreSQL, MAX = 4: `lower()`, as `query_texts.folded` (0006). Without this, a first count
  of "a" read every one of a million rows (180–280 ms), of "sch" or "schu" every trigram
  candidate (50–100 ms).
- SQLite, MAX = 2: `lower()` folds ASCII only, as `LIKE` does, which matches terms shorter
  than three characters; longer terms use the FTS5 trigram index (Unicode folding), which
  counts them from the index alone. A first count of "a" or "sh" scanned every row (160–220 ms).

Kept by triggers, in the transaction of every insert, delete, TRUNCATE or change of a query's
text or project; setting tags never touches them. Statement-level on PostgreSQL (one upsert per
distinct string per import batch); the project's row is locked first, as every counter writer
of 0005 does, so writers of one project queue in one order.
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import (
    SQLITE_LOWERED_BACKFILL,
    project_id,
    sqlite_text_gram_triggers,
)

revision = "0009"
down_revision = "0008"

POSTGRES_MAX = 4
# Query texts are at most 1,000 characters (service/bodies/validation.py: MAX_STRING).
SQLITE_POSITIONS = 1000


def _postgres_grams(rows: str) -> str:
    """(project_id, gram, c): how many of `rows` (a table of queries) contain each string.
    Each text is lower-cased once (OFFSET 0 keeps the subquery apart), and a string is taken
    only where it first occurs in its text: each query counts once, with no DISTINCT (which
    was a third of the work)."""
    return f"""
        SELECT project_id, gram, count(*) AS c FROM (
            SELECT r.project_id, substr(r.folded, n, l) AS gram
            FROM (SELECT project_id, lower(query) AS folded FROM {rows} OFFSET 0) r,
                 generate_series(1, {POSTGRES_MAX}) l,
                 generate_series(1, char_length(r.folded) - l + 1) n
            WHERE strpos(r.folded, substr(r.folded, n, l)) = n) strings
        GROUP BY project_id, gram"""


def _postgres_add(rows: str) -> str:
    """Counters that exist are updated, and only new strings inserted: an upsert of every
    string cost twice as much, and after the first few thousand queries nearly every string
    of a batch is already counted. (A string another writer adds meanwhile meets the
    ON CONFLICT; writers of one project queue on its row anyway.)"""
    return f"""
        WITH n AS MATERIALIZED ({_postgres_grams(rows)}),
        counted AS (
            UPDATE text_gram_counts t SET query_count = t.query_count + n.c FROM n
            WHERE (t.project_id, t.gram) = (n.project_id, n.gram)
            RETURNING t.project_id, t.gram)
        INSERT INTO text_gram_counts AS t (project_id, gram, query_count)
        SELECT project_id, gram, c FROM n
        WHERE NOT EXISTS (SELECT FROM counted
                          WHERE (counted.project_id, counted.gram) = (n.project_id, n.gram))
        ORDER BY project_id, gram
        ON CONFLICT (project_id, gram)
        DO UPDATE SET query_count = t.query_count + excluded.query_count"""


def _postgres_remove(rows: str) -> str:
    # Only UPDATE: when a project is deleted its counter rows may already be gone.
    return f"""
        UPDATE text_gram_counts t SET query_count = t.query_count - n.c
        FROM ({_postgres_grams(rows)}) n
        WHERE (t.project_id, t.gram) = (n.project_id, n.gram)"""


# An import statement of 1,000 queries makes ~95,000 strings: aggregated in memory, and no JIT
# compilation (the estimates are large, the work is not: JIT cost more than it saved).
STATEMENT_SETTINGS = " SET work_mem = '64MB' SET jit = off"

OLD_ROW = "(SELECT old.pk, old.project_id, old.query) AS o (pk, project_id, query)"
NEW_ROW = "(SELECT new.pk, new.project_id, new.query) AS a (pk, project_id, query)"

LOCK_PROJECTS = """
    PERFORM 1 FROM projects WHERE id IN (SELECT project_id FROM {rows})
    ORDER BY id FOR NO KEY UPDATE"""

# A writer inserting many statements' worth of queries in one transaction (an import) sets this
# for the transaction and counts what it inserted once, at the end, with
# tagdesk_count_text_grams_of(its row keys). Counted per statement instead, each counter row
# would be updated once per statement in one transaction, and PostgreSQL keeps every version
# until the commit: each update then walks all the earlier ones (an import of 100,000 queries
# took 2.7 times as long; of a million, hours).
DEFERRED = "current_setting('tagdesk.defer_text_grams', true) = 'on'"
IMPORTED = ("(SELECT q.pk, q.project_id, q.query FROM queries q "
            "JOIN unnest(pks) k (pk) USING (pk)) d")

POSTGRES_FUNCTIONS = {
    "tagdesk_count_text_grams": f"""RETURNS trigger AS $$
        BEGIN
            IF TG_OP = 'INSERT' AND {DEFERRED} THEN
                RETURN NULL;
            END IF;
            {LOCK_PROJECTS.format(rows="changed")};
            IF TG_OP = 'INSERT' THEN
                {_postgres_add("changed")};
            ELSE
                {_postgres_remove("changed")};
            END IF;
            RETURN NULL;
        END $$ LANGUAGE plpgsql""" + STATEMENT_SETTINGS,
    # Row level: no code path changes a query's text or project; kept right for any that would.
    "tagdesk_count_moved_text_grams": f"""RETURNS trigger AS $$
        BEGIN
            PERFORM 1 FROM projects WHERE id IN (old.project_id, new.project_id)
            ORDER BY id FOR NO KEY UPDATE;
            {_postgres_remove(OLD_ROW)};
            {_postgres_add(NEW_ROW)};
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
    # Not a trigger: the deferred counting of queries an import inserted (above).
    "tagdesk_count_text_grams_of": f"""(pks integer[]) RETURNS void AS $$
        BEGIN
            {LOCK_PROJECTS.format(rows=IMPORTED)};
            {_postgres_add(IMPORTED)};
        END $$ LANGUAGE plpgsql""" + STATEMENT_SETTINGS,
    # TRUNCATE fires no delete triggers.
    "tagdesk_clear_text_grams": """RETURNS trigger AS $$
        BEGIN
            DELETE FROM text_gram_counts;
            RETURN NULL;
        END $$ LANGUAGE plpgsql""",
}

POSTGRES_TRIGGERS = {
    "queries_text_grams_insert": "AFTER INSERT ON queries REFERENCING NEW TABLE AS changed "
                                 "FOR EACH STATEMENT EXECUTE FUNCTION tagdesk_count_text_grams()",
    "queries_text_grams_delete": "AFTER DELETE ON queries REFERENCING OLD TABLE AS changed "
                                 "FOR EACH STATEMENT EXECUTE FUNCTION tagdesk_count_text_grams()",
    "queries_text_grams_update": "AFTER UPDATE OF query, project_id ON queries FOR EACH ROW "
                                 "WHEN ((old.query, old.project_id) IS DISTINCT FROM "
                                 "(new.query, new.project_id)) "
                                 "EXECUTE FUNCTION tagdesk_count_moved_text_grams()",
    "queries_text_grams_truncate": "AFTER TRUNCATE ON queries FOR EACH STATEMENT "
                                   "EXECUTE FUNCTION tagdesk_clear_text_grams()",
}


def _sqlite_grams(row: str) -> str:
    """The distinct strings of 1 and 2 characters of `row`'s text, ASCII-lower-cased. (SQLite
    allows no WITH in a trigger, so positions come from a table.)"""
    folded = f"lower({row}.query)"
    return (f"SELECT substr({folded}, n, 1) AS gram FROM text_positions "
            f"WHERE n <= length({row}.query) "
            f"UNION SELECT substr({folded}, n, 2) FROM text_positions "
            f"WHERE n < length({row}.query)")


SQLITE_TRIGGERS = sqlite_text_gram_triggers(_sqlite_grams)


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.create_table(
        "text_gram_counts",
        project_id(primary_key=True),
        # Byte order on PostgreSQL: cheaper to compare, and equality is the same.
        sa.Column("gram", sa.Text(collation=None if sqlite else "C"), primary_key=True),
        sa.Column("query_count", sa.Integer, nullable=False),
    )
    if sqlite:
        op.create_table("text_positions", sa.Column("n", sa.Integer, primary_key=True))
        op.execute("WITH RECURSIVE p (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p "
                   f"WHERE n < {SQLITE_POSITIONS}) INSERT INTO text_positions SELECT n FROM p")
        op.execute(SQLITE_LOWERED_BACKFILL)
        for name, body in SQLITE_TRIGGERS.items():
            op.execute(f"CREATE TRIGGER {name} {body}")
        return
    op.execute("SET LOCAL jit = off")
    op.execute("SET LOCAL work_mem = '64MB'")
    op.execute("INSERT INTO text_gram_counts (project_id, gram, query_count) "
               + _postgres_grams("queries"))
    for name, body in POSTGRES_FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}{'' if body.startswith('(') else '()'} {body}")
    for name, definition in POSTGRES_TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {definition}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.drop_table("text_positions")
    else:
        for name in POSTGRES_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON queries")
        for name in POSTGRES_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {name}")
    op.drop_table("text_gram_counts")
