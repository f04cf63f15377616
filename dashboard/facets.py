"""A view's counts: how many queries each picker option would show, and the project's progress.

One `queries/facets` call per view (an extension of the API, feature-detected): each option's
number is what the view would show with that option chosen, as the API counts it (with All of
and Exclude too), painted as it comes.
The page asks for them after its rows are painted (static/counts.js), never delaying the rows.

Progress ("1,731 of 5,000 queries untagged", and where the service keeps numbers "· 38 % of
clicks": the untagged queries' share of the project's clicks) is the facets of the unfiltered
project, with sums: the view's own call when the view has no filter, else read once and kept
with the session's other cached lists (apiclient: an edit's `invalidate` drops it; a page
refreshed after an edit asks afresh).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import render_template

from queryapi import Facets, QueryFilters, Tag

from . import apiclient, filter_fields
from .figures import share_percent
from .viewstate import QueryView


@dataclass(frozen=True)
class Progress:
    total: int
    untagged: int
    # By value (where the service keeps numbers): the number the share is of ("clicks", or
    # "volume" where no click is counted) and the untagged queries' whole percent of it.
    share: tuple[str, int] | None = None
    # The number "Biggest first" sorts the untagged by ("volume", else "clicks"), or None.
    biggest: str | None = None

    @property
    def percent(self) -> int:
        """Whole percent, rounded down except that any untagged query keeps it above 0 and
        any tagged one below 100 (a bar must never claim done, nor nothing, wrongly)."""
        if not self.total:
            return 0
        percent = self.untagged * 100 // self.total
        return max(percent, 1) if self.untagged else percent

    def sentence(self) -> str:
        if not self.total:
            return "No queries yet."
        noun = "query" if self.total == 1 else "queries"
        by_value = f" · {self.share[1]}\u00a0% of {self.share[0]}" if self.share else ""
        return (f"{self.untagged:,} of {self.total:,} {noun} untagged ({self.percent}\u00a0%)"
                + by_value)

    def as_json(self, link: str, biggest_link: str | None = None) -> dict:
        return {"total": self.total, "untagged": self.untagged, "percent": self.percent,
                "text": self.sentence(),
                "html": render_template("partials/progress.html", progress=self, link=link,
                                        biggest_link=biggest_link)}


# The numbers progress by value may be of, in order of preference (their sums are asked).
BY_VALUE = ("clicks", "volume")


def _value_sums() -> tuple[str, ...]:
    offered = apiclient.capabilities().numbers
    return tuple(name for name in BY_VALUE if name in offered)


def progress_of(facets: Facets) -> Progress:
    """The progress of a project's facets (those of no filter; with sums, by value too)."""
    share = next(((name, share_percent(facets.untagged_sums.get(name) or 0, whole))
                  for name in BY_VALUE if (whole := facets.sums.get(name))), None)
    biggest = next((name for name in ("volume", "clicks")
                    if facets.metric_counts.get(name)), None)
    return Progress(facets.total_records, facets.untagged, share, biggest)


def project_facets(project_id: str, fresh: bool = False) -> Facets:
    """The facets of the whole project, with the sums of every number the service keeps
    (the report of the whole project reads them too), from the session's cache unless
    `fresh` (one facets call)."""
    numbers = apiclient.capabilities().numbers
    return apiclient.cached_read(
        "project facets", project_id,
        lambda: apiclient.client().facets(project_id, QueryFilters(), sums=numbers),
        refresh=fresh)


def project_progress(project_id: str, fresh: bool = False) -> Progress:
    """The project's progress, from the session's cache unless `fresh`."""
    return progress_of(project_facets(project_id, fresh))


def progress_view(view: QueryView) -> QueryView:
    """Where the progress links: the queries no tag has yet, in the view's order."""
    return QueryView(QueryFilters(untagged=True), sort=view.sort, size=view.size,
                     columns=view.columns)


def biggest_view(view: QueryView, number: str) -> QueryView:
    """Where "Biggest first" links: the queries no tag has yet, biggest `number` first."""
    return QueryView(QueryFilters(untagged=True), sort="-" + number, size=view.size,
                     columns=view.columns)


def view_counts(project_id: str, view: QueryView, tags: list[Tag], progress_link: str,
                biggest_link: Callable[[str], str], fresh: bool = False) -> dict:
    """The counts of every picker option of `view` (by input name and value; an option not
    listed has 0), and the project's progress (`biggest_link(number)`: where Biggest first
    goes)."""
    facets = apiclient.client().facets(project_id, view.filters,
                                       sums=() if view.has_filters else _value_sums())
    progress = progress_of(facets) if not view.has_filters \
        else project_progress(project_id, fresh)
    return {
        **filter_fields.counts(facets, view.filters, tags),
        "total": f"{facets.total_records:,}",
        "progress": progress.as_json(progress_link, progress.biggest and biggest_link(
            progress.biggest)),
    }
