"""CSV of a filtered view: query, language, country, tag names, updated — and, where the
service keeps numbers, one column for each (clicks, impressions, …: the API's values, empty
where unknown) — one page at a time.

Used by the streamed download (small views) and by export jobs (large ones, written to a file
in the instance folder). Rows are read with a BACKGROUND client, so a long export paces itself
to the rate limits, and only one page is held at a time: memory stays flat however many rows.

Order: the view's sort when it is by query, language, country or a number — columns tagging
never changes, so no row moves between pages while the export runs; a view sorted by "updated" is
exported by query text instead (tag edits during a long export would otherwise move rows from
page to page, giving duplicates and gaps).

Spreadsheet safety (weblib/spreadsheet_cells.py, the rule the settings area's file of rejected
rows follows too): every cell is guarded with `guard_cell` — an apostrophe before a formula at
its start and after every comma, semicolon, tab or line break in it (a spreadsheet whose list
separator is ";" reads `semi;=1+1;` as three cells) — and written by `csv_line`, which quotes
every cell holding any of those separators. The import takes exactly those apostrophes off
again (`unguard_cell`), so an export imported again adds nothing.

Tag names are joined by `join_tag_names` (weblib/tag_lists.py), which quotes a name holding a
separator the import splits at: every name reads back as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from queryapi import ApiError, Client, QueryFilters
from weblib.spreadsheet_cells import csv_line, guard_cell
from weblib.tag_lists import join_tag_names

HEADER = ("query", "language", "country", "tags", "updated")
PAGE = 1000
STABLE_FIELDS = {"query", "language", "country", "clicks", "impressions", "ctr", "position",
                 "volume", "cpc", "difficulty"}


def export_sort(sort: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The view's sort if rows cannot move under it, else query text A to Z."""
    if sort and all(field in STABLE_FIELDS for field, _ in sort):
        return list(sort)
    return [("query", "ASC")]


def numbers_offered(client: Client) -> tuple[str, ...]:
    """The numbers an export has columns for: those the service keeps (none when it cannot
    say)."""
    try:
        return client.capabilities().numbers
    except ApiError:
        return ()


def number_cell(value: int | float | None) -> str:
    """A number as the API gives it (12345, 0.035), '' when unknown."""
    if value is None:
        return ""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def csv_pages(client: Client, project_id: str, filters: QueryFilters,
              sort: list[tuple[str, str]], tag_names: dict[int, str],
              on_page: Callable[[int, int], None] | None = None,
              should_stop: Callable[[], bool] | None = None,
              numbers: tuple[str, ...] = ()) -> Iterator[str]:
    """The header, then one string of CSV lines per page of results. `on_page(done, total)`
    after each page; `should_stop()` is asked before each read. `numbers`: a column each."""
    yield csv_line((*HEADER, *numbers))
    include = ("metrics",) if numbers else ()
    page_number: int | None = 1
    done = 0
    while page_number is not None:
        if should_stop is not None and should_stop():
            return
        page = client.list_queries(project_id, filters, sort, page_number, PAGE, include)
        lines = []
        for record in page.results:
            names = join_tag_names(tag_names.get(tag_id, f"Tag {tag_id}")
                                   for tag_id in record.tags)
            updated = record.updated_at.isoformat(timespec="milliseconds").replace(
                "+00:00", "Z")
            # Codes are any text the service accepted ("=cmd|…" included), like query texts.
            lines.append(csv_line((guard_cell(record.query), guard_cell(record.language),
                                   guard_cell(record.country), guard_cell(names), updated,
                                   *(number_cell(record.metrics.get(name))
                                     for name in numbers))))
        done += len(page.results)
        chunk = "".join(lines)
        if on_page is not None:
            on_page(done, max(page.page.total_records, done))
        if chunk:
            yield chunk
        page_number = page.page.following(len(page.results))
