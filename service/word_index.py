"""PostgreSQL: each project's words, each with the row keys of the queries whose text holds
it, as compressed bitmaps (migration 0023), so that a text filter is counted exactly without
visiting its matches.

A term without a space lies within one space-separated word of a text that contains it, so
the texts that contain the term are exactly those holding a word that contains it: the union
of those words' bitmaps. Its size is the count, and when it is small its keys are the page's
rows. Counting row by row visits every candidate the trigram index gives (`running` at ten
million queries: 352,832 matches, 438 ms); a union of roaring bitmaps counts them in about a
millisecond.

The words are cut from `query_texts.folded`, the text lower-cased by the database itself, and
matched with the same LIKE as the row-by-row count (service/search.py), so both agree on every
character. Each word's keys are kept in pieces of 65,536 keys (`chunk` is the key's upper 16
bits, a roaring bitmap's own unit): a load adds to the pieces its new keys fall in, and never
rewrites a word's whole bitmap.

The index is current while `projects.words_version` equals `texts_version`. The statement
trigger that moves `texts_version` whenever queries are inserted moves `words_version` with it
when the transaction has said it adds the new rows' words itself (`follow`); both paths that
insert queries (service/bulk_load.py, and service/admin.py for a few rows) say so and then add
them before they commit. Any other change of the texts (a hand-written INSERT or DELETE, say)
leaves the index behind, and the filter is then counted row by row: never a wrong count.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyroaring import BitMap
from sqlalchemy.engine import Connection

# The upper bits of a row key name its piece; the lower 16 are a roaring container's.
CHUNK_SHIFT = 16
# Rows written to text_words at a time.
WRITE_BATCH = 5000
# A term must be at least this long to be counted from the words: shorter ones are counted
# ahead (text_gram_counts) when alone, and match too many words to be worth a union.
SHORTEST_TERM = 3


def usable(term: str) -> bool:
    """Whether the words can count `term`: no space in it, and long enough."""
    return len(term) >= SHORTEST_TERM and " " not in term


# The words of the rows a transaction inserted, by piece; `{keys}` names them (column `pk`).
_ADDED_WORDS = """
    SELECT w.word, t.pk >> 16, array_agg(t.pk)
    FROM {keys} JOIN query_texts t ON t.pk = a.pk
    CROSS JOIN LATERAL unnest(string_to_array(t.folded, ' ')) AS w (word)
    WHERE w.word <> ''
    GROUP BY 1, 2"""


def follow(connection: Connection, on: bool = True) -> None:
    """Say that this transaction adds the words of the queries it inserts from now on (`on`),
    or no longer: the insert trigger then moves `words_version` with `texts_version`."""
    connection.exec_driver_sql("SELECT set_config('tagdesk.words_follow', %(value)s, true)",
                               {"value": "on" if on else "off"})


def add_loaded(connection: Connection, project_id: str) -> None:
    """Add the words of the rows a bulk load's statement just inserted: their keys are in
    the temporary table `bulk_load_added`."""
    _add(connection, project_id, "bulk_load_added a", {})


def add_inserted(connection: Connection, project_id: str, keys: list[int]) -> None:
    """Add the words of the queries just inserted with these row keys."""
    _add(connection, project_id, "unnest(%(keys)s::integer[]) AS a (pk)", {"keys": keys})


def _add(connection: Connection, project_id: str, keys: str, parameters: dict) -> None:
    """The pieces the new keys fall in are read, merged with them and written back."""
    run = connection.exec_driver_sql
    # The insert's trigger already holds the project's row until commit; taken here as well,
    # so that no two transactions merge into the same pieces at once whatever inserted.
    number = run("SELECT number FROM projects WHERE id = %(project)s FOR NO KEY UPDATE",
                 {"project": project_id}).scalar_one()
    added = {(word, chunk): BitMap(row_keys) for word, chunk, row_keys
             in run(_ADDED_WORDS.format(keys=keys), parameters)}
    if not added:
        return
    for word, chunk, stored in run(
            "SELECT w.word, w.chunk, w.keys FROM text_words w "
            "JOIN unnest(%(words)s::text[], %(chunks)s::integer[]) AS n (word, chunk) "
            "ON (w.word, w.chunk) = (n.word, n.chunk) WHERE w.project_number = %(number)s",
            {"words": [word for word, _chunk in added],
             "chunks": [chunk for _word, chunk in added], "number": number}):
        added[word, chunk] |= BitMap.deserialize(stored)
    _write(connection, number, ((word, chunk, keys) for (word, chunk), keys
                                in sorted(added.items())))


def _write(connection: Connection, number: int,
           pieces: Iterable[tuple[str, int, BitMap]]) -> None:
    batch: list[tuple[str, int, bytes]] = []

    def flush() -> None:
        connection.exec_driver_sql(
            "INSERT INTO text_words AS w (project_number, word, chunk, keys) "
            "SELECT %(number)s, n.word, n.chunk, n.keys FROM unnest("
            "%(words)s::text[], %(chunks)s::integer[], %(keys)s::bytea[]) AS n (word, chunk, keys) "
            "ON CONFLICT (project_number, word, chunk) DO UPDATE SET keys = excluded.keys",
            {"number": number, "words": [word for word, _c, _k in batch],
             "chunks": [chunk for _w, chunk, _k in batch],
             "keys": [keys for _w, _c, keys in batch]})
        batch.clear()

    for word, chunk, keys in pieces:
        keys.run_optimize()
        batch.append((word, chunk, keys.serialize()))
        if len(batch) >= WRITE_BATCH:
            flush()
    if batch:
        flush()


def matches(connection: Connection, project_id: str,
            term: str) -> tuple[int, int, BitMap | None]:
    """(the project's texts version, its query count, the row keys of its queries whose text
    contains `term`), read in one statement; the keys are None when the index is not
    current."""
    escaped = term.replace("/", "//").replace("%", "/%").replace("_", "/_")
    rows = connection.exec_driver_sql(
        "WITH p AS (SELECT number, texts_version, query_count,"
        "           words_version = texts_version AS current FROM projects WHERE id = %(project)s) "
        "SELECT p.texts_version, p.query_count, p.current, w.keys FROM p "
        "LEFT JOIN text_words w ON p.current AND w.project_number = p.number "
        "AND w.word LIKE lower(%(pattern)s) ESCAPE '/'",
        {"project": project_id, "pattern": f"%{escaped}%"}).all()
    version, total, current, _keys = rows[0]
    if not current:
        return version, total, None
    found = BitMap()
    for *_project, keys in rows:
        if keys is not None:
            found |= BitMap.deserialize(keys)
    return version, total, found
