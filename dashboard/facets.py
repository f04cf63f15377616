"""A view's counts: how many queries each picker option would show, and the project's progress.

One `queries/facets` call per view (an extension of the API, feature-detected): each option's
number is what the view would show with that option chosen, as the API counts it (with All of
and Exclude too), painted as it comes.
The page asks for them after its rows are painted (static/counts.js), never delaying the rows.

Progress ("1,731 of 5,000 queries untagged") is the facets of the unfiltered project: the
view's own call when the view has no filter, else read once and kept with the session's other
cached lists (apiclient: an edit's `invalidate` drops it; a page refreshed after an edit asks
afresh).
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import render_template

from queryapi import Facets, QueryFilters, Tag

from . import apiclient, filter_fields
from .viewstate import QueryView


@dataclass(frozen=True)
class Progress:
    total: int
    untagged: int

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
        return (f"{self.untagged:,} of {self.total:,} {noun} untagged ({self.percent}\u00a0%)")

    def as_json(self, link: str) -> dict:
        return {"total": self.total, "untagged": self.untagged, "percent": self.percent,
                "text": self.sentence(),
                "html": render_template("partials/progress.html", progress=self, link=link)}


def progress_of(facets: Facets) -> Progress:
    return Progress(facets.total_records, facets.untagged)


def project_progress(project_id: str, fresh: bool = False) -> Progress:
    """The project's progress, from the session's cache unless `fresh` (one facets call)."""
    return apiclient.cached_read(
        "progress", project_id,
        lambda: progress_of(apiclient.client().facets(project_id, QueryFilters())),
        refresh=fresh)


def progress_view(view: QueryView) -> QueryView:
    """Where the progress links: the queries no tag has yet, in the view's order."""
    return QueryView(QueryFilters(untagged=True), sort=view.sort, size=view.size)


def view_counts(project_id: str, view: QueryView, tags: list[Tag], progress_link: str,
                fresh: bool = False) -> dict:
    """The counts of every picker option of `view` (by input name and value; an option not
    listed has 0), and the project's progress."""
    facets = apiclient.client().facets(project_id, view.filters)
    progress = progress_of(facets) if not view.has_filters \
        else project_progress(project_id, fresh)
    return {
        **filter_fields.counts(facets, view.filters, tags),
        "total": f"{facets.total_records:,}",
        "progress": progress.as_json(progress_link),
    }
