"""PostgreSQL: a bitmap index of each project's queries: the row keys of the queries that hold
each word of their texts (`text_words`), that have each language and country (`code_keys`)
and that carry each tag (`tag_keys`), as roaring bitmaps (service/bitmap_index.py).

A text filter without a space is counted as the union of the bitmaps of the words that
contain it, intersected with those of its codes and tags: at ten million queries, the first
count of a 5–9-letter term took 106–241 ms row by row, and of a text with codes and a tag
108–370 ms. Each bitmap is kept in pieces of 65,536 keys (`chunk`: the key's upper 16 bits),
so that a change rewrites only the pieces its keys fall in. The trigram index on `word` finds
the words that contain a term.

Words and codes are current while `projects.words_version` equals `texts_version`, a tag's
keys while `tags.keys_version` equals `links_version`. The triggers that move `texts_version`
(on inserts of queries, 0008) and `links_version` (on inserts and deletes of links, 0021) now
move the other version too when their transaction has said it brings the bitmaps up to date
itself (`tagdesk.keys_follow`); any other change leaves them behind, and the service then
counts row by row. Existing projects and tags are indexed here and made current; a new
project or tag starts current (empty, at version 0). SQLite has none of this: its trigram
index counts from the text itself.
"""

from alembic import op
from pyroaring import BitMap

revision = "0023"
down_revision = "0022"

# Pieces written at a time while the index is built.
BATCH = 5000
FOLLOWS = "current_setting('tagdesk.keys_follow', true) = 'on'"
# Each trigger function (0008, 0021) gets a second version moving beside the one it moves;
# changed in its own text as the database holds it.
STEPS = {
    "tagdesk_bump_texts_version": (
        "texts_version = texts_version + 1",
        f", words_version = words_version + CASE WHEN TG_OP = 'INSERT' AND {FOLLOWS} "
        "THEN 1 ELSE 0 END"),
    "tagdesk_count_tag_links": (
        "links_version = t.links_version + 1",
        f", keys_version = t.keys_version + CASE WHEN TG_OP IN ('INSERT', 'DELETE') AND "
        f"{FOLLOWS} THEN 1 ELSE 0 END"),
}


def _change_functions(undo: bool) -> None:
    connection = op.get_bind()
    for name, (step, added) in STEPS.items():
        definition = connection.exec_driver_sql(
            f"SELECT pg_get_functiondef('{name}'::regproc)").scalar_one()
        old, new = (step + added, step) if undo else (step, step + added)
        if definition.count(old) != 1 or (not undo and definition.count(step + added)):
            raise RuntimeError(f"Unexpected function: {definition}")
        connection.exec_driver_sql(definition.replace(old, new))


TABLES = {
    "text_words": ("project_number integer NOT NULL REFERENCES projects (number) "
                   'ON DELETE CASCADE, word text COLLATE "C" NOT NULL',
                   "project_number, word"),
    "code_keys": ("project_number integer NOT NULL REFERENCES projects (number) "
                  "ON DELETE CASCADE, language varchar(35) NOT NULL, "
                  "country varchar(35) NOT NULL", "project_number, language, country"),
    "tag_keys": ("tag_id integer NOT NULL REFERENCES tags (id) ON DELETE CASCADE", "tag_id"),
}
# Each table's pieces, from the rows as they are: (its key's columns and their types, the
# statement).
PIECES = {
    "text_words": ({"project_number": "integer", "word": "text"},
                   "SELECT t.project_number, w.word, t.pk >> 16, array_agg(t.pk) "
                   "FROM query_texts t "
                   "CROSS JOIN LATERAL unnest(string_to_array(t.folded, ' ')) AS w (word) "
                   "WHERE w.word <> '' GROUP BY 1, 2, 3"),
    "code_keys": ({"project_number": "integer", "language": "text", "country": "text"},
                  "SELECT project_number, language, country, pk >> 16, array_agg(pk) "
                  "FROM query_texts GROUP BY 1, 2, 3, 4"),
    "tag_keys": ({"tag_id": "integer"},
                 "SELECT tag_id, query_pk >> 16, array_agg(query_pk) FROM query_tags "
                 "GROUP BY 1, 2"),
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE projects ADD COLUMN words_version integer")
    op.execute("ALTER TABLE projects ALTER COLUMN words_version SET DEFAULT 0")
    op.execute("ALTER TABLE tags ADD COLUMN keys_version integer")
    op.execute("ALTER TABLE tags ALTER COLUMN keys_version SET DEFAULT 0")
    op.execute("SET LOCAL work_mem = '64MB'")
    for table, (columns, key) in TABLES.items():
        op.execute(f"CREATE TABLE {table} ({columns}, chunk integer NOT NULL, "
                   f"keys bytea NOT NULL, PRIMARY KEY ({key}, chunk))")
        _index(table)
    op.execute("UPDATE projects SET words_version = texts_version")
    op.execute("UPDATE tags SET keys_version = links_version")
    _change_functions(undo=False)
    op.execute("CREATE INDEX ix_text_words_word ON text_words USING gin (word gin_trgm_ops)")
    op.execute("ANALYZE text_words, code_keys, tag_keys")


def _index(table: str) -> None:
    """Every piece of the table, from the rows as they are."""
    connection = op.get_bind()
    columns, statement = PIECES[table]
    pieces = connection.exec_driver_sql(
        statement, execution_options={"stream_results": True, "max_row_buffer": 500})
    batch = []
    for *key, chunk, keys in pieces:
        bitmap = BitMap(keys)
        bitmap.run_optimize()
        batch.append((*key, chunk, bitmap.serialize()))
        if len(batch) >= BATCH:
            _write(table, columns, batch)
    if batch:
        _write(table, columns, batch)


def _write(table: str, columns: dict[str, str], batch: list) -> None:
    # Written on the migration's connection while its pieces are read: a second connection
    # would not see the tables the migration has not committed.
    values = list(zip(*batch, strict=True))
    types = [*columns.values(), "integer", "bytea"]
    arrays = ", ".join(f"%(c{n})s::{kind}[]" for n, kind in enumerate(types))
    op.get_bind().exec_driver_sql(
        f"INSERT INTO {table} ({', '.join(columns)}, chunk, keys) "
        f"SELECT * FROM unnest({arrays})",
        {f"c{n}": list(column) for n, column in enumerate(values)})
    batch.clear()


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _change_functions(undo=True)
    op.execute("DROP TABLE text_words, code_keys, tag_keys")
    op.execute("ALTER TABLE tags DROP COLUMN keys_version")
    op.execute("ALTER TABLE projects DROP COLUMN words_version")
