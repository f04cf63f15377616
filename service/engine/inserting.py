"""A few queries inserted at once (the command line, tests); from BULK_ROWS rows on, a bulk
load (service/engine/bulk_load.py)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain, islice

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ..store.models import new_uuid, utcnow
from . import bulk_load, entry_rules, number_updates
from .numbers import NAMES
from .rows import QueryRow, numbers_tuple
from .tables import Query, query_tags
from .writer import Writer

NewQuery = bulk_load.NewQuery  # query, language, country, tags, time[, numbers]

# From this many rows a call is a bulk load; fewer go row by row.
BULK_ROWS = 500


def insert_queries(session: Session, project_id: str, rows: Iterable[NewQuery],
                   batch_size: int = 5000, update_numbers: bool = True) -> int:
    """Insert normalized rows in batches (at most `batch_size` rows held at a time); a key the
    project already has, or that an earlier row repeats, is skipped — but with
    `update_numbers` the numbers the first row of a present key names replace its query's
    (number_updates.py). Returns how many were added."""
    iterator = iter(rows)
    batches = iter(lambda: list(islice(iterator, batch_size)), [])
    first = next(batches, [])
    if len(first) >= min(BULK_ROWS, batch_size):
        return bulk_load.insert(session, project_id, chain([first], batches),
                                update_numbers=update_numbers)
    count = 0
    with Writer(session.connection(), project_id) as writer:
        for batch in chain([first], batches):
            count += _insert_batch(session, project_id, batch, writer, update_numbers)
        entry_rules.apply(session.connection(), project_id, writer)  # rules tag what entered
    return count


def _insert_batch(session: Session, project_id: str, batch: list[NewQuery],
                  writer: Writer, update_numbers: bool = True) -> int:
    unique: dict[tuple[str, str, str], NewQuery] = {}
    for row in batch:
        unique.setdefault(row[:3], row)
    table = Query.__table__
    existing = {tuple(row[1:4]): row for row in session.execute(
        select(table.c.pk, table.c.query, table.c.language, table.c.country,
               *table.c[NAMES]).where(
            table.c.project_id == project_id, table.c.query.in_({key[0] for key in unique})))}
    if update_numbers:
        number_updates.apply(session.connection(), writer, [
            (found[0], *found[4:], *numbers)
            for key, row in unique.items()
            if (found := existing.get(key)) and (numbers := numbers_tuple(_numbers(row)))])
    fresh = [row for key, row in unique.items() if key not in existing]
    if not fresh:
        return 0
    ids = [new_uuid() for _ in fresh]
    now = utcnow()
    _insert_rows(session, table, [
        {"id": query_id, "project_id": project_id, "query": row[0], "language": row[1],
         "country": row[2], "updated_at": row[4] or now,
         **dict(zip(NAMES, numbers_tuple(_numbers(row)) or (None,) * len(NAMES), strict=True))}
        for query_id, row in zip(ids, fresh, strict=True)
    ])
    pk_by_id = {query_id: pk for query_id, pk in session.execute(
        select(Query.id, Query.pk).where(Query.id.in_(ids)))}
    writer.added_rows(QueryRow(pk_by_id[query_id], row[0], row[1], row[2],
                               numbers_tuple(_numbers(row)))
                      for query_id, row in zip(ids, fresh, strict=True))
    links = [{"query_pk": pk_by_id[query_id], "tag_id": tag_id, "updated_at": row[4] or now}
             for query_id, row in zip(ids, fresh, strict=True) for tag_id in set(row[3])]
    if links:
        _insert_rows(session, query_tags, links)
        writer.added_links((link["query_pk"], link["tag_id"]) for link in links)
    return len(fresh)


def _numbers(row: NewQuery) -> dict[str, int] | None:
    return row[5] if len(row) > 5 else None


def _insert_rows(session: Session, table, rows: list[dict], per_statement: int = 1000) -> None:
    """On PostgreSQL, multi-row INSERT statements (the driver would otherwise send one
    statement per row); SQLite's executemany is already the fast path there."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(insert(table), rows)
        return
    for start in range(0, len(rows), per_statement):
        session.execute(insert(table).values(rows[start:start + per_statement]))
