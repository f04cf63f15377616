"""Many queries inserted at once (imports, the demo): staged, then inserted with one set-based
statement per range of rows in the order of the indexes, and the project's bitmaps brought up
to date once per range, in its transaction (docs/decisions.md, "Bulk loads").

1. **Staged.** The caller's rows go, a batch at a time (memory stays flat however long the
   input), into temporary tables of the connection: the rows with their position, and their
   tags. On disk, not in memory: PostgreSQL's temporary tables spill by themselves; SQLite's
   connection keeps its temporary storage in files for the load (service/store/db.py gives it back
   its memory after). They outlive a commit: an import stages its whole file, then inserts it
   a range at a time, a transaction each (service/imports/imports.py).
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
3. **Indexed once.** Each range's new queries and links are read back (SQLite: the keys
   above the range's first; PostgreSQL: what the statement returned) and added to the
   project's bitmaps in its transaction (service/engine/writer.py).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import datetime
from itertools import islice

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from ..store.db import RESTORE_PRAGMAS
from ..store.models import utcnow
from . import entry_rules, merging, number_updates
from .number_updates import CARRIES_ONE, COLUMN_LIST, WIDTH
from .numbers import NAMES
from .rows import numbers_tuple, query_rows
from .tables import Query
from .writer import Writer, rows_changes_in_parts

# query, language, country, tags, time and, optionally, numbers (stored values by name)
NewQuery = tuple[str, str, str, list[int], datetime | None] | tuple[
    str, str, str, list[int], datetime | None, dict[str, int] | None]
# A batch's numbers given apart from its rows: a row each, a column each of NAMES, stored
# values (-1: unknown).
Numbers = np.ndarray

# The numbers' columns of the staged rows (types by database), of the queries and of the staged
# rows as the statements below name them (q, r and o).
NUMBER_TYPES = ", ".join(f"{name} {{0}}" for name in NAMES)
OLD_NUMBERS = ", ".join(f"q.{name}" for name in NAMES)
NEW_NUMBERS = ", ".join(f"r.{name}" for name in NAMES)
ORDER_NUMBERS = ", ".join(f"o.{name}" for name in NAMES)
KEPT_NUMBERS = ", ".join(f"kept_{name}" for name in NAMES)  # a present query's, renamed
NO_NUMBERS = (None,) * len(NAMES)

# New links read back at a time.
READ_BACK = 50_000
# SQLite's page cache during a load, in KiB: one batch dirties more pages of the indexes than
# the usual 64 MiB hold, and SQLite writes the overflow to the WAL before the commit (1M rows:
# 79 → 72 s).
LOAD_CACHE_KIB = 262_144


def insert(session: Session, project_id: str, batches: Iterable[list[NewQuery]],
           update_numbers: bool = True) -> int:
    """Insert the batches of normalized rows in the session's transaction; returns how many
    rows were added."""
    load = Load.on(session.connection(), project_id)
    load.update_numbers = update_numbers
    load.open()
    for batch in batches:
        load.stage(batch)
    placed = load.order()
    added = load.insert(1, placed) if placed else 0
    load.close()  # on error, the rollback takes the temporary tables with it
    return added


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
        self.prefix: str | None = None
        self.tagged = 0  # the last range's new queries that rules tagged (entry_rules)
        self.merges_followed = False  # merged_away moved staged links (bulk_load_merged)
        # An import's file name and time, kept on each link its rows' tags make
        # (query_tags.imported_from, added_at); None: the rows come from no file (the demo).
        self.origin: tuple[str, datetime] | None = None
        # The numbers a row names replace those of the query of its key the project already
        # has (number_updates.py); how many queries they changed.
        self.update_numbers = True
        self.numbers_updated = 0
        self.carries_numbers = False  # a staged row names a number

    def _origin(self) -> tuple[str | None, datetime | None]:
        return self.origin if self.origin is not None else (None, None)

    @staticmethod
    def on(connection: Connection, project_id: str) -> Load:
        if connection.dialect.name == "sqlite":
            return _SqliteLoad(connection, project_id)
        return _PostgresLoad(connection, project_id)

    def prepare(self) -> None:
        """The connection's settings for a load; called between transactions, before the
        load's first one, when the load spans several."""

    def open(self) -> None:
        raise NotImplementedError

    def stage(self, batch: list[NewQuery], numbers: Numbers | None = None) -> None:
        """Stage the rows; their numbers are `numbers` where given (else each row's own)."""
        raise NotImplementedError

    def order(self) -> int:
        """Number the staged rows by key (the first row of a key first); how many there are."""
        raise NotImplementedError

    # What the merges merged_away followed took (made false) and made (made true) of each
    # staged row, recorded with the merge for the rows insert adds.
    MERGED = "CREATE TEMP TABLE bulk_load_merged (seq integer, operation text, made boolean)"

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

    def merged_away(self, tag_ids: set[int]) -> dict[int, int]:
        """Of these tags, gone since the rows were staged, those merged into a tag that exists
        now (through a chain of merges: engine/merging.py), each with that tag. The staged
        rows go through those merges as the project's queries did — a row's link to the
        merged tag moved to the other (a row naming both gets it once) — and what each merge
        took and made is noted (`bulk_load_merged`), so that insert records it with the
        merge for the rows it adds, and an undo gives them back the tags their line named.
        Called in each range's transaction, before insert."""
        chains = merging.merge_chains(self.connection, tag_ids)
        if not chains:
            return {}
        present = self.present_tags({chain[-1].into_id for chain in chains.values()})
        moved = {tag_id: chain for tag_id, chain in chains.items()
                 if chain[-1].into_id in present}
        steps = sorted({step for chain in moved.values() for step in chain},
                       key=lambda step: (step.merged_at, step.operation))
        run = self.connection.execute
        for step in steps:
            values = {"operation": step.operation, "tag": step.tag_id, "into": step.into_id}
            run(text("INSERT INTO bulk_load_merged (seq, operation, made) "
                     "SELECT seq, :operation, FALSE FROM bulk_load_tags WHERE tag_id = :tag"),
                values)
            run(text("INSERT INTO bulk_load_merged (seq, operation, made) "
                     "SELECT seq, :operation, TRUE FROM bulk_load_tags t WHERE tag_id = :tag "
                     "AND NOT EXISTS (SELECT 1 FROM bulk_load_tags u "
                     "WHERE u.seq = t.seq AND u.tag_id = :into)"), values)
            run(text("DELETE FROM bulk_load_tags WHERE tag_id = :tag AND seq IN "
                     "(SELECT seq FROM bulk_load_tags WHERE tag_id = :into)"), values)
            run(text("UPDATE bulk_load_tags SET tag_id = :into WHERE tag_id = :tag"), values)
        self.merges_followed |= bool(steps)
        return {tag_id: chain[-1].into_id for tag_id, chain in moved.items()}

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

    def numbers_each(self, batch: list[NewQuery], numbers: Numbers | None) -> Iterator[tuple]:
        """Each row's stored numbers in the order of NAMES (None: not named): the rows' own,
        or `numbers`' (a tuple made as each is written: none held)."""
        if numbers is None:
            yield from map(self.numbers_of, batch)
            return
        self.carries_numbers |= bool((numbers >= 0).any())
        # A list of each column (Python's integers made by numpy at once), None put where
        # unknown: a column no row knows is all None.
        columns = []
        for place in range(WIDTH):
            column = numbers[:, place]
            unknown = np.flatnonzero(column < 0).tolist()
            if len(unknown) == len(column):
                columns.append([None] * len(column))
                continue
            values = column.tolist()
            for at in unknown:
                values[at] = None
            columns.append(values)
        yield from zip(*columns, strict=True)

    def numbers_of(self, row: NewQuery) -> tuple:
        """The row's stored numbers in the order of NAMES (None: not named)."""
        numbers = numbers_tuple(row[5]) if len(row) > 5 else None
        if numbers is None:
            return NO_NUMBERS
        self.carries_numbers = True
        return numbers

    def update_present(self, writer: Writer, present: str, params) -> None:
        """Replace the numbers of the range's queries already present (after its insert,
        only when it left a row out: the statement `present` selects pk, their numbers, the
        first staged row's, the queries the insert added left out)."""
        if self.update_numbers and self.carries_numbers:
            rows = self.connection.exec_driver_sql(present, params)
            self.numbers_updated += number_updates.apply(self.connection, writer, rows)

    def indexed(self, writer: Writer, rows: Iterable[tuple], links: Iterable[tuple]) -> None:
        """Add the range's new rows (rows.COLUMNS) and links (pk, tag id) to the bitmaps,
        READ_BACK at a time."""
        writer.merge(rows_changes_in_parts(query_rows(rows)))
        links = iter(links)
        while part := list(islice(links, READ_BACK)):
            writer.added_links(part)


class _SqliteLoad(Load):
    def __init__(self, connection: Connection, project_id: str) -> None:
        super().__init__(connection, project_id)
        self.stored_time = Query.__table__.c.updated_at.type.dialect_impl(
            connection.dialect).bind_processor(connection.dialect)
        self.now = self.stored_time(utcnow())

    def prepare(self) -> None:
        # Outside a transaction the temporary storage can always move to files (inside one,
        # only until the connection first used it: a pooled one often has).
        self._settings(self.connection.connection.dbapi_connection.execute)

    def open(self) -> None:
        run = self.connection.exec_driver_sql
        self._settings(run)
        self.close()
        run("CREATE TEMP TABLE bulk_load_rows (seq INTEGER PRIMARY KEY, query TEXT, "
            f"language TEXT, country TEXT, updated_at TEXT, {NUMBER_TYPES.format('INTEGER')})")
        run("CREATE TEMP TABLE bulk_load_tags (seq INTEGER, tag_id INTEGER, "
            "PRIMARY KEY (seq, tag_id)) WITHOUT ROWID")
        run("CREATE TEMP TABLE bulk_load_order (rn INTEGER PRIMARY KEY, seq INTEGER)")
        run(self.MERGED)

    def stage(self, batch: list[NewQuery], numbers: Numbers | None = None) -> None:
        start = self.staged
        now, stored = self.now, self.stored_time
        run = self.connection.exec_driver_sql
        run(f"INSERT INTO temp.bulk_load_rows VALUES (?, ?, ?, ?, ?{', ?' * WIDTH})", [
            (seq, row[0], row[1], row[2], now if row[4] is None else stored(row[4]), *values)
            for (seq, row), values in zip(self.numbered(batch),
                                          self.numbers_each(batch, numbers), strict=True)])
        links = [(seq, tag_id) for seq, row in enumerate(batch, start + 1) for tag_id in row[3]]
        if links:
            run("INSERT OR IGNORE INTO temp.bulk_load_tags VALUES (?, ?)", links)

    def _settings(self, execute: Callable) -> None:
        """Temporary tables and sorts in files, not memory, and a larger page cache; the
        connection gets its usual settings back when it returns to the pool
        (service/store/db.py)."""
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
        # The write lock from here: the writer marks its transaction (engine_writing).
        writer = Writer(self.connection, self.project_id).begin()
        before = run("SELECT coalesce(max(pk), 0) FROM queries").scalar_one()
        offset = before - first + 1  # the row at place `rn` gets the key offset + rn
        # The range's rows are indexed by a thread while SQLite inserts them (it leaves
        # Python's lock meanwhile), as if every one went in: the row at place `rn` gets the
        # key offset + rn.
        staged = run(f"SELECT ? + o.rn, r.query, r.language, r.country, {NEW_NUMBERS} "
                     "FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r ON r.seq = o.seq "
                     "WHERE o.rn BETWEEN ? AND ?", (offset, first, last)).all()
        indexer = ThreadPoolExecutor(1, thread_name_prefix="tagdesk-load-index")
        indexing = indexer.submit(rows_changes_in_parts, query_rows(staged))
        # Its new id: the load's time prefix, version 7, the place in 32 bits and 42
        # random bits. (& | << >> bind alike in SQLite, left to right.)
        added = run(
            "INSERT INTO queries (pk, id, project_id, query, language, country, updated_at, "
            f"{COLUMN_LIST}) "
            "SELECT ? + o.rn, ? || '-7' || printf('%03x', o.rn >> 20 & 4095) || '-' "
            "|| printf('%04x', 32768 | (o.rn >> 6 & 16383)) || '-' "
            "|| printf('%012x', (o.rn & 63) << 42 | (random() & 4398046511103)), "
            f"?, r.query, r.language, r.country, r.updated_at, {NEW_NUMBERS} "
            "FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r ON r.seq = o.seq "
            "WHERE o.rn BETWEEN ? AND ? ORDER BY o.rn "
            "ON CONFLICT (project_id, query, language, country) DO NOTHING",
            (offset, self.id_prefix(), self.project_id, first, last)).rowcount
        if added < len(staged):  # a row of the range was not added: perhaps a present key's
            # The first row of each present key of the range (the row before it has another
            # key), the queries just added left out.
            self.update_present(writer, (
                f"SELECT q.pk, {OLD_NUMBERS}, {NEW_NUMBERS} "
                "FROM temp.bulk_load_order o JOIN temp.bulk_load_rows r ON r.seq = o.seq "
                "JOIN queries q ON q.project_id = ? AND q.query = r.query "
                "AND q.language = r.language AND q.country = r.country "
                f"WHERE o.rn BETWEEN ? AND ? AND q.pk <= ? AND {CARRIES_ONE} AND NOT EXISTS ("
                "SELECT 1 FROM temp.bulk_load_order p JOIN temp.bulk_load_rows s "
                "ON s.seq = p.seq WHERE p.rn = o.rn - 1 AND s.query = r.query "
                "AND s.language = r.language AND s.country = r.country)"),
                (self.project_id, first, last, before))
        if added:
            run("INSERT INTO query_tags (query_pk, tag_id, updated_at, imported_from, "
                "added_at) "
                "SELECT ? + o.rn, t.tag_id, q.updated_at, ?, ? "
                "FROM temp.bulk_load_order o JOIN temp.bulk_load_tags t ON t.seq = o.seq "
                "JOIN queries q ON q.pk = ? + o.rn WHERE o.rn BETWEEN ? AND ? "
                # A tag deleted since it was staged: left out, if asked (existing_tags_only).
                "AND (? = 0 OR EXISTS (SELECT 1 FROM tags g WHERE g.id = t.tag_id)) "
                "ORDER BY o.rn, t.tag_id",
                (offset, *self._origin(), offset, first, last, int(self.existing_tags_only)))
            changes = indexing.result()
            if added == len(staged):
                writer.merge(changes)
                self.indexed(writer, (), run(
                    "SELECT query_pk, tag_id FROM query_tags WHERE query_pk > ?", (before,)))
            else:  # some rows' keys were the project's already: the rows that went in
                self.indexed(
                    writer,
                    run(f"SELECT pk, query, language, country, {COLUMN_LIST} FROM queries "
                        "WHERE pk > ?", (before,)),
                    run("SELECT query_pk, tag_id FROM query_tags WHERE query_pk > ?",
                        (before,)))
        indexer.shutdown()
        if added and self.merges_followed:
            run("INSERT INTO tag_merge_links (operation, made, query_pk) "
                "SELECT m.operation, m.made, ? + o.rn FROM temp.bulk_load_order o "
                "JOIN temp.bulk_load_merged m ON m.seq = o.seq "
                "JOIN queries q ON q.pk = ? + o.rn WHERE o.rn BETWEEN ? AND ?",
                (offset, offset, first, last))
        self.tagged = entry_rules.apply(self.connection, self.project_id, writer) if added else 0
        writer.finish()
        return added

    def close(self) -> None:
        for table in ("bulk_load_rows", "bulk_load_tags", "bulk_load_order", "bulk_load_merged"):
            self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{table}")


class _PostgresLoad(Load):
    TABLES = ("bulk_load_rows, bulk_load_tags, bulk_load_order, bulk_load_added, "
              "bulk_load_linked, bulk_load_merged")
    # What each range added: its queries and its links, for the bitmaps to read back without
    # a join.
    ADDED = ("CREATE TEMP TABLE bulk_load_added (pk integer, query text, language text, "
             f"country text, {NUMBER_TYPES.format('bigint')})",
             "CREATE TEMP TABLE bulk_load_linked (query_pk integer, tag_id integer)")

    # The staged rows' columns, made with these types and sent in COPY's binary format by
    # them: the server reads each value as it is stored, where text is parsed (seven numbers
    # a row, and the timestamp).
    STAGED = (("seq", "int4"), ("query", "text"), ("language", "text"), ("country", "text"),
              ("updated_at", "timestamp"), *((name, "int8") for name in NAMES))

    def open(self) -> None:
        run = self.connection.exec_driver_sql
        self.close()
        columns = ", ".join(f"{name} {kind}" for name, kind in self.STAGED)
        run(f"CREATE TEMP TABLE bulk_load_rows ({columns})")
        run("CREATE TEMP TABLE bulk_load_tags (seq integer, tag_id integer)")
        for statement in (*self.ADDED, self.MERGED):
            run(statement)

    def stage(self, batch: list[NewQuery], numbers: Numbers | None = None) -> None:
        start = self.staged
        now = utcnow()
        cursor = self.connection.connection.driver_connection.cursor()
        with cursor, cursor.copy("COPY bulk_load_rows FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([kind for _name, kind in self.STAGED])
            for (seq, row), values in zip(self.numbered(batch),
                                          self.numbers_each(batch, numbers), strict=True):
                copy.write_row((seq, row[0], row[1], row[2], row[4] or now, *values))
        links = [(seq, tag_id) for seq, row in enumerate(batch, start + 1)
                 for tag_id in set(row[3])]
        if links:
            cursor = self.connection.connection.driver_connection.cursor()
            with cursor, cursor.copy("COPY bulk_load_tags FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(("int4", "int4"))
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
        helper.update_numbers, helper.carries_numbers = self.update_numbers, self.carries_numbers
        helper.close()
        run("CREATE TEMP TABLE bulk_load_order (rn bigint, seq integer, query text, "
            f"language text, country text, updated_at timestamp, "
            f"{NUMBER_TYPES.format('bigint')})")
        run("CREATE TEMP TABLE bulk_load_tags (seq integer, tag_id integer)")
        for statement in (*self.ADDED, self.MERGED):
            run(statement)
        bounds = {"firsts": [first for first, _last in ranges],
                  "lasts": [last for _first, last in ranges]}
        self._copy(helper, "SELECT o.rn, o.seq, o.query, o.language, o.country, o.updated_at, "
                   f"{ORDER_NUMBERS} FROM bulk_load_order o JOIN unnest(%(firsts)s::bigint[], "
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
        with source, target, \
                source.copy(f"COPY ({select}) TO STDOUT (FORMAT BINARY)", params) as rows, \
                target.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as into:
            for data in rows:
                into.write(data)

    def insert(self, first: int, last: int) -> int:
        """One statement: the first row of each new key of the range, in index order, with
        its tags. The ids are made as on SQLite."""
        run = self.connection.exec_driver_sql
        writer = Writer(self.connection, self.project_id).begin()
        run("TRUNCATE bulk_load_added, bulk_load_linked")
        # The first row of each present key of the range: the rows of present keys first,
        # then the first of each (sorting the range's rows up front took a writer ~1 s a range
        # of 50k, whose keys are most often all new). The project's queries are read between
        # the range's first and last texts only (the order's first column): joined with all
        # of them, each range hashed every query added before it (1M rows: ~1 s a range).
        self.update_present(writer, (
            f"SELECT pk, {KEPT_NUMBERS}, {NEW_NUMBERS} FROM ("
            f"  SELECT DISTINCT ON (o.query, o.language, o.country) q.pk, {OLD_NUMBERS}, "
            f"  {ORDER_NUMBERS} FROM bulk_load_order o JOIN queries q "
            "  ON q.project_id = %(project)s AND (q.query, q.language, q.country)"
            "  = (o.query, o.language, o.country) WHERE o.rn BETWEEN %(first)s AND %(last)s"
            "  AND q.query BETWEEN (SELECT query FROM bulk_load_order WHERE rn = %(first)s)"
            "  AND (SELECT query FROM bulk_load_order WHERE rn = %(last)s)"
            "  ORDER BY o.query, o.language, o.country, o.seq"
            f") r (pk, {KEPT_NUMBERS}, {COLUMN_LIST}) "
            f"WHERE {CARRIES_ONE} ORDER BY pk"),
            {"first": first, "last": last, "project": self.project_id})
        added = run(
            "WITH ranked AS MATERIALIZED ("
            "  SELECT DISTINCT ON (query, language, country) * FROM bulk_load_order"
            "  WHERE rn BETWEEN %(first)s AND %(last)s"
            "  ORDER BY query, language, country, seq), "
            "added AS ("
            f"  INSERT INTO queries (id, project_id, query, language, country, updated_at, "
            f"{COLUMN_LIST})"
            "  SELECT (%(prefix)s || '-7' || lpad(to_hex((rn >> 20) & 4095), 3, '0') || '-'"
            "    || lpad(to_hex(32768 | ((rn >> 6) & 16383)), 4, '0') || '-'"
            "    || lpad(to_hex(((rn & 63) << 42)"
            "    | floor(random() * 4398046511104)::bigint), 12, '0'))::uuid,"
            f"    %(project)s, query, language, country, updated_at, {COLUMN_LIST}"
            "  FROM ranked ORDER BY rn"
            "  ON CONFLICT (project_id, query, language, country) DO NOTHING"
            f"  RETURNING pk, query, language, country, {COLUMN_LIST}), "
            "linked AS ("
            "  INSERT INTO query_tags (query_pk, tag_id, updated_at, imported_from, added_at)"
            "  SELECT a.pk, t.tag_id, r.updated_at, CAST(%(imported_from)s AS varchar),"
            "    CAST(%(added_at)s AS timestamp) FROM added a"
            "  JOIN ranked r ON (r.query, r.language, r.country) = (a.query, a.language, a.country)"
            "  JOIN bulk_load_tags t ON t.seq = r.seq"
            # A tag deleted since it was staged: left out, if asked (existing_tags_only).
            "  WHERE NOT %(existing_only)s OR EXISTS (SELECT FROM tags g WHERE g.id = t.tag_id)"
            "  ORDER BY 1, 2"
            "  RETURNING query_pk, tag_id), "
            "noted AS (INSERT INTO bulk_load_linked SELECT query_pk, tag_id FROM linked) "
            f"INSERT INTO bulk_load_added (pk, query, language, country, {COLUMN_LIST}) "
            f"SELECT pk, query, language, country, {COLUMN_LIST} FROM added",
            {"prefix": self.id_prefix(), "project": self.project_id, "first": first,
             "last": last, "existing_only": self.existing_tags_only,
             **dict(zip(("imported_from", "added_at"), self._origin(), strict=True))}).rowcount
        if added:
            streamed = {"stream_results": True, "max_row_buffer": READ_BACK}
            # The rows without their numbers, which are read apart, as an array.
            self.indexed(
                writer,
                run("SELECT pk, query, language, country FROM bulk_load_added",
                    execution_options=streamed),
                run("SELECT query_pk, tag_id FROM bulk_load_linked",
                    execution_options=streamed))
            if self.carries_numbers:
                table = bigint_rows(self.connection, (
                    "SELECT pk, " + ", ".join(f"coalesce({name}, -1)" for name in NAMES)
                    + " FROM bulk_load_added"), 1 + len(NAMES))
                writer.added_numbers(table[:, 0].astype(np.uint32), table[:, 1:])
            if self.merges_followed:
                # Each new query is the first row of its key in the range (as `ranked`).
                run("WITH firsts AS ("
                    "  SELECT DISTINCT ON (query, language, country) * FROM bulk_load_order"
                    "  WHERE rn BETWEEN %(first)s AND %(last)s"
                    "  ORDER BY query, language, country, seq) "
                    "INSERT INTO tag_merge_links (operation, made, query_pk) "
                    "SELECT m.operation, m.made, a.pk FROM bulk_load_added a "
                    "JOIN firsts f ON (f.query, f.language, f.country) = "
                    "(a.query, a.language, a.country) "
                    "JOIN bulk_load_merged m ON m.seq = f.seq",
                    {"first": first, "last": last})
        self.tagged = entry_rules.apply(self.connection, self.project_id, writer) if added else 0
        writer.finish()
        return added

    def present_tags(self, tag_ids: set[int]) -> set[int]:
        """As Load.present_tags, and held (FOR KEY SHARE) until the transaction ends: a tag's
        deletion waits for the range that links to it."""
        return set(self.connection.exec_driver_sql(
            "SELECT id FROM tags WHERE id = ANY(%(ids)s) ORDER BY id FOR KEY SHARE",
            {"ids": sorted(tag_ids)}).scalars())

    def close(self) -> None:
        self.connection.exec_driver_sql(f"DROP TABLE IF EXISTS {self.TABLES}")


def bigint_rows(connection: Connection, statement: str, width: int) -> np.ndarray:
    """The rows of a statement selecting `width` integer columns, none of them null, as an
    int64 array (a row each), read as one value: every row's integers as 8 big-endian bytes
    each (int8send), one after the other. No Python object is made a value, nor a message
    of the server's a row (a million new queries' numbers read and sliced: 2.0 s of this
    process's time as rows, 0.7 s so)."""
    names = ", ".join(f"c{place}" for place in range(width))
    packed = " || ".join(f"int8send(c{place}::bigint)" for place in range(width))
    cursor = connection.connection.driver_connection.cursor()
    with cursor:
        count, data = cursor.execute(
            f"SELECT count(*), string_agg({packed}, ''::bytea) FROM ({statement}) s ({names})",
            binary=True).fetchone()
    data = data or b""
    if len(data) != count * width * 8:  # a null made its row's bytes null: left out
        raise ValueError("a row is not of the integers asked for")
    return np.frombuffer(data, ">i8").reshape(count, width).astype(np.int64)


# Texts looked up at a time (within SQLite's bound variables).
LOOKED_UP = 2_000


def present_keys(session, project_id: str, keys: list[tuple[str, str, str]]) -> set:
    """Which of the (query, language, country) keys the project holds (a check of a file)."""
    found: set = set()
    for start in range(0, len(keys), LOOKED_UP):
        texts = sorted({key[0] for key in keys[start:start + LOOKED_UP]})
        found.update(tuple(row) for row in session.execute(
            select(Query.query, Query.language, Query.country).where(
                Query.project_id == project_id, Query.query.in_(texts))))
    return found
