"""Saved views: a queries view kept by the service (an API extension) for everyone of the
organization, under a name.

The service keeps the view as an API filter with tag ids, not names, so a renamed tag stays in
the view; a view is shown as a link to the queries page whose address is built from that
filter with the tags' names of today (a tag deleted since is left out of the link).
"""

from __future__ import annotations

from dataclasses import dataclass

from queryapi import QueryFilters, SavedView, Tag

from . import apiclient, filter_fields
from .viewstate import DEFAULT_SORT, SORT_COLUMNS, QueryView

MAX_NAME = 100


@dataclass(frozen=True)
class ShownView:
    id: int
    name: str
    count: str  # "1,234"
    noun: str  # "query" or "queries": said after the number, not shown
    query_string: str


def filters_of(view: QueryView, tags: list[Tag]) -> QueryFilters:
    """The API filter a view is kept as: its tags by id."""
    return filter_fields.by_ids(view.filters, tags)


def view_of(saved: SavedView, tags: list[Tag]) -> QueryView:
    """The queries view a saved view opens."""
    sort = DEFAULT_SORT
    if saved.sort:
        field, direction = saved.sort[0]
        column = next((key for key, value in SORT_COLUMNS.items() if value == field), None)
        if column is not None:
            sort = ("-" if direction.upper() == "DESC" else "") + column
    return QueryView.of(filter_fields.by_names(saved.filters, tags), sort).showing(
        saved.columns)


def shown(saved: list[SavedView], tags: list[Tag]) -> list[ShownView]:
    return [ShownView(item.id, item.name, f"{item.total_records:,}",
                      "query" if item.total_records == 1 else "queries",
                      view_of(item, tags).query_string()) for item in saved]


def read_views(project_id: str) -> list[SavedView]:
    """The project's saved views with their counts, read afresh every time: a count kept
    would outlive the edits and jobs that change it (a job ends in the background, where
    nothing of the session can be told), and one call per page drawn is all it costs."""
    return list(apiclient.client().list_views(project_id))


def name_problem(name: str, noun: str = "view") -> str:
    """A sentence saying what is wrong with the name of a view (or a rule: `noun`), or ''.
    The service keeps both at most MAX_NAME characters."""
    if not name:
        return f"Give the {noun} a name."
    if len(name) > MAX_NAME:
        return f"A {noun}'s name can be at most {MAX_NAME} characters."
    return ""


def section_context(project, current_qs: str, message: str = "", error: str = "",
                    name: str = "", undo: dict | None = None,
                    tags: list[Tag] | None = None) -> dict:
    """What the Saved views section shows: the views as they are now (read_views)."""
    saved = read_views(project.id)
    tags = apiclient.tags(project.id) if tags is None else tags
    return {"saved_views": shown(saved, tags),
            "current_qs": current_qs, "views_message": message, "views_error": error,
            "views_name": name, "views_undo": undo}
