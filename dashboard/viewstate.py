"""The URL is the view: a queries view <-> its GET parameters, and nothing else.

`QueryView.from_args` accepts anything a browser, a colleague or an attacker can put in a query
string and turns it into a valid view (unknown or malformed values are dropped, numbers are
clamped), so the API never sees a request it would reject for a reason the person cannot fix.
`params()` gives the canonical form (defaults left out, fixed order), used for every link,
for the URL htmx pushes, and for comparing views.

What is dropped is not dropped silently: `QueryView.parse` also returns an `Ignored` for each
value it could not use (a page size that is not offered, a sort that is no column, a page that
is no number, a code that is no code), `QueryView.dropping` takes away the values the page
found unknown (a language or tag the project does not have), and `ignored_sentence` names them
all in one sentence for the page.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from weblib.text_rules import blank_forbidden

# GET parameter names (short: people read and share these URLs).
TEXT, LANGUAGE, COUNTRY, TAG = "q", "lang", "country", "tag"
TAG_MATCH, NOT_TAG, UNTAGGED = "tagmatch", "nottag", "untagged"
SORT, PAGE, SIZE = "sort", "page", "size"
# How the chosen tags combine: "any" (the default, the API's own) or "all".
TAG_MATCHES = ("any", "all")
YES = ("1", "true", "yes", "on")

# Column name in the URL -> the API's sort field; the first direction a click asks for.
SORT_COLUMNS = {"query": "query", "language": "language", "country": "country",
                "updated": "updatedAt"}
FIRST_DIRECTION = {"query": "", "language": "", "country": "", "updated": "-"}
DEFAULT_SORT = "-updated"
PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50
MAX_PAGE = 1_000_000
MAX_TEXT = 500
MAX_TAG_NAME = 200
MAX_VALUES = 50  # per multi-valued filter

CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,34}")
DIGITS = re.compile(r"[0-9]{1,9}")


def clean_text(value: str, limit: int) -> str:
    """Characters no text may hold (weblib.text_rules) become spaces; surrounding space goes;
    at most `limit` characters."""
    return blank_forbidden(value).strip()[:limit].strip()


def _unique(values, key=lambda v: v) -> tuple[str, ...]:
    seen, kept = set(), []
    for value in values:
        if value and key(value) not in seen:
            seen.add(key(value))
            kept.append(value)
    return tuple(kept[:MAX_VALUES])


def _codes(values: list[str], upper: bool) -> tuple[str, ...]:
    codes = (v.strip() for v in values)
    codes = (c.upper() if upper else c.lower() for c in codes if CODE.fullmatch(c))
    return _unique(codes)


def _whole_number(value: str | None, default: int, lowest: int, highest: int) -> int:
    if value is None or not DIGITS.fullmatch(value.strip()):
        return default
    return min(max(int(value.strip()), lowest), highest)


# --- what the address asked for and the page could not use --------------------------------

SHOWN_VALUE = 40  # characters of an ignored value quoted back on the page


@dataclass(frozen=True)
class Ignored:
    """One value of the address that the view does without: `what` it was, `why`."""

    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.what} ({self.why})"


def quoted(value: str) -> str:
    """A value from the address as the page quotes it back: printable, short, in quotes."""
    text = clean_text(value, 10 * SHOWN_VALUE)
    return f"“{text[:SHOWN_VALUE]}…”" if len(text) > SHOWN_VALUE else f"“{text}”"


def _words(items) -> str:
    """'a', 'a or b', 'a, b or c'."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def ignored_sentence(ignored) -> str:
    """'Ignored from the address: page size 7 (choose 25, 50, 100 or 200).' or ''."""
    return ("Ignored from the address: " + "; ".join(map(str, ignored)) + ".") if ignored else ""


def _ignored_values(args) -> list[Ignored]:
    """What `QueryView.from_args` drops from `args`, named (empty values are no request)."""
    ignored = []
    sort = (args.get(SORT) or "").strip()
    if sort and (sort.lstrip("-") not in SORT_COLUMNS or sort.startswith("--")):
        ignored.append(Ignored(f"sort {quoted(sort)}", "sort by "
                               + _words(SORT_COLUMNS) + ", with a leading - for descending"))
    size = (args.get(SIZE) or "").strip()
    if size and (not DIGITS.fullmatch(size) or int(size) not in PAGE_SIZES):
        shown = size if DIGITS.fullmatch(size) else quoted(size)
        ignored.append(Ignored(f"page size {shown}", "choose " + _words(PAGE_SIZES)))
    page = (args.get(PAGE) or "").strip()
    if page and not DIGITS.fullmatch(page):
        ignored.append(Ignored(f"page {quoted(page)}", "not a page number"))
    elif page and int(page) < 1:
        ignored.append(Ignored(f"page {page}", "pages start at 1"))
    for name, noun in ((LANGUAGE, "language"), (COUNTRY, "country")):
        ignored += [Ignored(f"{noun} {quoted(value)}", f"not a {noun} code")
                    for value in args.getlist(name)
                    if value.strip() and not CODE.fullmatch(value.strip())]
    match = (args.get(TAG_MATCH) or "").strip()
    if match and match.lower() not in TAG_MATCHES:
        ignored.append(Ignored(f"tag match {quoted(match)}", "choose any or all"))
    untagged = (args.get(UNTAGGED) or "").strip()
    if untagged and untagged.lower() not in YES + ("0", "false", "no", "off"):
        ignored.append(Ignored(f"untagged {quoted(untagged)}", "use untagged=1"))
    elif untagged.lower() in YES and _tag_names(args.getlist(TAG)):
        ignored.append(Ignored("untagged", "a query with no tag cannot have a chosen tag: "
                                           "the chosen tags are shown"))
    return ignored


def _tag_names(values: list[str]) -> tuple[str, ...]:
    return _unique((clean_text(v, MAX_TAG_NAME) for v in values), key=str.casefold)


@dataclass(frozen=True)
class QueryView:
    text: str = ""
    languages: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    # Extensions of the API (feature-detected): how `tags` combine, tags the queries must not
    # carry, queries with no tag (never together with `tags`).
    tag_match: str = "any"
    not_tags: tuple[str, ...] = ()
    untagged: bool = False
    sort: str = DEFAULT_SORT
    page: int = 1
    size: int = DEFAULT_PAGE_SIZE

    # --- from the URL --------------------------------------------------------------------

    @classmethod
    def parse(cls, args) -> tuple[QueryView, list[Ignored]]:
        """The view of `args` and what of `args` it could not use. Never raises."""
        return cls.from_args(args), _ignored_values(args)

    @classmethod
    def from_args(cls, args) -> QueryView:
        """`args`: a MultiDict (request.args). Never raises."""
        sort = (args.get(SORT) or "").strip()
        if sort.lstrip("-") not in SORT_COLUMNS or sort.startswith("--"):
            sort = DEFAULT_SORT
        size = _whole_number(args.get(SIZE), DEFAULT_PAGE_SIZE, 1, max(PAGE_SIZES))
        tags = _tag_names(args.getlist(TAG))
        match = (args.get(TAG_MATCH) or "").strip().lower()
        return cls(
            text=clean_text(args.get(TEXT) or "", MAX_TEXT),
            languages=_codes(args.getlist(LANGUAGE), upper=False),
            countries=_codes(args.getlist(COUNTRY), upper=True),
            tags=tags,
            tag_match=match if match in TAG_MATCHES else "any",
            not_tags=_tag_names(args.getlist(NOT_TAG)),
            untagged=not tags and (args.get(UNTAGGED) or "").strip().lower() in YES,
            sort=sort,
            page=_whole_number(args.get(PAGE), 1, 1, MAX_PAGE),
            size=size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE,
        )

    # --- to the URL ----------------------------------------------------------------------

    def params(self) -> list[tuple[str, str]]:
        """Canonical GET parameters: defaults left out, always in the same order."""
        pairs: list[tuple[str, str]] = []
        if self.text:
            pairs.append((TEXT, self.text))
        pairs += [(LANGUAGE, code) for code in self.languages]
        pairs += [(COUNTRY, code) for code in self.countries]
        pairs += [(TAG, name) for name in self.tags]
        if self.tags and self.tag_match != "any":
            pairs.append((TAG_MATCH, self.tag_match))
        pairs += [(NOT_TAG, name) for name in self.not_tags]
        if self.untagged:
            pairs.append((UNTAGGED, "1"))
        if self.sort != DEFAULT_SORT:
            pairs.append((SORT, self.sort))
        if self.size != DEFAULT_PAGE_SIZE:
            pairs.append((SIZE, str(self.size)))
        if self.page != 1:
            pairs.append((PAGE, str(self.page)))
        return pairs

    def query_string(self) -> str:
        """'?q=shoe&lang=de' or '' for the default view."""
        encoded = urlencode(self.params())
        return "?" + encoded if encoded else ""

    # --- derived views (for links) -------------------------------------------------------

    def replace(self, **changes) -> QueryView:
        """A changed view; any change other than the page itself goes back to page 1."""
        if "page" not in changes:
            changes["page"] = 1
        return dataclasses.replace(self, **changes)

    def without(self, kind: str, value: str = "") -> QueryView:
        """The view without one active filter (for the removable chips)."""
        if kind == TEXT:
            return self.replace(text="")
        if kind == UNTAGGED:
            return self.replace(untagged=False)
        if kind == TAG and not value:  # every chosen tag at once (their one chip)
            return self.replace(tags=(), tag_match="any")
        field = {LANGUAGE: "languages", COUNTRY: "countries", TAG: "tags",
                 NOT_TAG: "not_tags"}[kind]
        kept = tuple(v for v in getattr(self, field) if v != value)
        return self.replace(**{field: kept})

    def dropping(self, languages=(), countries=(), tags=(),
                 not_tags=()) -> tuple[QueryView, list[Ignored]]:
        """The view without filter values found unknown (codes no language or country has and
        the project never uses, names of no tag of the project), and those values, named."""
        ignored = [Ignored(f"language {quoted(code)}", "no such language code")
                   for code in languages]
        ignored += [Ignored(f"country {quoted(code)}", "no such country code")
                    for code in countries]
        ignored += [Ignored(f"tag {quoted(name)}", "no such tag in this project")
                    for name in (*tags, *not_tags)]
        if not ignored:
            return self, []
        view = dataclasses.replace(
            self, languages=tuple(c for c in self.languages if c not in languages),
            countries=tuple(c for c in self.countries if c not in countries),
            tags=tuple(n for n in self.tags if n not in tags),
            not_tags=tuple(n for n in self.not_tags if n not in not_tags))
        return view, ignored

    def cleared(self) -> QueryView:
        """No filters; the sort and page size stay (they are how one likes to look)."""
        return QueryView(sort=self.sort, size=self.size)

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
        return bool(self.text or self.languages or self.countries or self.tags
                    or self.not_tags or self.untagged)

    @property
    def uses_tag_logic(self) -> bool:
        """Does the view need the API's tag logic extension (all of, without, untagged)?"""
        return bool((self.tag_match == "all" and len(self.tags) > 1) or self.not_tags
                    or self.untagged)

    def without_tag_logic(self) -> QueryView:
        """The view as a deployment without the extension can show it."""
        return dataclasses.replace(self, tag_match="any", not_tags=(), untagged=False)

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
