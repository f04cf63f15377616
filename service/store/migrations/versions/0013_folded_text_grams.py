"""SQLite: short text filters fold case as the long ones do, in every script.

Terms of three characters and more are matched by the FTS5 trigram index (0001), which folds
every character by SQLite's own table: Unicode's simple case folding as SQLite ships it
(Ä → ä, Σ and ς → σ, ẞ → ß, the Kelvin sign → k; one character always stays one character).
Shorter terms were counted (`text_gram_counts`, 0009) and matched (`LIKE`) with `lower()`,
which folds ASCII only: "ä" did not find "Äpfel", nor "σο" "ΣΟΦΙΑ".

- `text_folds` holds every character that the trigram index folds to another, with what it
  becomes, asked of FTS5 itself while migrating: the characters of the two planes where
  Unicode has case (U+0001–U+1FFFF) are indexed in a row, and the trigram at each place starts
  with its character folded. (SQLite's table changes the Basic Multilingual Plane and Deseret.)
- The triggers count each text's strings of one and two characters folded by that table, and
  the counters are counted afresh. A text of printable ASCII alone is folded by `lower()`, as
  before, which folds it the same: 33 µs a text instead of 30 (looking every character up in
  the table took 42).
- The service folds a short term by the same table, counts it from its folded row, and finds
  its rows by every spelling that folds to it (service/api/search.py).
- Every project's `texts_version` (0008) moves on: counts remembered by running service
  processes were made with the old folding.

PostgreSQL is unchanged: `lower()` already folds the long terms (ILIKE, `query_texts`) and the
counted short ones alike — beyond ASCII wherever the database's character type does (a UTF-8
database with a libc or ICU locale other than C).
"""

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import SQLITE_LOWERED_BACKFILL, sqlite_text_gram_triggers

revision = "0013"
down_revision = "0012"

# Planes 0 and 1: every character with case is in them (plane 2 on holds ideographs and
# private use). Surrogates are not characters of a text.
PROBED = [c for c in range(1, 0x20000) if not 0xD800 <= c <= 0xDFFF]


def _trigram_folds(connection) -> list[dict]:
    """{c, folded} for every probed character the trigram tokenizer changes. The probe is one
    text of all of them in a row; its trigram at offset i is characters i to i+2 folded."""
    probe = "".join(map(chr, PROBED)) + "  "
    connection.exec_driver_sql(
        "CREATE VIRTUAL TABLE temp.fold_probe USING fts5(t, tokenize='trigram')")
    connection.exec_driver_sql(
        "CREATE VIRTUAL TABLE temp.fold_probe_terms USING fts5vocab(temp, fold_probe, instance)")
    try:
        connection.execute(sa.text("INSERT INTO temp.fold_probe (rowid, t) VALUES (1, :t)"),
                           {"t": probe})
        folds = []
        for term, offset in connection.exec_driver_sql(
                "SELECT term, offset FROM temp.fold_probe_terms"):
            if term[0] != probe[offset]:
                folds.append({"c": probe[offset], "folded": term[0]})
        return folds
    finally:
        connection.exec_driver_sql("DROP TABLE temp.fold_probe_terms")
        connection.exec_driver_sql("DROP TABLE temp.fold_probe")


# True when the text holds printable ASCII alone, which lower() folds as the trigram index does.
PRINTABLE_ASCII = "{row}.query NOT GLOB '*[^ -~]*'"


def _sqlite_grams(row: str) -> str:
    """The distinct strings of 1 and 2 characters of `row`'s text, folded as the trigram index
    folds them. (SQLite allows no WITH in a trigger, so positions come from a table.)"""
    length, ascii_only = f"length({row}.query)", PRINTABLE_ASCII.format(row=row)
    lowered = f"lower({row}.query)"

    def char(k: int) -> str:
        return f"substr({row}.query, n + {k}, 1)"

    def folded(alias: str, k: int) -> str:
        return f"coalesce({alias}.folded, {char(k)})"

    def looked_up(alias: str, k: int) -> str:
        return f"LEFT JOIN text_folds {alias} ON {alias}.c = {char(k)}"

    return (f"SELECT substr({lowered}, n, 1) AS gram FROM text_positions "
            f"WHERE n <= {length} AND {ascii_only} "
            f"UNION SELECT substr({lowered}, n, 2) FROM text_positions "
            f"WHERE n < {length} AND {ascii_only} "
            f"UNION SELECT {folded('a', 0)} FROM text_positions {looked_up('a', 0)} "
            f"WHERE n <= {length} AND NOT {ascii_only} "
            f"UNION SELECT {folded('a', 0)} || {folded('b', 1)} FROM text_positions "
            f"{looked_up('a', 0)} {looked_up('b', 1)} "
            f"WHERE n < {length} AND NOT {ascii_only}")


SQLITE_TRIGGERS = sqlite_text_gram_triggers(_sqlite_grams)

# Every query's strings counted once, folded as above: the texts of printable ASCII alone by
# lower(), the others by the table (looking every character up took twice as long).
SQLITE_BACKFILL = f"""
    INSERT INTO text_gram_counts (project_id, gram, query_count)
    SELECT project_id, gram, count(*) FROM (
        SELECT DISTINCT q.pk, q.project_id, substr(lower(q.query), p.n, l.l) AS gram
        FROM queries q
        JOIN text_positions p ON p.n <= length(q.query)
        JOIN (SELECT 1 AS l UNION ALL SELECT 2) l ON p.n + l.l - 1 <= length(q.query)
        WHERE {PRINTABLE_ASCII.format(row="q")}
        UNION ALL
        SELECT DISTINCT q.pk, q.project_id, coalesce(a.folded, substr(q.query, p.n, 1))
            || CASE WHEN l.l = 2 THEN coalesce(b.folded, substr(q.query, p.n + 1, 1))
               ELSE '' END
        FROM queries q
        JOIN text_positions p ON p.n <= length(q.query)
        JOIN (SELECT 1 AS l UNION ALL SELECT 2) l ON p.n + l.l - 1 <= length(q.query)
        LEFT JOIN text_folds a ON a.c = substr(q.query, p.n, 1)
        LEFT JOIN text_folds b ON l.l = 2 AND b.c = substr(q.query, p.n + 1, 1)
        WHERE NOT {PRINTABLE_ASCII.format(row="q")})
    GROUP BY project_id, gram"""

# As migration 0009 made them: strings folded by lower() (ASCII only).
OLD_SQLITE_ADD = """
            INSERT INTO text_gram_counts (project_id, gram, query_count)
            SELECT new.project_id, gram, 1 FROM (
                SELECT substr(lower(new.query), n, 1) AS gram FROM text_positions
                WHERE n <= length(new.query)
                UNION SELECT substr(lower(new.query), n, 2) FROM text_positions
                WHERE n < length(new.query))
            WHERE true
            ON CONFLICT (project_id, gram) DO UPDATE SET query_count = query_count + 1;"""
OLD_SQLITE_REMOVE = """
            UPDATE text_gram_counts SET query_count = query_count - 1
            WHERE project_id = old.project_id AND gram IN (
                SELECT substr(lower(old.query), n, 1) AS gram FROM text_positions
                WHERE n <= length(old.query)
                UNION SELECT substr(lower(old.query), n, 2) FROM text_positions
                WHERE n < length(old.query));"""
OLD_SQLITE_TRIGGERS = {
    "queries_text_grams_insert": f"AFTER INSERT ON queries BEGIN {OLD_SQLITE_ADD} END",
    "queries_text_grams_delete": f"AFTER DELETE ON queries BEGIN {OLD_SQLITE_REMOVE} END",
    "queries_text_grams_update": "AFTER UPDATE OF query, project_id ON queries "
                                 "WHEN old.query IS NOT new.query "
                                 "OR old.project_id IS NOT new.project_id "
                                 f"BEGIN {OLD_SQLITE_REMOVE} {OLD_SQLITE_ADD} END",
}


def _recount(triggers: dict[str, str], backfill: str) -> None:
    for name in triggers:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.execute("DELETE FROM text_gram_counts")
    op.execute(backfill)
    for name, body in triggers.items():
        op.execute(f"CREATE TRIGGER {name} {body}")
    # Counts the service processes remember were made with the other folding.
    op.execute("UPDATE projects SET texts_version = texts_version + 1")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    folds = op.create_table(
        "text_folds",
        sa.Column("c", sa.Text, primary_key=True),
        sa.Column("folded", sa.Text, nullable=False),
        sqlite_with_rowid=False,
    )
    op.bulk_insert(folds, _trigram_folds(op.get_bind()))
    _recount(SQLITE_TRIGGERS, SQLITE_BACKFILL)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    _recount(OLD_SQLITE_TRIGGERS, SQLITE_LOWERED_BACKFILL)
    op.drop_table("text_folds")
