"""The one write path: every change to a project's queries and their tags is made inside a
`Writer`, which brings the project's bitmaps up to date in the same transaction.

A writer writes the rows, then, last, takes the project's row (PostgreSQL: FOR NO KEY UPDATE;
SQLite has one writer at a time) to write the pieces its rows changed with the project's next
stamp. While it writes, the triggers that count writes going around the engine
(`changes_outside`, migration 0026) stand aside: on SQLite a row in `engine_writing`, which
only this transaction sees; on PostgreSQL the transaction's setting `tagdesk.engine_writing`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import islice

import numpy as np
from pyroaring import BitMap
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from ..store.models import Project
from . import kinds, pieces, suggestion_links
from .rows import QueryRow


def mark(connection: Connection, on: bool) -> None:
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql("SELECT set_config('tagdesk.engine_writing', %(v)s, true)",
                                   {"v": "on" if on else "off"})
    elif on:
        connection.exec_driver_sql("INSERT INTO engine_writing (writing) VALUES (1)")
    else:
        connection.exec_driver_sql("DELETE FROM engine_writing")


def rows_changes(rows: Iterable[QueryRow], changes: pieces.Changes) -> None:
    batch_changes(kinds.Batch.of(rows), changes)


def batch_changes(batch: kinds.Batch, changes: pieces.Changes) -> None:
    """Add the rows' keys to the bitmaps of each kind made from the rows (engine/kinds.py:
    all queries, their words, short strings, language and country)."""
    for kind in kinds.FROM_ROWS:
        for value, keys in kind.of_rows(batch).items():
            changes.add(kind.number, value, keys)


# Rows indexed at a time: memory stays flat however many a load adds.
INDEXED_AT_ONCE = 50_000


def rows_changes_in_parts(rows: Iterable[QueryRow]) -> pieces.Changes:
    changes, rows = pieces.Changes(), iter(rows)
    while batch := kinds.Batch.of(islice(rows, INDEXED_AT_ONCE)):
        batch_changes(batch, changes)
    return changes


def links_changes(links: Iterable[tuple[int, int]]) -> dict[str, BitMap]:
    by: dict[str, list[int]] = defaultdict(list)
    for pk, tag_id in links:
        by[str(tag_id)].append(pk)
    return {tag: BitMap(keys) for tag, keys in by.items()}


class Writer:
    def __init__(self, connection: Connection, project_id: str) -> None:
        self.connection = connection
        self.project_id = project_id
        self.changes = pieces.Changes()
        self.texts_changed = False
        self.dropped_tags: list[str] = []
        # Links of accepted suggestions taken away: (key, tag, confidence) whose suggestion
        # comes back (suggestion_links.given_back).
        self.given_back: list[tuple[int, int, float]] = []

    def __enter__(self) -> Writer:
        return self.begin()

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:  # else the transaction is rolled back by its owner
            self.finish()

    def begin(self) -> Writer:
        """Mark the transaction as the engine's: the triggers that count writes around the
        engine stand aside for its rows."""
        mark(self.connection, True)
        return self

    def added_rows(self, rows: Iterable[QueryRow]) -> None:
        rows_changes(rows, self.changes)
        self.texts_changed = True

    def merge(self, changes: pieces.Changes) -> None:
        """Changes to the bitmaps worked out beforehand (a bulk load's, beside its insert)."""
        for key, keys in changes.added.items():
            self.changes.added[key] |= keys
        for key, keys in changes.removed.items():
            self.changes.removed[key] |= keys
        self.texts_changed |= any(kinds.KINDS[kind].of_rows is not None
                                 for kind, _value in changes.added)

    def numbers_changed(self, before: list[QueryRow], after: list[QueryRow]) -> None:
        """Queries whose numbers changed (the same keys, in the same order): each key leaves
        the numbers' bitmaps of its old values and enters those of its new ones."""
        old = kinds.number_slices(kinds.Batch.of(before))
        new = kinds.number_slices(kinds.Batch.of(after))
        for value in old.keys() | new.keys():
            was, now = BitMap(old.get(value, ())), BitMap(new.get(value, ()))
            if now - was:
                self.changes.add(kinds.NUMBER, value, now - was)
            if was - now:
                self.changes.remove(kinds.NUMBER, value, was - now)

    def added_numbers(self, keys: np.ndarray, table: np.ndarray) -> None:
        """New queries' numbers given apart from their rows (kinds.table_slices)."""
        for value, found in kinds.table_slices(keys, table).items():
            self.changes.add(kinds.NUMBER, value, found)

    def added_links(self, links: Iterable[tuple[int, int]]) -> None:
        for tag, keys in links_changes(links).items():
            self.changes.add(kinds.TAG, tag, keys)

    def removed_links(self, links: Iterable[tuple[int, int]]) -> None:
        for tag, keys in links_changes(links).items():
            self.changes.remove(kinds.TAG, tag, keys)

    def suggestions_back(self, links: list[tuple[int, int, float]]) -> None:
        """These links (key, tag, confidence), accepted suggestions, are being taken away:
        their suggestions come back with them."""
        self.given_back += links

    def dropped_tag(self, tag_id: int) -> None:
        """The tag is gone: its pieces go, and every process reads the project again."""
        self.dropped_tags.append(str(tag_id))
        for kind in (kinds.TAG, kinds.SUGGESTED):
            self.changes.added.pop((kind, str(tag_id)), None)
            self.changes.removed.pop((kind, str(tag_id)), None)

    def finish(self) -> None:
        """Write the bitmaps' changes, last before the transaction commits. The project's row
        is taken here (PostgreSQL: FOR NO KEY UPDATE; SQLite has one writer at a time) and
        held to the commit: the engine's writes to a project stamp and change its pieces one
        after the other, in the order they commit, while their rows went in side by side (an
        import's two connections)."""
        statement = select(Project.engine_stamp).where(Project.id == self.project_id)
        if self.connection.dialect.name == "postgresql":
            statement = statement.with_for_update(key_share=True)  # FOR NO KEY UPDATE
        stamp = self.connection.execute(statement).scalar_one() + 1
        table = pieces.pieces
        # A link made takes its suggestion away (one place, whoever wrote it); after the
        # project's row, as every write takes the two.
        written = suggestion_links.links_written(self.connection, self.project_id,
                                                 self.changes)
        if self.given_back:
            suggestion_links.given_back(self.connection, self.project_id, self.given_back,
                                        self.changes)
        if self.dropped_tags:
            self.connection.execute(table.delete().where(
                table.c.project_id == self.project_id,
                table.c.kind.in_((kinds.TAG, kinds.SUGGESTED)),
                table.c.value.in_(self.dropped_tags)))
        pieces.write(self.connection, self.project_id, self.changes, stamp)
        values = {"engine_stamp": stamp}
        if written:
            values["links_written"] = Project.links_written + written
        if self.texts_changed:
            values["texts_stamp"] = stamp
        if self.dropped_tags:
            values["engine_epoch"] = Project.engine_epoch + 1
        self.connection.execute(update(Project).where(Project.id == self.project_id)
                                .values(**values))
        mark(self.connection, False)
