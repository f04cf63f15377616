"""Many queries inserted at once (imports, the demo): staged, then inserted with one set-based
statement in the order of the indexes, and everything the per-row triggers keep brought up
to date once per call with a few set-based statements (docs/decisions.md, "Bulk loads").

1. **Staged.** The caller's rows go, a batch at a time (memory stays flat however long the
   input), into temporary tables: the rows with their position, and their tags. On disk, not
   in memory: PostgreSQL's temporary tables spill by themselves; SQLite's connection keeps its
   temporary storage in files for the load (service/db.py gives it back its memory after).
2. **Inserted in index order.** One INSERT … SELECT takes the staged rows sorted by
   (text, language, country, position) and skips every key the project already has, or that
   an earlier row repeats (`ON CONFLICT (project_id, query, language, country) DO NOTHING`:
   in that order the first row of a key goes in first). The new ids count up in the same
   order: UUIDs of version 7 (RFC 9562: the time in milliseconds, then a counter of the load
   and 42 random bits), ascending with the rows. So the two indexes that start with the text
   receive their new entries in their own order, one pass through each, and those that end
   with the id append to each of their (project, code) ranges. Inserted in the file's order
   with random ids, every index took its entries at random places: a leaf page written and
   read back for nearly every row once the indexes outgrew the cache (SQLite's seed-demo of a
   million queries did not finish in 42 minutes).
3. **Derived once.** SQLite: the insert triggers of `queries` and `query_tags` stand aside
   while the load's transaction holds a row in `bulk_load` (migration 0017; no other
   connection sees it, and SQLite has one writer at a time), and the load does their work
   itself for all its rows: the FTS5 trigram index (one INSERT … SELECT), the project's query
   counter and texts version, the counters per language and country and per tag, and the
   short-term counters (`text_gram_counts`), counted here from the texts folded exactly as
   the triggers of migration 0013 fold them. PostgreSQL: its triggers fire once per
   statement, so the one INSERT fires each once for all the rows (counters, texts version,
   the `query_texts` copy, tag counters); only the short-term counters are counted here, from
   the texts as the database's own `lower()` folds them (`tagdesk.defer_text_grams`, 0009):
   counting them in SQL took most of an import's time.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import suppress
from datetime import datetime
from operator import add

from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from .models import Query, utcnow

NewQuery = tuple[str, str, str, list[int], datetime | None]  # query, language, country, tags, time

# Distinct short strings counted in memory before they are written (a bound for texts of
# many scripts; a million demo queries hold ~27,000 on PostgreSQL, ~1,100 on SQLite).
GRAM_FLUSH = 200_000
# The longest strings text_gram_counts counts (COUNTED_GRAM_LENGTH in service/search.py).
SQLITE_GRAMS = 2
POSTGRES_GRAMS = 4
# Texts read back at a time to count their short strings.
READ_BACK = 10_000
# SQLite: the settings a load changed on its connection, with the values service/db.py sets
# again when the connection returns to the pool.
RESTORE_PRAGMAS = "tagdesk_bulk_load_pragmas"
# SQLite's page cache during a load, in KiB: one batch dirties more pages of the indexes than
# the usual 64 MiB hold, and SQLite writes the overflow to the WAL before the commit (1M rows:
# 79 → 72 s).
LOAD_CACHE_KIB = 262_144


def insert(session: Session, project_id: str, batches: Iterable[list[NewQuery]]) -> int:
    """Insert the batches of normalized rows; returns how many rows were added."""
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        load: _Load = _SqliteLoad(connection, project_id)
    else:
        load = _PostgresLoad(connection, project_id)
    load.begin()
    try:
        for batch in batches:
            load.stage(batch)
        return load.insert() if load.staged else 0
    finally:
        load.end()


def grams(folded: str, longest: int) -> set[str]:
    """The distinct strings of 1 to `longest` characters of a folded text."""
    found = set(folded)
    pieces = folded
    for n in range(1, longest):
        pieces = list(map(add, pieces, folded[n:]))  # the strings of n + 1 characters
        found.update(pieces)
    return found


def time_prefix() -> str:
    """The first 48 bits of a version 7 UUID made now, as its first two groups."""
    milliseconds = f"{time.time_ns() // 1_000_000:012x}"
    return f"{milliseconds[:8]}-{milliseconds[8:]}"


class _Load:
    def __init__(self, connection: Connection, project_id: str) -> None:
        self.connection = connection
        self.project_id = project_id
        self.staged = 0
        self.grams: Counter[str] = Counter()

    def begin(self) -> None:
        raise NotImplementedError

    def stage(self, batch: list[NewQuery]) -> None:
        raise NotImplementedError

    def insert(self) -> int:
        raise NotImplementedError

    def end(self) -> None:
        raise NotImplementedError

    def numbered(self, batch: list[NewQuery]) -> Iterator[tuple[int, NewQuery]]:
        for row in batch:
            self.staged += 1
            yield self.staged, row

    def count_grams(self, folded_texts: Iterable[str], longest: int) -> None:
        update = self.grams.update
        for folded in folded_texts:
            update(grams(folded, longest))
            if len(self.grams) >= GRAM_FLUSH:
                self.write_grams()
        if self.grams:
            self.write_grams()

    def write_grams(self) -> None:
        raise NotImplementedError


class _SqliteLoad(_Load):
    def __init__(self, connection: Connection, project_id: str) -> None:
        super().__init__(connection, project_id)
        self.stored_time = Query.__table__.c.updated_at.type.dialect_impl(
            connection.dialect).bind_processor(connection.dialect)
        self.now = self.stored_time(utcnow())

    def begin(self) -> None:
        run = self.connection.exec_driver_sql
        # Temporary tables and sorts in files, not memory (allowed until this transaction
        # first uses temporary storage; a connection that already did keeps its memory).
        restore = self.connection.connection.info.setdefault(RESTORE_PRAGMAS, {})
        if run("PRAGMA temp_store").scalar_one() != 1:
            # Refused ("cannot be changed from within a transaction"): the load keeps memory.
            with suppress(OperationalError):
                run("PRAGMA temp_store = FILE")
            if run("PRAGMA temp_store").scalar_one() == 1:
                restore.setdefault("temp_store", "MEMORY")
        cache = run("PRAGMA cache_size").scalar_one()
        if cache > -LOAD_CACHE_KIB:
            restore.setdefault("cache_size", cache)
            run(f"PRAGMA cache_size = {-LOAD_CACHE_KIB}")
        for table in ("bulk_load_rows", "bulk_load_tags", "bulk_load_order"):
            run(f"DROP TABLE IF EXISTS temp.{table}")
        run("CREATE TEMP TABLE bulk_load_rows (seq INTEGER PRIMARY KEY, query TEXT, "
            "language TEXT, country TEXT, updated_at TEXT)")
        run("CREATE TEMP TABLE bulk_load_tags (seq INTEGER, tag_id INTEGER, "
            "PRIMARY KEY (seq, tag_id)) WITHOUT ROWID")
        run("CREATE TEMP TABLE bulk_load_order (rn INTEGER PRIMARY KEY, seq INTEGER)")

    def stage(self, batch: list[NewQuery]) -> None:
        start = self.staged
        now, stored = self.now, self.stored_time
        run = self.connection.exec_driver_sql
        run("INSERT INTO temp.bulk_load_rows VALUES (?, ?, ?, ?, ?)", [
            (seq, query, language, country, now if updated_at is None else stored(updated_at))
            for seq, (query, language, country, _tags, updated_at) in self.numbered(batch)])
        links = [(seq, tag_id) for seq, row in enumerate(batch, start + 1) for tag_id in row[3]]
        if links:
            run("INSERT OR IGNORE INTO temp.bulk_load_tags VALUES (?, ?)", links)

    def insert(self) -> int:
        run = self.connection.exec_driver_sql
        # The write lock from here; the insert triggers stand aside until the row goes.
        run("INSERT INTO bulk_load DEFAULT VALUES")
        try:
            base = run("SELECT coalesce(max(pk), 0) FROM queries").scalar_one()
            run("INSERT INTO temp.bulk_load_order (seq) SELECT seq FROM temp.bulk_load_rows "
                "ORDER BY query, language, country, seq")
            # The new id of the row at place `rn` of the load (counted from 1): the load's
            # time prefix, version 7, the place in 32 bits and 42 random bits. (& | << >>
            # bind alike in SQLite, left to right.)
            added = run(
                "INSERT INTO queries (pk, id, project_id, query, language, country, updated_at) "
                "SELECT ? + o.rn, ? || '-7' || printf('%03x', o.rn >> 20 & 4095) || '-' "
                "|| printf('%04x', 32768 | (o.rn >> 6 & 16383)) || '-' "
                "|| printf('%012x', (o.rn & 63) << 42 | (random() & 4398046511103)), "
                "?, r.query, r.language, r.country, r.updated_at "
                "FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r ON r.seq = o.seq "
                "WHERE true ORDER BY o.rn "
                "ON CONFLICT (project_id, query, language, country) DO NOTHING",
                (base, time_prefix(), self.project_id)).rowcount
            if added:
                self._derive(base, added)
        finally:
            run("DELETE FROM bulk_load")
        return added

    def _derive(self, base: int, added: int) -> None:
        """What the insert triggers would have done for the rows after `base`."""
        run = self.connection.exec_driver_sql
        run("INSERT INTO query_tags (query_pk, tag_id) SELECT ? + o.rn, t.tag_id "
            "FROM temp.bulk_load_order o JOIN temp.bulk_load_tags t ON t.seq = o.seq "
            "JOIN queries q ON q.pk = ? + o.rn ORDER BY o.rn, t.tag_id", (base, base))
        run("UPDATE tags SET query_count = query_count + n.c FROM ("
            "SELECT tag_id, count(*) AS c FROM query_tags WHERE query_pk > ? GROUP BY tag_id"
            ") AS n WHERE tags.id = n.tag_id", (base,))
        run("INSERT INTO queries_fts (rowid, query) SELECT pk, query FROM queries WHERE pk > ?",
            (base,))
        run("INSERT INTO language_country_counts (project_id, language, country, query_count) "
            "SELECT project_id, language, country, count(*) FROM queries WHERE pk > ? "
            "GROUP BY language, country ON CONFLICT (project_id, language, country) "
            "DO UPDATE SET query_count = query_count + excluded.query_count", (base,))
        # The triggers add one to each for every row.
        run("UPDATE projects SET query_count = query_count + ?, "
            "texts_version = texts_version + ? WHERE id = ?", (added, added, self.project_id))
        folds = _sqlite_folds(self.connection)
        texts = self.connection.exec_driver_sql(
            "SELECT query FROM queries WHERE pk > ?", (base,)).scalars()
        self.count_grams((text.lower() if text.isascii() and text.isprintable()
                          else text.translate(folds) for text in texts), SQLITE_GRAMS)

    def write_grams(self) -> None:
        self.connection.exec_driver_sql(
            "INSERT INTO text_gram_counts (project_id, gram, query_count) VALUES (?, ?, ?) "
            "ON CONFLICT (project_id, gram) "
            "DO UPDATE SET query_count = query_count + excluded.query_count",
            [(self.project_id, gram, count) for gram, count in sorted(self.grams.items())])
        self.grams.clear()

    def end(self) -> None:
        for table in ("bulk_load_rows", "bulk_load_tags", "bulk_load_order"):
            self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{table}")


def _sqlite_folds(connection: Connection) -> dict[int, str]:
    """How migration 0013's triggers fold a text that is not printable ASCII alone, character
    by character (`text_folds`), as a table for str.translate; read once per connection. (A
    text of printable ASCII alone they fold with lower(), which folds ASCII only, as
    str.lower() does such a text.)"""
    info = connection.connection.info
    if "tagdesk_bulk_folds" not in info:
        info["tagdesk_bulk_folds"] = {
            ord(character): folded for character, folded in
            connection.exec_driver_sql("SELECT c, folded FROM text_folds")}
    return info["tagdesk_bulk_folds"]


class _PostgresLoad(_Load):
    def begin(self) -> None:
        run = self.connection.exec_driver_sql
        # The insert trigger of text_gram_counts leaves this transaction's rows to the load.
        run("SELECT set_config('tagdesk.defer_text_grams', 'on', true)")
        run("CREATE TEMP TABLE IF NOT EXISTS bulk_load_rows (seq integer, query text, "
            "language text, country text, updated_at timestamp) ON COMMIT DROP")
        run("CREATE TEMP TABLE IF NOT EXISTS bulk_load_tags (seq integer, tag_id integer) "
            "ON COMMIT DROP")
        run("CREATE TEMP TABLE IF NOT EXISTS bulk_load_added (pk integer) ON COMMIT DROP")
        run("TRUNCATE bulk_load_rows, bulk_load_tags, bulk_load_added")

    def stage(self, batch: list[NewQuery]) -> None:
        start = self.staged
        now = utcnow()
        cursor = self.connection.connection.driver_connection.cursor()
        with cursor, cursor.copy("COPY bulk_load_rows FROM STDIN") as copy:
            for seq, (query, language, country, _tags, updated_at) in self.numbered(batch):
                copy.write_row((seq, query, language, country, updated_at or now))
        links = [(seq, tag_id) for seq, row in enumerate(batch, start + 1)
                 for tag_id in set(row[3])]
        if links:
            cursor = self.connection.connection.driver_connection.cursor()
            with cursor, cursor.copy("COPY bulk_load_tags FROM STDIN") as copy:
                for link in links:
                    copy.write_row(link)

    def insert(self) -> int:
        """One statement: the first row of each new key, in index order, with its tags; the
        statement's triggers count and copy them. The ids are made as on SQLite."""
        added = self.connection.exec_driver_sql(
            "WITH ranked AS MATERIALIZED ("
            "  SELECT *, row_number() OVER (ORDER BY query, language, country) AS rn FROM ("
            "    SELECT DISTINCT ON (query, language, country) * FROM bulk_load_rows"
            "    ORDER BY query, language, country, seq) AS first), "
            "added AS ("
            "  INSERT INTO queries (id, project_id, query, language, country, updated_at)"
            "  SELECT %(prefix)s || '-7' || lpad(to_hex((rn >> 20) & 4095), 3, '0') || '-'"
            "    || lpad(to_hex(32768 | ((rn >> 6) & 16383)), 4, '0') || '-'"
            "    || lpad(to_hex(((rn & 63) << 42)"
            "    | floor(random() * 4398046511104)::bigint), 12, '0'),"
            "    %(project)s, query, language, country, updated_at"
            "  FROM ranked ORDER BY rn"
            "  ON CONFLICT (project_id, query, language, country) DO NOTHING"
            "  RETURNING pk, query, language, country), "
            "linked AS ("
            "  INSERT INTO query_tags (query_pk, tag_id)"
            "  SELECT a.pk, t.tag_id FROM added a"
            "  JOIN ranked r ON (r.query, r.language, r.country) = (a.query, a.language, a.country)"
            "  JOIN bulk_load_tags t ON t.seq = r.seq ORDER BY 1, 2) "
            "INSERT INTO bulk_load_added (pk) SELECT pk FROM added",
            {"prefix": time_prefix(), "project": self.project_id}).rowcount
        if added:
            texts = self.connection.exec_driver_sql(
                "SELECT lower(q.query) FROM bulk_load_added a JOIN queries q ON q.pk = a.pk",
                execution_options={"stream_results": True, "max_row_buffer": READ_BACK})
            self.count_grams(texts.scalars(), POSTGRES_GRAMS)
        # Later inserts of this transaction count their own again.
        self.connection.exec_driver_sql(
            "SELECT set_config('tagdesk.defer_text_grams', 'off', true)")
        return added

    def write_grams(self) -> None:
        """As 0009's counting does: the project's row first (every counter writer of a project
        holds it before any counter row), counters that exist updated, new strings inserted."""
        grams = sorted(self.grams.items())
        self.grams.clear()
        run = self.connection.exec_driver_sql
        run("SELECT 1 FROM projects WHERE id = %(project)s FOR NO KEY UPDATE",
            {"project": self.project_id})
        run("WITH n AS MATERIALIZED (SELECT gram, c FROM unnest(%(grams)s::text[], "
            "%(counts)s::integer[]) AS n (gram, c)), "
            "counted AS (UPDATE text_gram_counts t SET query_count = t.query_count + n.c "
            "FROM n WHERE t.project_id = %(project)s AND t.gram = n.gram RETURNING t.gram) "
            "INSERT INTO text_gram_counts AS t (project_id, gram, query_count) "
            "SELECT %(project)s, gram, c FROM n "
            "WHERE NOT EXISTS (SELECT FROM counted WHERE counted.gram = n.gram) ORDER BY gram "
            "ON CONFLICT (project_id, gram) "
            "DO UPDATE SET query_count = t.query_count + excluded.query_count",
            {"project": self.project_id, "grams": [gram for gram, _count in grams],
             "counts": [count for _gram, count in grams]})

    def end(self) -> None:
        pass  # the temporary tables go with the transaction
