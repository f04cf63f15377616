"""The URL is the view: a queries view <-> its GET parameters, and nothing else.

`QueryView.from_args` accepts anything a browser, a colleague or an attacker can put in a query
string and turns it into a valid view (unknown or malformed values are dropped, numbers are
clamped), so the API never sees a request it would reject for a reason the person cannot fix.
`params()` gives the canonical form (defaults left out, fixed order), used for every link,
for the URL htmx pushes, and for comparing views.

What is dropped is not dropped silently: `QueryView.parse` also returns an `Ignored` for each
value it could not use (a page size that is not offered, a sort that is no column, a page that
is no number, a code that is no code), `QueryView.narrowed` takes away the values the page
found unknown (a language or tag the project does not have: filter_fields.known), and
`ignored_sentence` names them all in one sentence for the page.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from urllib.parse import urlencode

from werkzeug.datastructures import MultiDict

from queryapi import NUMBER_NAMES, QueryFilters

from . import filter_fields
from .filter_fields import Ignored, clean_text, quoted

# GET parameter names of the view's order, page and number columns (its filters' are in
# filter_fields).
SORT, PAGE, SIZE, COLUMNS = "sort", "page", "size", "cols"
NO_COLUMNS = "none"  # cols=none: no number columns

# Column name in the URL -> the API's sort field; the first direction a click asks for. The
# numbers (an extension) sort under their own names, biggest first, position best (least)
# first.
TEXT_COLUMNS = {"query": "query", "language": "language", "country": "country",
                "updated": "updatedAt"}
SORT_COLUMNS = {**TEXT_COLUMNS, **{name: name for name in NUMBER_NAMES}}
FIRST_DIRECTION = {"query": "", "language": "", "country": "", "updated": "-",
                   **{name: "" if name == "position" else "-" for name in NUMBER_NAMES}}
DEFAULT_SORT = "-updated"
PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50
MAX_PAGE = 1_000_000

DIGITS = re.compile(r"[0-9]{1,9}")


def _whole_number(value: str | None, default: int, lowest: int, highest: int) -> int:
    if value is None or not DIGITS.fullmatch(value.strip()):
        return default
    return min(max(int(value.strip()), lowest), highest)


# --- what the address asked for and the page could not use --------------------------------


def _words(items) -> str:
    """'a', 'a or b', 'a, b or c'."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def ignored_sentence(ignored) -> str:
    """'Ignored from the address: page size 7 (choose 25, 50, 100 or 200).' or ''."""
    return ("Ignored from the address: " + "; ".join(map(str, ignored)) + ".") if ignored else ""


def _ignored_order(args) -> list[Ignored]:
    """What `QueryView.from_args` drops of the sort and page from `args`, named."""
    ignored = []
    sort = (args.get(SORT) or "").strip()
    if sort and (sort.lstrip("-") not in SORT_COLUMNS or sort.startswith("--")):
        ignored.append(Ignored(f"sort {quoted(sort)}", "sort by "
                               + _words(TEXT_COLUMNS) + ", with a leading - for descending"))
    size = (args.get(SIZE) or "").strip()
    if size and (not DIGITS.fullmatch(size) or int(size) not in PAGE_SIZES):
        shown = size if DIGITS.fullmatch(size) else quoted(size)
        ignored.append(Ignored(f"page size {shown}", "choose " + _words(PAGE_SIZES)))
    ignored += [Ignored(f"column {quoted(name)}", "show " + _words(NUMBER_NAMES))
                for name in _column_names(args) if name not in (*NUMBER_NAMES, NO_COLUMNS)]
    page = (args.get(PAGE) or "").strip()
    if page and not DIGITS.fullmatch(page):
        ignored.append(Ignored(f"page {quoted(page)}", "not a page number"))
    elif page and int(page) < 1:
        ignored.append(Ignored(f"page {page}", "pages start at 1"))
    return ignored


def _column_names(args) -> list[str]:
    """`cols=volume,clicks` (or `cols` repeated), as given."""
    return [name.strip().lower() for value in args.getlist(COLUMNS)
            for name in value.split(",") if name.strip()]


def _columns(args) -> tuple[str, ...] | None:
    """The number columns the address chooses, each once (`cols=none`: none), or None when
    it chooses none (`cols` absent or empty: the project's own, as the page picks them)."""
    names = _column_names(args)
    if not names:
        return None
    return tuple(dict.fromkeys(name for name in names if name in NUMBER_NAMES))


@dataclass(frozen=True)
class QueryView:
    """A view of a project's queries: its filter (the fields of filter_fields; tags by name,
    as the address names them), its order, its page, and the numbers shown as columns (None:
    those the page picks for the project)."""

    filters: QueryFilters = field(default_factory=QueryFilters)
    sort: str = DEFAULT_SORT
    page: int = 1
    size: int = DEFAULT_PAGE_SIZE
    columns: tuple[str, ...] | None = None

    # --- from the URL --------------------------------------------------------------------

    @classmethod
    def parse(cls, args) -> tuple[QueryView, list[Ignored]]:
        """The view of `args` and what of `args` it could not use. Never raises."""
        filters, ignored = filter_fields.read(args)
        return cls._with(filters, args), _ignored_order(args) + ignored

    @classmethod
    def from_args(cls, args) -> QueryView:
        """`args`: a MultiDict (request.args). Never raises."""
        return cls._with(filter_fields.read(args)[0], args)

    @classmethod
    def _with(cls, filters: QueryFilters, args) -> QueryView:
        sort = (args.get(SORT) or "").strip()
        if sort.lstrip("-") not in SORT_COLUMNS or sort.startswith("--"):
            sort = DEFAULT_SORT
        size = _whole_number(args.get(SIZE), DEFAULT_PAGE_SIZE, 1, max(PAGE_SIZES))
        return cls(filters=filters, sort=sort,
                   page=_whole_number(args.get(PAGE), 1, 1, MAX_PAGE),
                   size=size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE,
                   columns=_columns(args))

    @classmethod
    def of(cls, filters: QueryFilters, sort: str = DEFAULT_SORT) -> QueryView:
        """The view of a filter kept elsewhere (a saved view's, a rule's condition): what of
        it an address can hold, as the address would give it back."""
        return cls.from_args(MultiDict(filter_fields.params(filters)))._replaced(sort=sort)

    # --- to the URL ----------------------------------------------------------------------

    def params(self) -> list[tuple[str, str]]:
        """Canonical GET parameters: defaults left out, always in the same order."""
        pairs = filter_fields.params(self.filters)
        if self.sort != DEFAULT_SORT:
            pairs.append((SORT, self.sort))
        if self.size != DEFAULT_PAGE_SIZE:
            pairs.append((SIZE, str(self.size)))
        if self.columns is not None:
            pairs.append((COLUMNS, self.columns_param))
        if self.page != 1:
            pairs.append((PAGE, str(self.page)))
        return pairs

    def query_string(self) -> str:
        """'?q=shoe&lang=de' or '' for the default view (commas left as they are:
        `cols=volume,clicks`)."""
        encoded = urlencode(self.params(), safe=",")
        return "?" + encoded if encoded else ""

    # --- derived views (for links) -------------------------------------------------------

    def _replaced(self, **changes) -> QueryView:
        return dataclasses.replace(self, **changes)

    def replace(self, **changes) -> QueryView:
        """A changed view; any change other than the page itself goes back to page 1."""
        if "page" not in changes:
            changes["page"] = 1
        return dataclasses.replace(self, **changes)

    def filtered(self, filters: QueryFilters) -> QueryView:
        """The view with another filter, at page 1."""
        return self.replace(filters=filters)

    def chips(self, tags_by_name) -> list[filter_fields.FilterChip]:
        """The removable chips of its filters, each linking to the view without it."""
        return filter_fields.chips(self.filters, tags_by_name,
                                   lambda kept: self.filtered(kept).query_string())

    def narrowed(self, filters: QueryFilters) -> QueryView:
        """The view without filter values it could not use, on the same page."""
        return self if filters == self.filters else self._replaced(filters=filters)

    def cleared(self) -> QueryView:
        """No filters; the sort, page size and columns stay (they are how one likes to
        look)."""
        return QueryView(sort=self.sort, size=self.size, columns=self.columns)

    def showing(self, columns: tuple[str, ...] | None) -> QueryView:
        """The view with these number columns (None: the project's own), on the same page
        (the rows do not change)."""
        return self._replaced(columns=columns)

    def at_page(self, page: int) -> QueryView:
        return self.replace(page=min(max(page, 1), MAX_PAGE))

    def sorted_by(self, column: str) -> QueryView:
        """Click on a column header: first direction for that column, then toggle."""
        if self.sort_column == column:
            sort = column if self.sort.startswith("-") else "-" + column
        else:
            sort = FIRST_DIRECTION[column] + column
        return self.replace(sort=sort)

    # --- reading -------------------------------------------------------------------------

    @property
    def has_filters(self) -> bool:
        return bool(filter_fields.params(self.filters))

    def offered(self, extensions: frozenset[str]) -> tuple[QueryView, list[Ignored]]:
        """The view as a deployment can show it (`extensions`: the filter fields it marks as
        extensions), and what it could not, named."""
        filters, ignored = filter_fields.offered(self.filters, extensions)
        return (self._replaced(filters=filters) if filters != self.filters else self), ignored

    @property
    def columns_param(self) -> str:
        """`cols` as the address writes it: 'volume,clicks', 'none', or '' (the default)."""
        if self.columns is None:
            return ""
        return ",".join(self.columns) or NO_COLUMNS

    @property
    def sort_column(self) -> str:
        return self.sort.lstrip("-")

    def sort_state(self, column: str) -> str:
        """aria-sort value of a column header."""
        if self.sort_column != column:
            return "none"
        return "descending" if self.sort.startswith("-") else "ascending"

    def api_sort(self) -> list[tuple[str, str]]:
        return [(SORT_COLUMNS[self.sort_column], "DESC" if self.sort.startswith("-") else "ASC")]


NAME = "name"
MAX_NAME_FILTER = 200


@dataclass(frozen=True)
class TagView:
    name: str = ""

    @classmethod
    def from_args(cls, args) -> TagView:
        return cls(name=clean_text(args.get(NAME) or "", MAX_NAME_FILTER))

    def params(self) -> list[tuple[str, str]]:
        return [(NAME, self.name)] if self.name else []

    def query_string(self) -> str:
        encoded = urlencode(self.params())
        return "?" + encoded if encoded else ""
