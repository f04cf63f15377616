"""The numbers of a project's queries on the queries page: which ones the project has (some
query knows it), which a view shows as columns (the person's choice, `cols=`; else up to four
the project has, volume, clicks, impressions and position first), each row's cells and the
words of a sort by one. (The Numbers filter and its picker are filter_fields' Numbers.)

All of it only where the service keeps numbers (`Capabilities.numbers`): elsewhere the
project has none, and the page shows none of these controls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from queryapi import NUMBER_NAMES, RateLimited, TransportError, Unavailable

from . import apiclient, facets
from .figures import LABELS
from .filter_fields import said
from .viewstate import QueryView

DEFAULT_ORDER = ("volume", "clicks", "impressions", "position")
MAX_DEFAULT = 4


@dataclass(frozen=True)
class ProjectNumbers:
    names: tuple[str, ...]  # the numbers some query of the project knows, in the API's order
    known: Mapping[str, int]  # how many queries know each
    currency: str | None  # of CPC

    @property
    def default_columns(self) -> tuple[str, ...]:
        return tuple(name for name in DEFAULT_ORDER if name in self.names)[:MAX_DEFAULT]


NONE = ProjectNumbers((), {}, None)


def project_numbers(project_id: str) -> ProjectNumbers:
    """The numbers the project has (one facets call, cached with the session's reads), or
    none where the service keeps no numbers, or is too busy to say just now (the rows are
    shown all the same, without their numbers)."""
    if not apiclient.capabilities().numbers:
        return NONE
    try:
        found = facets.project_facets(project_id)
    except (RateLimited, Unavailable, TransportError):
        return NONE
    names = tuple(name for name in NUMBER_NAMES if found.metric_counts.get(name))
    return ProjectNumbers(names, found.metric_counts, found.currency)


def shown_columns(view: QueryView, numbers: ProjectNumbers) -> tuple[str, ...]:
    """The number columns of the view: the address's choice (of the numbers the service
    keeps), else the project's default."""
    if view.columns is None:
        return numbers.default_columns
    offered = apiclient.capabilities().numbers
    return tuple(name for name in view.columns if name in offered)


def canonical(view: QueryView, numbers: ProjectNumbers) -> QueryView:
    """The view with `cols` left out of its address where it chooses the default."""
    if view.columns is not None and view.columns == numbers.default_columns:
        return view.showing(None)
    return view


def column_choices(view: QueryView, numbers: ProjectNumbers,
                   columns: tuple[str, ...]) -> list[dict]:
    """The Columns choice: for each number the project has, whether it is shown and the
    address of the view with it shown or hidden."""
    choices = []
    for name in numbers.names:
        shown = name in columns
        chosen = tuple(n for n in columns if n != name) if shown else (*columns, name)
        choices.append({"name": name, "label": LABELS[name], "shown": shown,
                        "qs": canonical(view.showing(chosen), numbers).query_string()})
    return choices


def sort_words(name: str, descending: bool) -> str:
    """'biggest clicks first'; position: 'best position first' (the least is the best)."""
    if name == "position":
        return "worst position first" if descending else "best position first"
    return f"{'biggest' if descending else 'smallest'} {said(name)} first"

