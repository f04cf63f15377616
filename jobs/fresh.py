"""Fresh state for a handful of known rows (an in-page edit, the undo of one), in few calls.

There is no "get queries by ids": a row's current tags come from queries/list. The caller
passes a first read that most likely holds the rows — for an in-page edit the view itself,
re-run (its rows are the ones on the screen); for an undo a filter covering the changed rows,
most recently updated first. Rows not in it (someone's edit moved them to another page, or out
of the view's filter) are then looked up one by one by their exact text, language and
country; when many moved, one more read of their languages and countries by recency comes
first.
"""

from __future__ import annotations

from collections.abc import Iterable

from queryapi import Client, Query, QueryFilters, QueryPage

from .deltas import RowKey

LOOKUP_LIMIT = 10       # single-row lookups allowed per edit
LOOKUP_PAGES = 3        # pages of 1000 read per lookup at most (very short query texts)
RECENT_LIMIT = 1000


class TooManyMoved(Exception):
    """Too many of the rows moved away to find them again within one request."""


def by_recency(client: Client, project_id: str, filters: QueryFilters) -> QueryPage:
    return client.list_queries(project_id, filters, [("updatedAt", "DESC")], 1, RECENT_LIMIT)


def _complete(page: QueryPage) -> bool:
    return page.page.current_page == 1 and page.page.total_records <= len(page.results)


def _take(results: Iterable[Query], wanted: dict[str, RowKey], found: dict[str, Query]):
    for record in results:
        if record.id in wanted and record.id not in found:
            found[record.id] = record


def lookup(client: Client, project_id: str, key: RowKey) -> Query | None:
    """The query with exactly this text, language and country (the text filter is a
    substring match, so the exact one is picked out of what it finds)."""
    filters = QueryFilters(text=key.query, languages=(key.language,), countries=(key.country,))
    for page_number in range(1, LOOKUP_PAGES + 1):
        page = client.list_queries(project_id, filters, [("id", "ASC")], page_number, 1000)
        for record in page.results:
            if record.id == key.id or key.same_query(record):
                return record
        if page.page.next_page is None or not page.results:
            return None
    return None


def find_rows(client: Client, project_id: str, keys: list[RowKey], first: QueryPage | None,
              first_covers: bool = False) -> tuple[dict[str, Query], list[RowKey]]:
    """({id: fresh record}, keys not found). `first_covers`: `first` was a read of a filter
    every one of the rows would still match if it mattered (an undo's covering filter), so
    a row missing from a complete `first` needs no lookup."""
    wanted = {key.id: key for key in keys}
    found: dict[str, Query] = {}
    if first is not None:
        _take(first.results, wanted, found)
        if first_covers and _complete(first):
            return found, [key for key in keys if key.id not in found]
    missing = [key for key in keys if key.id not in found]
    if len(missing) > LOOKUP_LIMIT:
        recent = by_recency(client, project_id, QueryFilters(
            languages=tuple(sorted({key.language for key in missing})),
            countries=tuple(sorted({key.country for key in missing}))))
        _take(recent.results, wanted, found)
        missing = [key for key in keys if key.id not in found]
        if _complete(recent):
            return found, missing
    if len(missing) > LOOKUP_LIMIT:
        raise TooManyMoved(len(missing))
    gone = []
    for key in missing:
        record = lookup(client, project_id, key)
        if record is None:
            gone.append(key)
        else:
            found[key.id] = record
    return found, gone
