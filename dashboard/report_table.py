"""What each theme is worth: a view's queries by tag, with the sums of their numbers (one
`queries/facets` call with `sums`), the untagged ones and the whole view.

A row's figures are the facets' (docs/api.md): clicks, impressions and volume are sums;
position is the average weighted by impressions, CTR is clicks ÷ impressions of the sums, CPC
and difficulty are averages weighted by volume (None where no query has what they need). A
query carrying two tags counts in both rows, so the tags' shares may add up to more than
100 %.

The facets count a tag as the view with that tag chosen *in place of* the view's own tags
(with "any of"), so the call is made so that each tag's count is the view's queries that
carry it:

- no tag chosen: every tag's count is that already; a tag the view excludes has none of the
  view's queries (its facet counts the queries the exclusion hides);
- one tag chosen, or "all of" the chosen tags: asked with "all of", choosing a tag adds it to
  the view's, so its count is the view's queries that also carry it;
- "any of" two or more tags: a count of a tag within "this or that" is no facet, so only the
  chosen tags have rows (each of them lies wholly in the view), and the page says so;
- untagged: no tag has a query of the view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from queryapi import Facets, QueryFilters, Tag
from weblib.tag_names import fold_tag_name

# The numbers whose shares add up: what the chart and the share column may be by (besides
# the queries themselves), in the order the default is picked.
SHARE_NUMBERS = ("clicks", "volume", "impressions")
QUERIES = "queries"
TAG, UNTAGGED, TOTAL = "tag", "untagged", "total"


@dataclass(frozen=True)
class ReportRow:
    kind: str  # TAG, UNTAGGED or TOTAL
    label: str
    queries: int
    figures: Mapping[str, int | float | None]
    tag: Tag | None = None

    def value(self, by: str) -> int | float | None:
        """The row's queries, or its figure of a number (None: unknown)."""
        return self.queries if by == QUERIES else self.figures.get(by)


@dataclass(frozen=True)
class Report:
    numbers: tuple[str, ...]  # the numbers shown, in the API's order
    by: str  # what the shares are of: QUERIES or one of SHARE_NUMBERS
    tags: tuple[ReportRow, ...]  # biggest share first
    untagged: ReportRow
    total: ReportRow
    currency: str | None
    only_chosen_tags: bool  # "any of" several tags: only those tags have rows

    @property
    def rows(self) -> tuple[ReportRow, ...]:
        return (*self.tags, self.untagged, self.total)

    def charted(self, most_tags: int) -> tuple[ReportRow, ...]:
        """The rows a chart draws: the first `most_tags` tags, then the untagged queries when
        the view has some (the total is the whole that the shares are of, not a bar)."""
        tags = self.tags[:most_tags]
        return (*tags, self.untagged) if self.untagged.queries else tags

    def share(self, row: ReportRow) -> float | None:
        """The row's part of the view's total (0 to 1), or None when the total is 0 or
        unknown."""
        whole, part = self.total.value(self.by), row.value(self.by)
        if not whole:
            return None
        return (part or 0) / whole


def share_choices(numbers: tuple[str, ...]) -> tuple[str, ...]:
    """What the shares may be of, in the order offered: the additive numbers the project has,
    then the queries."""
    return (*(name for name in SHARE_NUMBERS if name in numbers), QUERIES)


def chosen_share(asked: str | None, numbers: tuple[str, ...]) -> str:
    """The share asked for in the address when it may be, else the first choice."""
    choices = share_choices(numbers)
    return asked if asked in choices else choices[0]


def facets_filter(filters: QueryFilters) -> QueryFilters:
    """The view's filter as the facets are asked for it: one chosen tag is the same view with
    "all of", under which each tag's count stays within the view."""
    if len(filters.tag_names) + len(filters.tag_ids) == 1 and filters.tag_match == "any":
        return dataclasses.replace(filters, tag_match="all")
    return filters


def only_chosen_tags(filters: QueryFilters) -> bool:
    return filters.tag_match == "any" and len(filters.tag_names) + len(filters.tag_ids) > 1


def _tags_in_view(filters: QueryFilters, tags: list[Tag]) -> list[Tag]:
    """The tags that may have queries of the view (their counts are the view's)."""
    if filters.untagged:
        return []
    if only_chosen_tags(filters):
        chosen = {fold_tag_name(name) for name in filters.tag_names}
        return [tag for tag in tags if fold_tag_name(tag.name) in chosen
                or tag.id in filters.tag_ids]
    excluded = {fold_tag_name(name) for name in filters.exclude_tag_names}
    return [tag for tag in tags if fold_tag_name(tag.name) not in excluded
            and tag.id not in filters.exclude_tag_ids]


def build(facets: Facets, filters: QueryFilters, tags: list[Tag], numbers: tuple[str, ...],
          by: str) -> Report:
    """The report of a view from its facets (asked with `facets_filter(filters)` and
    `sums=numbers`); tags without a query of the view have no row."""
    counts = dict(facets.tags)
    rows = []
    for tag in _tags_in_view(filters, tags):
        queries = counts.get(tag.id, 0)
        if queries:
            rows.append(ReportRow(TAG, tag.name, queries, _figures(facets.tag_sums.get(tag.id),
                                                                  numbers), tag))
    has_tag_filter = bool(filters.tag_names or filters.tag_ids)
    untagged = ReportRow(UNTAGGED, "Untagged", 0 if has_tag_filter else facets.untagged,
                         _figures(None if has_tag_filter else facets.untagged_sums, numbers))
    total = ReportRow(TOTAL, "All queries in this view", facets.total_records,
                      _figures(facets.sums, numbers))
    report = Report(numbers, by, (), untagged, total, facets.currency,
                    only_chosen_tags(filters))

    def biggest_first(row: ReportRow):
        return (-(row.value(by) or 0), -row.queries, row.label.casefold(), row.tag.id)

    return dataclasses.replace(report, tags=tuple(sorted(rows, key=biggest_first)))


def _figures(sums: Mapping | None, numbers: tuple[str, ...]) -> dict[str, int | float | None]:
    """The figures of `numbers` (a sum of nothing is 0; a weighted figure of nothing,
    unknown)."""
    sums = sums or {}
    return {name: sums.get(name, 0 if name in SHARE_NUMBERS else None) for name in numbers}


# --- the table's order (`order=` in the address: a column, "-" first for biggest first) ----

TAG_COLUMN, SHARE_COLUMN = "tag", "share"
# The direction a first click on a column asks for: names A to Z, position best (least)
# first, every other figure biggest first.
ASCENDING_FIRST = (TAG_COLUMN, "position")


@dataclass(frozen=True)
class Order:
    column: str  # TAG_COLUMN, QUERIES, a number's name or SHARE_COLUMN
    descending: bool

    @property
    def param(self) -> str:
        return ("-" if self.descending else "") + self.column

    def aria_sort(self, column: str) -> str | None:
        if column != self.column:
            return None
        return "descending" if self.descending else "ascending"

    def clicked(self, column: str) -> Order:
        """The order a click on `column`'s header asks for: its first direction, or the
        other one when the table is in that column's order already."""
        if column == self.column:
            return Order(column, not self.descending)
        return Order(column, column not in ASCENDING_FIRST)


DEFAULT_ORDER = Order(SHARE_COLUMN, True)


def table_order(asked: str | None, numbers: tuple[str, ...]) -> Order:
    """The order of the address when it names a column of the table, else biggest share
    first."""
    asked = (asked or "").strip()
    column = asked.removeprefix("-")
    if column in (TAG_COLUMN, QUERIES, SHARE_COLUMN, *numbers) and not column.startswith("-"):
        return Order(column, asked.startswith("-"))
    return DEFAULT_ORDER


def in_order(report: Report, order: Order) -> Report:
    """The report with its tags' rows in `order` (rows without the figure last either way;
    ties biggest share first, as the chart)."""
    if order == DEFAULT_ORDER:
        return report

    def key(row: ReportRow):
        if order.column == TAG_COLUMN:
            return row.label.casefold()
        value = report.share(row) if order.column == SHARE_COLUMN else row.value(order.column)
        return value

    known = [row for row in report.tags if key(row) is not None]
    unknown = [row for row in report.tags if key(row) is None]
    known.sort(key=key, reverse=order.descending)  # stable: ties keep the chart's order
    return dataclasses.replace(report, tags=(*known, *unknown))
