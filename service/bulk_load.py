"""Many queries inserted at once (imports, the demo): staged, then inserted with one set-based
statement per range of rows in the order of the indexes, and everything the per-row triggers
keep brought up to date once per range with a few set-based statements (docs/decisions.md,
"Bulk loads").

1. **Staged.** The caller's rows go, a batch at a time (memory stays flat however long the
   input), into temporary tables of the connection: the rows with their position, and their
   tags. On disk, not in memory: PostgreSQL's temporary tables spill by themselves; SQLite's
   connection keeps its temporary storage in files for the load (service/db.py gives it back
   its memory after). They outlive a commit: an import stages its whole file, then inserts it
   a range at a time, a transaction each (service/imports.py).
2. **Inserted in index order.** The staged rows are numbered once in the order of the
   project's key (text, language, country, position); each INSERT … SELECT takes a range of
   those places and skips every key the project already has, or that an earlier row repeats
   (`ON CONFLICT (project_id, query, language, country) DO NOTHING`: in that order the first
   row of a key goes in first). The new ids count up in the same order: UUIDs of version 7
   (RFC 9562: the time in milliseconds, then the place in the load and 42 random bits). So
   the two indexes that start with the text receive each range as one run of entries, beside
   the previous range's, and those that end with the id append to each of their
   (project, code) ranges. Inserted in the file's order, each transaction's entries fell all
   over the text indexes, and each commit wrote nearly every page of them again (1M rows on
   SQLite: 52–57 s with ranges of the file's order, 38–41 s with ranges of the key's).
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
   counting them in SQL took most of an import's time. Each range's queries and links are added
   to the bitmap index in its transaction (service/bitmap_index.py).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import datetime
from itertools import islice

from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from . import bitmap_index, gram_count
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
# The most rows of a range whose texts are held to be counted beside its insert; a larger
# range (a load in one transaction: the demo's) is counted as read back, READ_BACK at a time,
# so memory stays flat (10M texts held took 3 GB).
COUNT_BESIDE_ROWS = 200_000
# SQLite: the settings a load changed on its connection, with the values service/db.py sets
# again when the connection returns to the pool.
RESTORE_PRAGMAS = "tagdesk_bulk_load_pragmas"
# SQLite's page cache during a load, in KiB: one batch dirties more pages of the indexes than
# the usual 64 MiB hold, and SQLite writes the overflow to the WAL before the commit (1M rows:
# 79 → 72 s).
LOAD_CACHE_KIB = 262_144


def insert(session: Session, project_id: str, batches: Iterable[list[NewQuery]]) -> int:
    """Insert the batches of normalized rows in the session's transaction; returns how many
    rows were added."""
    load = Load.on(session.connection(), project_id)
    load.open()
    for batch in batches:
        load.stage(batch)
    placed = load.order()
    added = load.insert(1, placed) if placed else 0
    load.close()  # on error, the rollback takes the temporary tables with it
    return added


def counted(folded_texts: Iterable[str], longest: int) -> Counter[str] | None:
    """How many of the texts hold each string of 1 to `longest` characters; None once more
    than GRAM_FLUSH distinct strings are found (the load then counts the rows it read back,
    writing as it goes). Each distinct text is cut once, however many rows share it (a text
    in several countries), gram_count.AT_ONCE texts a call (service/gram_count.py)."""
    found: Counter[str] = Counter()
    for part in gram_count.counted_in_parts(Counter(folded_texts), longest):
        found.update(part)
        if len(found) > GRAM_FLUSH:
            return None
    return found


def time_prefix() -> str:
    """The first 48 bits of a version 7 UUID made now, as its first two groups."""
    milliseconds = f"{time.time_ns() // 1_000_000:012x}"
    return f"{milliseconds[:8]}-{milliseconds[8:]}"


class Load:
    """One load of rows into a project, on one connection, over one transaction or several:
    `open` and `stage` the rows (any number of batches), `order` them by key once, then
    `insert` them by places in that order (1 to the number `order` returned), a range at a
    time, each range in a transaction of its own if the caller wants. The staged rows live in
    temporary tables of the connection until `close`, across commits."""

    def __init__(self, connection: Connection, project_id: str) -> None:
        self.connection = connection
        self.project_id = project_id
        # Links to tags that no longer exist are left out instead of failing the insert (an
        # import's tags may be deleted while it runs; it reports them: present_tags).
        self.existing_tags_only = False
        self.staged = 0
        self.grams: Counter[str] = Counter()
        self.prefix: str | None = None
        # The staged rows' short strings, while they are counted as they come (SQLite).
        self.staged_grams: Counter[str] | None = None

    @staticmethod
    def on(connection: Connection, project_id: str) -> Load:
        if connection.dialect.name == "sqlite":
            return _SqliteLoad(connection, project_id)
        return _PostgresLoad(connection, project_id)

    def prepare(self) -> None:
        """The connection's settings for a load; called between transactions, before the
        load's first one, when the load spans several."""

    def count_while_staging(self, rows: int) -> None:
        """Count the rows' short strings as they are staged, for a load that will insert all
        its rows with one range if there are at most `rows` of them: when every row goes in,
        that count is the range's, and nothing is read back. SQLite only (PostgreSQL folds
        with the server's lower())."""

    def open(self) -> None:
        raise NotImplementedError

    def stage(self, batch: list[NewQuery]) -> None:
        raise NotImplementedError

    def order(self) -> int:
        """Number the staged rows by key (the first row of a key first); how many there are."""
        raise NotImplementedError

    # Connections that add ranges at once: SQLite has one writer at a time.
    writers = 1

    def ranges(self, placed: int, rows: int) -> list[tuple[int, int]]:
        """The places 1 to `placed`, cut into ranges of `rows` (the last may be shorter)."""
        return [(first, min(first + rows - 1, placed)) for first in range(1, placed + 1, rows)]

    def hand_over(self, helper: Load, ranges: list[tuple[int, int]]) -> None:
        """Copy the ordered rows of these ranges, with their tags, to another connection's
        load, which then inserts them."""
        raise NotImplementedError

    def insert(self, first: int, last: int) -> int:
        """Insert the rows at places first to last of the order; how many were added."""
        raise NotImplementedError

    def committed(self) -> None:
        """After each transaction of a load that spans several, before the next."""

    def used_tags(self) -> set[int]:
        """The tags the staged rows name."""
        return set(self.connection.exec_driver_sql(
            "SELECT DISTINCT tag_id FROM bulk_load_tags").scalars())

    def present_tags(self, tag_ids: set[int]) -> set[int]:
        """Which of these tags exist now. With `existing_tags_only`, an insert adds links to
        tags that exist only: a tag deleted since its rows were staged is left out of them."""
        return set(self.connection.exec_driver_sql(
            "SELECT id FROM tags WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(tag_ids)),)).scalars())

    def close(self) -> None:
        raise NotImplementedError

    def id_prefix(self) -> str:
        """The time part of the load's new ids, taken once: the ids follow the places of the
        order, whichever range is added first."""
        if self.prefix is None:
            self.prefix = time_prefix()
        return self.prefix

    def numbered(self, batch: list[NewQuery]) -> Iterator[tuple[int, NewQuery]]:
        for row in batch:
            self.staged += 1
            yield self.staged, row

    def add_grams(self, counting: Callable[[], Counter[str] | None] | None,
                  read_back: Callable[[], None]) -> None:
        """Add the inserted rows' short strings to the counters: as counted beside the insert
        or while staging when every row of the range was inserted (`counting`), else from the
        rows read back."""
        found = counting() if counting is not None else None
        if found is None:
            read_back()
        elif found:
            self.grams.update(found)
            self.write_grams()

    def count_grams(self, folded_texts: Iterable[str], longest: int) -> None:
        """Count the texts' short strings READ_BACK texts at a time, writing the counters
        whenever GRAM_FLUSH distinct strings are held."""
        texts = iter(folded_texts)
        while part := list(islice(texts, READ_BACK)):
            self.grams.update(gram_count.counted(Counter(part), longest))
            if len(self.grams) >= GRAM_FLUSH:
                self.write_grams()
        if self.grams:
            self.write_grams()

    def write_grams(self) -> None:
        raise NotImplementedError


class _SqliteLoad(Load):
    def __init__(self, connection: Connection, project_id: str) -> None:
        super().__init__(connection, project_id)
        self.stored_time = Query.__table__.c.updated_at.type.dialect_impl(
            connection.dialect).bind_processor(connection.dialect)
        self.now = self.stored_time(utcnow())
        self.staged_grams_up_to = 0

    def count_while_staging(self, rows: int) -> None:
        self.staged_grams = Counter()
        self.staged_grams_up_to = rows

    def prepare(self) -> None:
        # Outside a transaction the temporary storage can always move to files (inside one,
        # only until the connection first used it: a pooled one often has).
        self._settings(self.connection.connection.dbapi_connection.execute)

    def open(self) -> None:
        run = self.connection.exec_driver_sql
        self._settings(run)
        self.close()
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
        if self.staged_grams is not None:
            self._count_staged(batch)

    def _count_staged(self, batch: list[NewQuery]) -> None:
        """The batch's short strings added to the staged rows' count; the count is given up
        once the rows will need more than one range, or hold too many distinct strings."""
        if self.staged > self.staged_grams_up_to:
            self.staged_grams = None
            return
        folds = _sqlite_folds(self.connection)
        found = counted((_sqlite_fold(row[0], folds) for row in batch), SQLITE_GRAMS)
        if found is not None:
            self.staged_grams.update(found)
        if found is None or len(self.staged_grams) > GRAM_FLUSH:
            self.staged_grams = None

    def _settings(self, execute: Callable) -> None:
        """Temporary tables and sorts in files, not memory, and a larger page cache; the
        connection gets its usual settings back when it returns to the pool (service/db.py)."""
        def value(name: str) -> int:
            return execute(f"PRAGMA {name}").fetchone()[0]

        restore = self.connection.connection.info.setdefault(RESTORE_PRAGMAS, {})
        if value("temp_store") != 1:
            # Refused inside a transaction once the connection has used temporary storage
            # ("cannot be changed from within a transaction"): the load then keeps memory.
            with suppress(OperationalError, sqlite3.OperationalError):
                execute("PRAGMA temp_store = FILE")
            if value("temp_store") == 1:
                restore.setdefault("temp_store", "MEMORY")
        cache = value("cache_size")
        if cache > -LOAD_CACHE_KIB:
            restore.setdefault("cache_size", cache)
            execute(f"PRAGMA cache_size = {-LOAD_CACHE_KIB}")

    def committed(self) -> None:
        # Copy the write-ahead log back now, while no range writes, so that the next range
        # starts the log over: back to back, the ranges left the background checkpoint no
        # moment to finish, and the log grew by every range (10 GB at 7M rows), each page
        # read looking it up. FULL: a checkpoint the background thread is running at that
        # moment is waited for (PASSIVE gave up at once, and the log grew again).
        self.connection.connection.dbapi_connection.execute("PRAGMA wal_checkpoint(FULL)")

    def order(self) -> int:
        run = self.connection.exec_driver_sql
        run("DELETE FROM temp.bulk_load_order")
        return run("INSERT INTO temp.bulk_load_order (seq) SELECT seq FROM temp.bulk_load_rows "
                   "ORDER BY query, language, country, seq").rowcount

    def insert(self, first: int, last: int) -> int:
        run = self.connection.exec_driver_sql
        if self.staged_grams is not None and (first, last) == (1, self.staged):
            staged = self.staged_grams
            return self._insert(first, last, lambda: staged)
        # The range's short strings are counted by a thread while the database inserts it
        # (SQLite leaves Python's lock while it works): in this thread they took 9 of 42 s.
        if last - first + 1 > COUNT_BESIDE_ROWS:
            return self._insert(first, last, None)
        folds = _sqlite_folds(self.connection)
        texts = run("SELECT r.query FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r "
                    "ON r.seq = o.seq WHERE o.rn BETWEEN ? AND ?", (first, last)).scalars().all()
        with ThreadPoolExecutor(1, thread_name_prefix="tagdesk-load-grams") as counter:
            counting = counter.submit(counted, (_sqlite_fold(text, folds) for text in texts),
                                      SQLITE_GRAMS)
            return self._insert(first, last, counting.result)

    def _insert(self, first: int, last: int,
                counting: Callable[[], Counter[str] | None] | None) -> int:
        run = self.connection.exec_driver_sql
        # The write lock from here; the insert triggers stand aside until the row goes.
        run("INSERT INTO bulk_load DEFAULT VALUES")
        try:
            before = run("SELECT coalesce(max(pk), 0) FROM queries").scalar_one()
            offset = before - first + 1  # the row at place `rn` gets the key offset + rn
            # Its new id: the load's time prefix, version 7, the place in 32 bits and 42
            # random bits. (& | << >> bind alike in SQLite, left to right.)
            added = run(
                "INSERT INTO queries (pk, id, project_id, query, language, country, updated_at) "
                "SELECT ? + o.rn, ? || '-7' || printf('%03x', o.rn >> 20 & 4095) || '-' "
                "|| printf('%04x', 32768 | (o.rn >> 6 & 16383)) || '-' "
                "|| printf('%012x', (o.rn & 63) << 42 | (random() & 4398046511103)), "
                "?, r.query, r.language, r.country, r.updated_at "
                "FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r ON r.seq = o.seq "
                "WHERE o.rn BETWEEN ? AND ? ORDER BY o.rn "
                "ON CONFLICT (project_id, query, language, country) DO NOTHING",
                (offset, self.id_prefix(), self.project_id, first, last)).rowcount
            if added:
                self._derive(offset, before, first, last, added)
                self.add_grams(counting if added == last - first + 1 else None,
                               lambda: self._read_back_grams(before))
        finally:
            run("DELETE FROM bulk_load")
        return added

    def _derive(self, offset: int, base: int, first: int, last: int, added: int) -> None:
        """What the insert triggers would have done for the rows just inserted: those whose
        key is more than `base`."""
        run = self.connection.exec_driver_sql
        run("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
            "SELECT ? + o.rn, t.tag_id, q.updated_at "
            "FROM temp.bulk_load_order o JOIN temp.bulk_load_tags t ON t.seq = o.seq "
            "JOIN queries q ON q.pk = ? + o.rn WHERE o.rn BETWEEN ? AND ? "
            # A tag deleted since it was staged: left out, if asked (existing_tags_only).
            "AND (? = 0 OR EXISTS (SELECT 1 FROM tags g WHERE g.id = t.tag_id)) "
            "ORDER BY o.rn, t.tag_id",
            (offset, offset, first, last, int(self.existing_tags_only)))
        run("UPDATE tags SET query_count = query_count + n.c, "
            "links_version = links_version + 1 FROM ("
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

    def _read_back_grams(self, base: int) -> None:
        folds = _sqlite_folds(self.connection)
        texts = self.connection.exec_driver_sql(
            "SELECT query FROM queries WHERE pk > ?", (base,)).scalars()
        self.count_grams((_sqlite_fold(text, folds) for text in texts), SQLITE_GRAMS)

    def write_grams(self) -> None:
        self.connection.exec_driver_sql(
            "INSERT INTO text_gram_counts (project_id, gram, query_count) VALUES (?, ?, ?) "
            "ON CONFLICT (project_id, gram) "
            "DO UPDATE SET query_count = query_count + excluded.query_count",
            [(self.project_id, gram, count) for gram, count in sorted(self.grams.items())])
        self.grams.clear()

    def close(self) -> None:
        for table in ("bulk_load_rows", "bulk_load_tags", "bulk_load_order"):
            self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{table}")


def _sqlite_fold(text: str, folds: dict[int, str]) -> str:
    return text.lower() if text.isascii() and text.isprintable() else text.translate(folds)


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


class _PostgresLoad(Load):
    TABLES = "bulk_load_rows, bulk_load_tags, bulk_load_order, bulk_load_added, bulk_load_linked"
    # What each range added: its queries (with their lower-cased text) and its links, for the
    # short-term counters and the bitmap index (service/bitmap_index.py) to read without a
    # join (50,000 probes of query_texts took 150–190 ms a range).
    ADDED = ("CREATE TEMP TABLE bulk_load_added (pk integer, language text, country text, "
             "folded text)",
             "CREATE TEMP TABLE bulk_load_linked (query_pk integer, tag_id integer)")

    def open(self) -> None:
        run = self.connection.exec_driver_sql
        self.close()
        run("CREATE TEMP TABLE bulk_load_rows (seq integer, query text, language text, "
            "country text, updated_at timestamp)")
        run("CREATE TEMP TABLE bulk_load_tags (seq integer, tag_id integer)")
        for statement in self.ADDED:
            run(statement)

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

    def order(self) -> int:
        run = self.connection.exec_driver_sql
        run("DROP TABLE IF EXISTS bulk_load_order")
        placed = run("CREATE TEMP TABLE bulk_load_order AS SELECT row_number() OVER ("
                     "ORDER BY query, language, country, seq) AS rn, * FROM bulk_load_rows "
                     "ORDER BY rn").rowcount
        run("CREATE INDEX ON bulk_load_order (rn)")
        run("CREATE INDEX ON bulk_load_tags (seq)")
        run("ANALYZE bulk_load_order, bulk_load_tags")
        return placed

    # Two connections add ranges at once: one server process inserting a range keeps one core
    # busy, and this process little (1M rows: 133.8 → 110.0 s, run one after the other).
    writers = 2

    def ranges(self, placed: int, rows: int) -> list[tuple[int, int]]:
        """As Load.ranges, each range ending where a key's rows end: ranges added at once must
        not race for a key, whose first row in the file is the one added."""
        run = self.connection.exec_driver_sql
        ranges, first = [], 1
        while first <= placed:
            last = min(first + rows - 1, placed)
            if last < placed:
                last = run(
                    "SELECT coalesce((SELECT n.rn - 1 FROM bulk_load_order n, ("
                    "  SELECT query, language, country FROM bulk_load_order WHERE rn = %(last)s"
                    ") k WHERE n.rn > %(last)s AND (n.query, n.language, n.country)"
                    " <> (k.query, k.language, k.country) ORDER BY n.rn LIMIT 1), %(placed)s)",
                    {"last": last, "placed": placed}).scalar_one()
            ranges.append((first, last))
            first = last + 1
        return ranges

    def hand_over(self, helper: Load, ranges: list[tuple[int, int]]) -> None:
        run = helper.connection.exec_driver_sql
        helper.prefix = self.id_prefix()
        helper.close()
        run("CREATE TEMP TABLE bulk_load_order (rn bigint, seq integer, query text, "
            "language text, country text, updated_at timestamp)")
        run("CREATE TEMP TABLE bulk_load_tags (seq integer, tag_id integer)")
        for statement in self.ADDED:
            run(statement)
        bounds = {"firsts": [first for first, _last in ranges],
                  "lasts": [last for _first, last in ranges]}
        self._copy(helper, "SELECT o.rn, o.seq, o.query, o.language, o.country, o.updated_at "
                   "FROM bulk_load_order o JOIN unnest(%(firsts)s::bigint[], "
                   "%(lasts)s::bigint[]) AS r (first, last) ON o.rn BETWEEN r.first AND r.last",
                   bounds, "bulk_load_order")
        self._copy(helper, "SELECT t.seq, t.tag_id FROM bulk_load_tags t "
                   "JOIN bulk_load_order o ON o.seq = t.seq JOIN unnest(%(firsts)s::bigint[], "
                   "%(lasts)s::bigint[]) AS r (first, last) ON o.rn BETWEEN r.first AND r.last",
                   bounds, "bulk_load_tags")
        run("CREATE INDEX ON bulk_load_order (rn)")
        run("CREATE INDEX ON bulk_load_tags (seq)")
        run("ANALYZE bulk_load_order, bulk_load_tags")

    def _copy(self, helper: Load, select: str, params: dict, table: str) -> None:
        source = self.connection.connection.driver_connection.cursor()
        target = helper.connection.connection.driver_connection.cursor()
        with source, target, source.copy(f"COPY ({select}) TO STDOUT", params) as rows, \
                target.copy(f"COPY {table} FROM STDIN") as into:
            for data in rows:
                into.write(data)

    def insert(self, first: int, last: int) -> int:
        """One statement: the first row of each new key of the range, in index order, with
        its tags; the statement's triggers count and copy them. The ids are made as on
        SQLite."""
        run = self.connection.exec_driver_sql
        # The range's short strings are counted by a thread while the server inserts it.
        if last - first + 1 > COUNT_BESIDE_ROWS:
            return self._insert(first, last, None)
        texts = run("SELECT lower(query) FROM bulk_load_order WHERE rn BETWEEN %(first)s AND "
                    "%(last)s", {"first": first, "last": last}).scalars().all()
        with ThreadPoolExecutor(1, thread_name_prefix="tagdesk-load-grams") as counter:
            counting = counter.submit(counted, texts, POSTGRES_GRAMS)
            return self._insert(first, last, counting.result)

    def _insert(self, first: int, last: int,
                counting: Callable[[], Counter[str] | None] | None) -> int:
        run = self.connection.exec_driver_sql
        # The insert trigger of text_gram_counts leaves this transaction's rows to the load.
        run("SELECT set_config('tagdesk.defer_text_grams', 'on', true)")
        bitmap_index.follow(self.connection)
        run("TRUNCATE bulk_load_added, bulk_load_linked")
        added = run(
            "WITH ranked AS MATERIALIZED ("
            "  SELECT DISTINCT ON (query, language, country) * FROM bulk_load_order"
            "  WHERE rn BETWEEN %(first)s AND %(last)s"
            "  ORDER BY query, language, country, seq), "
            "added AS ("
            "  INSERT INTO queries (id, project_id, query, language, country, updated_at)"
            "  SELECT (%(prefix)s || '-7' || lpad(to_hex((rn >> 20) & 4095), 3, '0') || '-'"
            "    || lpad(to_hex(32768 | ((rn >> 6) & 16383)), 4, '0') || '-'"
            "    || lpad(to_hex(((rn & 63) << 42)"
            "    | floor(random() * 4398046511104)::bigint), 12, '0'))::uuid,"
            "    %(project)s, query, language, country, updated_at"
            "  FROM ranked ORDER BY rn"
            "  ON CONFLICT (project_id, query, language, country) DO NOTHING"
            "  RETURNING pk, query, language, country), "
            "linked AS ("
            "  INSERT INTO query_tags (query_pk, tag_id, updated_at)"
            "  SELECT a.pk, t.tag_id, r.updated_at FROM added a"
            "  JOIN ranked r ON (r.query, r.language, r.country) = (a.query, a.language, a.country)"
            "  JOIN bulk_load_tags t ON t.seq = r.seq"
            # A tag deleted since it was staged: left out, if asked (existing_tags_only).
            "  WHERE NOT %(existing_only)s OR EXISTS (SELECT FROM tags g WHERE g.id = t.tag_id)"
            "  ORDER BY 1, 2"
            "  RETURNING query_pk, tag_id), "
            "noted AS (INSERT INTO bulk_load_linked SELECT query_pk, tag_id FROM linked) "
            "INSERT INTO bulk_load_added (pk, language, country, folded) "
            "SELECT pk, language, country, lower(query) FROM added",
            {"prefix": self.id_prefix(), "project": self.project_id, "first": first,
             "last": last, "existing_only": self.existing_tags_only}).rowcount
        if added:
            self.add_grams(counting if added == last - first + 1 else None, self._read_back_grams)
            bitmap_index.add_loaded(self.connection, self.project_id)
        # Later inserts of this transaction count their own again.
        run("SELECT set_config('tagdesk.defer_text_grams', 'off', true)")
        bitmap_index.follow(self.connection, False)
        return added

    def present_tags(self, tag_ids: set[int]) -> set[int]:
        """As Load.present_tags, and held (FOR KEY SHARE) until the transaction ends: a tag's
        deletion waits for the range that links to it."""
        return set(self.connection.exec_driver_sql(
            "SELECT id FROM tags WHERE id = ANY(%(ids)s) ORDER BY id FOR KEY SHARE",
            {"ids": sorted(tag_ids)}).scalars())

    def _read_back_grams(self) -> None:
        texts = self.connection.exec_driver_sql(
            "SELECT folded FROM bulk_load_added",
            execution_options={"stream_results": True, "max_row_buffer": READ_BACK})
        self.count_grams(texts.scalars(), POSTGRES_GRAMS)

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

    def close(self) -> None:
        self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS {self.TABLES}")
