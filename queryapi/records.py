"""Typed records of the API, and the tolerant parsing that turns JSON payloads into them.

The reference leaves room for variation and the production service may differ from ours, so
parsing accepts: `nextPage`/`prevPage` of null, 0 or absent; a project list as a bare array
or `{page, results}`; tag ids as integers or strings of digits; unknown extra fields (ignored);
timestamps with or without milliseconds, ending in `Z` or `+00:00`. Anything else that does not
fit raises `ApiError` with a sentence naming the field — never a KeyError or TypeError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError

# --- records ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TagAssignment:
    """One item of set-tags: the query matched by (query, language, country) gets `tag_ids`."""

    query: str
    language: str
    country: str
    tag_ids: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "tag_ids", tuple(self.tag_ids))

    def to_body(self) -> dict:
        return {"query": self.query, "language": self.language, "country": self.country,
                "tagIds": list(self.tag_ids)}


@dataclass(frozen=True)
class QueryFilters:
    """Filters of queries/list; empty ones are left out of the request."""

    text: str = ""
    languages: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    tag_ids: tuple[int, ...] = ()
    tag_names: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("languages", "countries", "tag_ids", "tag_names"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))

    def to_body(self) -> dict:
        body: dict[str, Any] = {}
        if self.text:
            body["query"] = self.text
        if self.languages:
            body["languages"] = list(self.languages)
        if self.countries:
            body["countries"] = list(self.countries)
        if self.tag_ids:
            # The reference types tagIds of queries/list as strings; our service takes both.
            body["tagIds"] = [str(tag_id) for tag_id in self.tag_ids]
        if self.tag_names:
            body["tagNames"] = list(self.tag_names)
        return body


@dataclass(frozen=True)
class Project:
    id: str
    name: str


@dataclass(frozen=True)
class Query:
    id: str
    project: str
    tags: tuple[int, ...]
    query: str
    language: str
    country: str
    updated_at: datetime  # timezone-aware, UTC

    def assignment(self, tag_ids: Iterable[int]) -> TagAssignment:
        """The set-tags item that gives this query exactly `tag_ids`."""
        return TagAssignment(self.query, self.language, self.country, tuple(tag_ids))


@dataclass(frozen=True)
class Tag:
    id: int
    project: str
    name: str
    color: str


@dataclass(frozen=True)
class Capabilities:
    """What a deployment offers beyond the reference's four endpoints, as its OpenAPI document
    says (`Client.capabilities()`)."""

    create_tag: bool = False  # POST /api/tags/create, marked x-tagdesk-extension


@dataclass(frozen=True)
class Page:
    total_records: int
    limit: int
    current_page: int
    total_pages: int
    next_page: int | None
    prev_page: int | None

    def following(self, results_on_page: int) -> int | None:
        """The page to ask for next, or None when this was the last one.

        `nextPage` decides; when it is missing (a variant), `totalPages` does. An empty page
        ends the walk either way, so a service that misreports never makes it loop.
        """
        if results_on_page == 0:
            return None
        candidate = self.next_page
        if candidate is None and self.current_page < self.total_pages:
            candidate = self.current_page + 1
        if candidate is None or candidate <= self.current_page:
            return None
        return candidate


@dataclass(frozen=True)
class ProjectPage:
    page: Page
    results: tuple[Project, ...]


@dataclass(frozen=True)
class QueryPage:
    page: Page
    results: tuple[Query, ...]


@dataclass(frozen=True)
class TagPage:
    page: Page
    results: tuple[Tag, ...]


# --- parsing ----------------------------------------------------------------------------


class Malformed(Exception):
    """Internal: where a payload does not fit, as a phrase ("results[2].id is missing")."""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _get(obj: Any, name: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise Malformed(f"{where or 'the answer'} is not a JSON object")
    if name not in obj:
        raise Malformed(f"{_at(where, name)} is missing")
    return obj[name]


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise Malformed(f"{where} is not a whole number ({_show(value)})")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    raise Malformed(f"{where} is not a whole number ({_show(value)})")


def _text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    raise Malformed(f"{where} is not text ({_show(value)})")


def _identifier(value: Any, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(value, where)


def _timestamp(value: Any, where: str) -> datetime:
    text = _text(value, where).strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Malformed(f"{where} is not an ISO 8601 timestamp ({_show(value)})") from None
    if moment.tzinfo is None:  # the reference says UTC; a variant may leave the zone out
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _optional_page_number(obj: dict, name: str, where: str) -> int | None:
    value = obj.get(name)
    if value is None:
        return None
    number = _integer(value, _at(where, name))
    return number if number > 0 else None  # 0 is a variant of "no such page"


def _items(value: Any, where: str) -> list:
    if not isinstance(value, list):
        raise Malformed(f"{where} is not a list")
    return value


def parse_page(obj: Any, where: str = "page") -> Page:
    total = _integer(_get(obj, "totalRecords", where), f"{where}.totalRecords")
    limit = _integer(_get(obj, "limit", where), f"{where}.limit")
    current = _integer(_get(obj, "currentPage", where), f"{where}.currentPage")
    if "totalPages" in obj:
        total_pages = _integer(obj["totalPages"], f"{where}.totalPages")
    else:
        total_pages = math.ceil(total / limit) if limit > 0 else 0
    return Page(total, limit, current, total_pages,
                _optional_page_number(obj, "nextPage", where),
                _optional_page_number(obj, "prevPage", where))


def parse_project(obj: Any, where: str) -> Project:
    return Project(_identifier(_get(obj, "id", where), _at(where, "id")),
                   _text(_get(obj, "name", where), _at(where, "name")))


def parse_query(obj: Any, where: str) -> Query:
    tags = _items(_get(obj, "tags", where), _at(where, "tags"))
    return Query(
        id=_identifier(_get(obj, "id", where), _at(where, "id")),
        project=_identifier(_get(obj, "project", where), _at(where, "project")),
        tags=tuple(_integer(t, f"{_at(where, 'tags')}[{i}]") for i, t in enumerate(tags)),
        query=_text(_get(obj, "query", where), _at(where, "query")),
        language=_text(_get(obj, "language", where), _at(where, "language")),
        country=_text(_get(obj, "country", where), _at(where, "country")),
        updated_at=_timestamp(_get(obj, "updatedAt", where), _at(where, "updatedAt")),
    )


def parse_tag(obj: Any, where: str) -> Tag:
    return Tag(
        id=_integer(_get(obj, "id", where), _at(where, "id")),
        project=_identifier(_get(obj, "project", where), _at(where, "project")),
        name=_text(_get(obj, "name", where), _at(where, "name")),
        color=_text(_get(obj, "color", where), _at(where, "color")),
    )


def _records(values: Any, parse: Callable[[Any, str], Any], where: str) -> tuple:
    return tuple(parse(item, f"{where}[{i}]") for i, item in enumerate(_items(values, where)))


def _listing(payload: Any, parse: Callable[[Any, str], Any]) -> tuple[Page, tuple]:
    return (parse_page(_get(payload, "page", "")),
            _records(_get(payload, "results", ""), parse, "results"))


def _read(what: str, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except Malformed as problem:
        raise ApiError(f"The service's answer to {what} could not be read: {problem}.") from None


def read_query_page(payload: Any, what: str) -> QueryPage:
    return _read(what, lambda: QueryPage(*_listing(payload, parse_query)))


def read_tag(payload: Any, what: str) -> Tag:
    return _read(what, lambda: parse_tag(payload, ""))


def read_capabilities(document: Any, create_tag_path: str) -> Capabilities:
    """An OpenAPI document's extensions: an operation is offered when the document has it,
    marked `x-tagdesk-extension: true`. Anything that is not such a document offers none."""
    paths = document.get("paths") if isinstance(document, dict) else None
    methods = paths.get(create_tag_path) if isinstance(paths, dict) else None
    operation = methods.get("post") if isinstance(methods, dict) else None
    return Capabilities(create_tag=isinstance(operation, dict)
                        and operation.get("x-tagdesk-extension") is True)


def read_tag_page(payload: Any, what: str) -> TagPage:
    return _read(what, lambda: TagPage(*_listing(payload, parse_tag)))


def read_project_page(payload: Any, what: str, limit: int) -> ProjectPage:
    def build() -> ProjectPage:
        if isinstance(payload, list):
            # A variant answers with every project as a bare array: one page holding them all.
            results = _records(payload, parse_project, "results")
            count = len(results)
            return ProjectPage(Page(count, count or limit, 1, 1 if count else 0, None, None),
                               results)
        return ProjectPage(*_listing(payload, parse_project))

    return _read(what, build)


def read_queries(payload: Any, what: str) -> tuple[Query, ...]:
    """set-tags answers with a bare array of query records (tolerating `{results}` too)."""
    def build() -> tuple[Query, ...]:
        values = payload.get("results") if isinstance(payload, dict) else payload
        return _records(values, parse_query, "results")

    return _read(what, build)
