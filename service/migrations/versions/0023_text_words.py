"""PostgreSQL: each project's words with their queries' row keys as roaring bitmaps
(`text_words`), and `projects.words_version`, the texts version they are current for.

A text filter without a space is counted as the union of the bitmaps of the words that
contain it (service/word_index.py): at ten million queries a 5–9-letter term's first count
took 106–241 ms row by row. The words are cut at spaces from `query_texts.folded` (0006,
0011), and each word's keys are kept in pieces of 65,536 (`chunk`: the key's upper 16 bits),
so that adding rows rewrites only the pieces their keys fall in. The trigram index on `word`
finds the words that contain a term.

The index is current while `words_version` equals `texts_version`. The trigger that moves
`texts_version` on every statement that inserts queries now moves `words_version` too when
the statement's transaction has said it adds the new rows' words itself; any other change of
the texts leaves the words behind. Existing projects are indexed here and made current; a new
project starts current: empty, at texts version 0. SQLite has no such table: its trigram index
counts from the text itself.

Revision ID: 0023
Revises: 0022
"""

from alembic import op
from pyroaring import BitMap

revision = "0023"
down_revision = "0022"

# Pieces written at a time while a project is indexed.
BATCH = 5000

# 0008's statement trigger on inserts and deletes of queries, which moves texts_version: an
# insert now moves words_version too when its transaction says it adds the new rows' words
# itself (`tagdesk.words_follow`, set by service/word_index.py); any other change leaves the
# words behind, and the service then counts row by row.
BUMP_TEXTS_VERSION = """
    CREATE OR REPLACE FUNCTION tagdesk_bump_texts_version() RETURNS trigger AS $$
        BEGIN
            UPDATE projects SET texts_version = texts_version + 1,
                words_version = words_version + CASE WHEN TG_OP = 'INSERT' AND
                    current_setting('tagdesk.words_follow', true) = 'on' THEN 1 ELSE 0 END
            WHERE id IN (SELECT project_id FROM changed);
            RETURN NULL;
        END $$ LANGUAGE plpgsql"""
# 0008's text, for the way back.
BUMP_TEXTS_VERSION_BEFORE = """
    CREATE OR REPLACE FUNCTION tagdesk_bump_texts_version() RETURNS trigger AS $$
        BEGIN
            UPDATE projects SET texts_version = texts_version + 1
            WHERE id IN (SELECT project_id FROM changed);
            RETURN NULL;
        END $$ LANGUAGE plpgsql"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE projects ADD COLUMN words_version integer")
    op.execute("ALTER TABLE projects ALTER COLUMN words_version SET DEFAULT 0")
    op.execute(
        "CREATE TABLE text_words ("
        " project_number integer NOT NULL"
        "  REFERENCES projects (number) ON DELETE CASCADE,"
        ' word text COLLATE "C" NOT NULL,'
        " chunk integer NOT NULL,"
        " keys bytea NOT NULL,"
        " PRIMARY KEY (project_number, word, chunk))")
    connection = op.get_bind()
    for number, in connection.exec_driver_sql("SELECT number FROM projects ORDER BY number").all():
        _index(number)
    op.execute("UPDATE projects SET words_version = texts_version")
    op.execute(BUMP_TEXTS_VERSION)
    op.execute("CREATE INDEX ix_text_words_word ON text_words USING gin (word gin_trgm_ops)")
    op.execute("ANALYZE text_words")


def _index(number: int) -> None:
    """Every word of the project's texts, with its keys, piece by piece."""
    connection = op.get_bind()
    op.execute("SET LOCAL work_mem = '64MB'")
    pieces = connection.exec_driver_sql(
        "SELECT w.word, t.pk >> 16, array_agg(t.pk) FROM query_texts t "
        "CROSS JOIN LATERAL unnest(string_to_array(t.folded, ' ')) AS w (word) "
        "WHERE t.project_number = %(number)s AND w.word <> '' GROUP BY 1, 2",
        {"number": number}, execution_options={"stream_results": True, "max_row_buffer": BATCH})
    batch = []
    for word, chunk, keys in pieces:
        bitmap = BitMap(keys)
        bitmap.run_optimize()
        batch.append((word, chunk, bitmap.serialize()))
        if len(batch) >= BATCH:
            _write(number, batch)
    if batch:
        _write(number, batch)


def _write(number: int, batch: list) -> None:
    # The pieces are read on the migration's connection while written: a second one would
    # not see the migration's uncommitted tables.
    op.get_bind().exec_driver_sql(
        "INSERT INTO text_words (project_number, word, chunk, keys) "
        "SELECT %(number)s, n.word, n.chunk, n.keys FROM unnest(%(words)s::text[], "
        "%(chunks)s::integer[], %(keys)s::bytea[]) AS n (word, chunk, keys)",
        {"number": number, "words": [word for word, _chunk, _keys in batch],
         "chunks": [chunk for _word, chunk, _keys in batch],
         "keys": [keys for _word, _chunk, keys in batch]})
    batch.clear()


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(BUMP_TEXTS_VERSION_BEFORE)
    op.execute("DROP TABLE text_words")
    op.execute("ALTER TABLE projects DROP COLUMN words_version")
