"""Typed records of the API, and the tolerant parsing that turns JSON payloads into them.

The reference leaves room for variation and the production service may differ from ours, so
parsing accepts: `nextPage`/`prevPage` of null, 0 or absent; a project list as a bare array
or `{page, results}`; tag ids as integers or strings of digits; unknown extra fields (ignored);
timestamps with or without milliseconds, ending in `Z` or `+00:00`. Anything else that does not
fit raises `ApiError` with a sentence naming the field — never a KeyError or TypeError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any

from .errors import ApiError, InvalidRequest

# --- records ----------------------------------------------------------------------------

# The numbers a query may carry (an extension: `Capabilities.numbers` says which a deployment
# offers), in the API's order.
NUMBER_NAMES = ("clicks", "impressions", "ctr", "position", "volume", "cpc", "difficulty")


class FrozenMapping(Mapping):
    """A mapping that cannot change and hashes, so that records holding one stay frozen."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping | Iterable = ()):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self) -> Iterator:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return f"FrozenMapping({self._items!r})"


EMPTY = FrozenMapping()
# A range's bound: a number, or None for no bound on that side.
Bound = int | float | None


def _bound(value: Any, name: str, side: str) -> Bound:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise InvalidRequest(f"The {side} of the {name} range is a number, not {value!r}.")
    return value


def metric_ranges(ranges: Mapping) -> FrozenMapping:
    """{"volume": (100, 5000), "position": (None, 10)} checked: each range has a bound, and its
    least is at most its greatest."""
    checked = {}
    for name, bounds in ranges.items():
        if not isinstance(name, str) or not name:
            raise InvalidRequest(f"A range is named by its number, not {name!r}.")
        least, greatest = (_bound(value, name, side)
                           for value, side in zip(tuple(bounds), ("least", "greatest"),
                                                  strict=True))
        if least is None and greatest is None:
            raise InvalidRequest(f"The {name} range needs a least or a greatest value.")
        if least is not None and greatest is not None and least > greatest:
            raise InvalidRequest(f"The {name} range's least value ({least}) is greater than "
                                 f"its greatest ({greatest}).")
        checked[name] = (least, greatest)
    return FrozenMapping(checked)


def _range_body(bounds: tuple[Bound, Bound]) -> dict:
    return {side: value for side, value in zip(("min", "max"), bounds, strict=True)
            if value is not None}


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
class TagEdit:
    """One item of tags-edit (an extension: `Capabilities.tag_edits`): the query matched by
    (query, language, country) gains `add` and loses `remove`; its other tags stay."""

    query: str
    language: str
    country: str
    add: tuple[int, ...] = ()
    remove: tuple[int, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "add", tuple(self.add))
        object.__setattr__(self, "remove", tuple(self.remove))

    def to_body(self) -> dict:
        return {"query": self.query, "language": self.language, "country": self.country,
                "add": list(self.add), "remove": list(self.remove)}


TAG_MATCHES = ("any", "all")

# Each field of QueryFilters and its name in the API's body, in the body's order.
BODY_NAMES = {"text": "query", "languages": "languages", "countries": "countries",
              "tag_ids": "tagIds", "tag_names": "tagNames", "tag_match": "tagMatch",
              "exclude_tag_ids": "excludeTagIds", "exclude_tag_names": "excludeTagNames",
              "untagged": "untagged", "pattern": "pattern", "metric_ranges": "metricRanges",
              "suggested_tag_ids": "suggestedTagIds", "min_confidence": "minConfidence"}
# The fields that say which tags a query carries (a tag written may move a query in or out).
TAG_FIELDS = ("tag_ids", "tag_names", "tag_match", "exclude_tag_ids", "exclude_tag_names",
              "untagged", "suggested_tag_ids")


@dataclass(frozen=True)
class QueryFilters:
    """Filters of queries/list (and queries/facets, saved views, rules, a job's queries): the
    one filter value the dashboard and the jobs pass around. A field left at its default is
    not sent. `tag_match` ("any" or "all"), `exclude_tag_ids`, `exclude_tag_names`,
    `untagged`, `pattern` (an RE2 regular expression on the text) and `metric_ranges` (by
    number's name, its inclusive (least, greatest), None where open: `{"volume": (100,
    None)}`) are extensions (`Capabilities.filter_fields`): left at their defaults the body
    is the reference's. A new field is one more attribute here and its name in BODY_NAMES:
    the body is written and read field by field."""

    text: str = ""
    languages: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    tag_ids: tuple[int, ...] = ()
    tag_names: tuple[str, ...] = ()
    tag_match: str = "any"
    exclude_tag_ids: tuple[int, ...] = ()
    exclude_tag_names: tuple[str, ...] = ()
    untagged: bool = False
    pattern: str = ""
    metric_ranges: FrozenMapping = EMPTY
    # Suggested one of these tags (an extension, `Capabilities.suggestions`), at or above
    # min_confidence (0 to 1; None: the project's default confidence).
    suggested_tag_ids: tuple[int, ...] = ()
    min_confidence: float | None = None

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(field.default, tuple) and not isinstance(value, tuple):
                object.__setattr__(self, field.name,
                                   (value,) if isinstance(value, str) else tuple(value))
        if not isinstance(self.metric_ranges, Mapping):
            raise InvalidRequest("metric_ranges maps a number's name to its (least, greatest).")
        object.__setattr__(self, "metric_ranges", metric_ranges(self.metric_ranges))
        if self.tag_match not in TAG_MATCHES:
            raise InvalidRequest(f'tag_match is "any" or "all", not {self.tag_match!r}.')
        if self.min_confidence is not None and (
                isinstance(self.min_confidence, bool)
                or not isinstance(self.min_confidence, int | float)
                or not 0 <= self.min_confidence <= 1):
            raise InvalidRequest("min_confidence is a number from 0 to 1.")

    def to_body(self) -> dict:
        body: dict[str, Any] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Mapping):
                if value:
                    body[BODY_NAMES[field.name]] = {name: _range_body(bounds)
                                                    for name, bounds in value.items()}
            elif value != field.default:
                body[BODY_NAMES[field.name]] = list(value) if isinstance(value, tuple) \
                    else value
        if self.tag_ids:
            # The reference types tagIds of queries/list as strings; our service takes both.
            body["tagIds"] = [str(tag_id) for tag_id in self.tag_ids]
        return body

    @classmethod
    def from_body(cls, body: Any) -> QueryFilters:
        """A body as `to_body` writes it (a job's, a saved view's) back into QueryFilters."""
        try:
            return parse_filters(body, "filter")
        except Malformed as problem:
            raise InvalidRequest(f"The filter could not be read: {problem}.") from None

    @property
    def reads_tags(self) -> bool:
        """Whether a query's tags decide if it matches (a tag written may move it)."""
        return any(getattr(self, name) != QueryFilters.__dataclass_fields__[name].default
                   for name in TAG_FIELDS)

    def tags_named(self, id_of: Callable[[str], int | None]) -> frozenset[int] | None:
        """The ids of every tag the filter names (`id_of` finds a name's; None: no tag has
        it), or None when every tag counts (queries with no tag)."""
        if self.untagged:
            return None
        names = (*self.tag_names, *self.exclude_tag_names)
        found = (id_of(name) for name in names)
        return frozenset((*self.tag_ids, *self.exclude_tag_ids,
                          *(tag_id for tag_id in found if tag_id is not None)))

    def without_tags(self) -> QueryFilters:
        """The filter without its conditions on tags."""
        return replace(self, **{name: QueryFilters.__dataclass_fields__[name].default
                                for name in TAG_FIELDS})


@dataclass(frozen=True)
class Project:
    id: str
    name: str


@dataclass(frozen=True)
class TagSource:
    """Where one tag of a query came from: the rule that added it, who the caller said added
    it, the file of the import whose tags column named it, when; each None where the service
    does not know."""

    tag_id: int
    rule_id: int | None = None
    added_by: str | None = None
    added_at: datetime | None = None
    imported_from: str | None = None
    suggested: bool = False  # an accepted suggestion


@dataclass(frozen=True)
class Suggestion:
    """A tag suggested to a query it lacks, with its confidence (0 to 1)."""

    tag_id: int
    confidence: float


@dataclass(frozen=True)
class ImportRecord:
    """One import of a project, made in the organization settings (`list_imports`)."""

    id: str
    file_name: str
    state: str  # queued, running, finished, failed or interrupted
    rows: int
    added: int
    present: int  # already in the project
    rejected: int
    tagged_by_rules: int  # queries rules tagged as they came in
    by: str | None  # the email of who started it; None once removed
    created_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Query:
    id: str
    project: str
    tags: tuple[int, ...]
    query: str
    language: str
    country: str
    updated_at: datetime  # timezone-aware, UTC
    # Where each tag came from, where the service knows, by tag id (`tagSources`, an
    # extension of queries/list's records).
    tag_sources: tuple[TagSource, ...] = ()
    # Its known numbers by name (an extension: asked with include=["metrics"]; empty when not
    # asked, or when none is known).
    metrics: FrozenMapping = EMPTY
    # Its suggested tags, best first (an extension: asked with include=["suggestions"]).
    suggestions: tuple[Suggestion, ...] = ()

    def source_of(self, tag_id: int) -> TagSource | None:
        return next((source for source in self.tag_sources if source.tag_id == tag_id), None)

    def rule_of(self, tag_id: int) -> int | None:
        """The rule that added the tag, if one did."""
        source = self.source_of(tag_id)
        return source.rule_id if source is not None else None

    def assignment(self, tag_ids: Iterable[int]) -> TagAssignment:
        """The set-tags item that gives this query exactly `tag_ids`."""
        return TagAssignment(self.query, self.language, self.country, tuple(tag_ids))


@dataclass(frozen=True)
class Tag:
    id: int
    project: str
    name: str
    color: str
    # What the tag is for (an extension: a deployment without it, or a tag without one,
    # gives None).
    description: str | None = None


@dataclass(frozen=True)
class TagMerge:
    """A tag merged into another (POST /api/tags/merge, an extension): the merged tag as it
    was, the tag it went into, the queries that changed, and the operation that undoes it
    (`Client.unmerge_tag`)."""

    merged: Tag
    into: Tag
    operation: str
    queries: int


@dataclass(frozen=True)
class TagUnmerge:
    """A merge undone (POST /api/tags/unmerge): the tag back under its own id, and the
    queries that changed."""

    restored: Tag
    operation: str
    queries: int


@dataclass(frozen=True)
class Facets:
    """The counts of a filter (POST /api/queries/facets, an extension): each field's counts
    apply every filter but that field's own (docs/api.md)."""

    total_records: int
    untagged: int
    languages: tuple[tuple[str, int], ...]  # (code, count), highest count first
    countries: tuple[tuple[str, int], ...]
    tags: tuple[tuple[int, int], ...]  # (tag id, count)
    # The numbers (an extension, `Capabilities.numbers`; empty on a deployment without them).
    # Asked with `sums`: each number's figure by name (a sum, or for position, ctr, cpc and
    # difficulty a weighted figure, None when no query has it) for the whole match, for the
    # untagged count's queries, and beside each language, country and tag count (by its code
    # or id); the project's currency for CPC (None: unknown).
    sums: FrozenMapping = EMPTY
    untagged_sums: FrozenMapping = EMPTY
    language_sums: FrozenMapping = EMPTY
    country_sums: FrozenMapping = EMPTY
    tag_sums: FrozenMapping = EMPTY
    currency: str | None = None
    # How many queries have each number known, the view's ranges left out (always there
    # where the deployment offers numbers).
    metric_counts: FrozenMapping = EMPTY
    # (tag id, count) of the queries suggested each tag, the suggestion filter left out (an
    # extension, `Capabilities.suggestions`).
    suggested: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SuggestionStatus:
    """A project's suggestions (`suggestion_status`): `state` "ready", "learning" or "too few
    tags" (then `needed`: how many more queries a tag needs); the last learning's time, how
    many tagged queries it learned from, the share of held-back suggestions right and the
    default confidence (None where unknown); (tag id, queries suggested it) per tag; and the
    sentence of the last learning when it failed or was stopped (`problem`)."""

    state: str
    learned_at: datetime | None
    learned_from: int | None
    held_back_right: float | None
    default_confidence: float | None
    tags: tuple[tuple[int, int], ...]
    needed: int | None = None
    problem: str | None = None


@dataclass(frozen=True)
class SuggestionsAccepted:
    """One part of accept_suggestions: `tagged` of its `checked` queries got the tag (`queries`:
    those, as tags-edit items name them, what an Undo removes it from); `remaining` follow;
    `cursor` is where the next part starts (None: done)."""

    tagged: int
    checked: int
    matching: int
    remaining: int
    cursor: int | None
    queries: tuple[TagEdit, ...]


@dataclass(frozen=True)
class SavedView:
    """A named filter of a project (POST /api/views/…, an extension), with the live count of
    its filter: queries/list's total_records for it now."""

    id: int
    project: str
    name: str
    filters: QueryFilters
    sort: tuple[tuple[str, str], ...] | None  # None: the default order
    total_records: int
    # The numbers it shows as columns (an extension of saved views; () none, None the default).
    columns: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Rule:
    """Tags that apply themselves (POST /api/rules/…, an extension): the queries that match
    `condition` get `tag_ids` when they enter the project (and when the rule is saved, by
    its client). `matching` and `carrying` are counted now: the queries the condition
    matches, and those of them that carry every tag already."""

    id: int
    project: str
    name: str
    condition: QueryFilters
    tag_ids: tuple[int, ...]
    paused: bool
    paused_reason: str | None  # why the service paused it (its last tag was deleted)
    matching: int
    carrying: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class RulePreview:
    """What a rule would match (POST /api/rules/preview): `lacking` of the `matching` queries
    lack one of its tags; `sample` is up to 20 of those, the latest to enter first."""

    matching: int
    lacking: int
    sample: tuple[Query, ...]


@dataclass(frozen=True)
class RuleApplied:
    """One part of rules/apply: `tagged` of its `checked` queries got a tag; `remaining`
    matches follow; `cursor` is where the next part starts (None: every match reached)."""

    tagged: int
    checked: int
    matching: int
    remaining: int
    cursor: int | None
    applied_at: str  # as the API writes times: an unapply `since` it undoes this part


@dataclass(frozen=True)
class RuleUnapplied:
    """One part of rules/unapply (`removed` links of `queries`) or rules/restore (`removed`
    is then the links put back); `more` parts follow; `operation` names what was taken."""

    removed: int
    queries: int
    more: bool
    operation: str | None = None


@dataclass(frozen=True)
class Capabilities:
    """What a deployment offers beyond the reference's four endpoints, as its OpenAPI document
    says (`Client.capabilities()`): each one an operation marked x-tagdesk-extension."""

    create_tag: bool = False  # POST /api/tags/create
    tag_logic: bool = False  # POST /api/queries/facets, and with it the filters' extensions
    saved_views: bool = False  # POST /api/views/list (create, update, delete)
    rules: bool = False  # POST /api/rules/list (preview, create, update, pause, delete)
    rule_apply: bool = False  # POST /api/rules/apply (unapply, restore)
    tag_editing: bool = False  # POST /api/tags/update (name, colour, description)
    tag_merging: bool = False  # POST /api/tags/merge (and unmerge, its undo)
    tag_edits: bool = False  # PATCH /api/queries/many/tags-edit (tags added and removed)
    query_versions: bool = False  # POST /api/queries/versions (updatedAt of queries by id)
    imports: bool = False  # POST /api/imports/list (a project's imports, newest first)
    common_words: bool = False  # POST /api/queries/words (the words a view's queries share)
    suggestions: bool = False  # POST /api/suggestions/status (refresh, accept, reject)
    # The fields of queries/list's filter marked as extensions (tagMatch, untagged, …).
    filter_fields: frozenset[str] = frozenset()
    # The numbers a query may carry that this deployment lists, sorts, filters and sums
    # (NUMBER_NAMES' order; empty when none).
    numbers: tuple[str, ...] = ()


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
        tag_sources=_tag_sources(obj.get("tagSources"), _at(where, "tagSources")),
        metrics=_figures(obj.get("metrics"), _at(where, "metrics")),
        suggestions=_suggestions(obj.get("suggestions"), _at(where, "suggestions")),
    )


def _suggestions(value: Any, where: str) -> tuple[Suggestion, ...]:
    if value is None:
        return ()
    return tuple(Suggestion(_integer(_get(item, "tagId", f"{where}[{i}]"), f"{where}[{i}].tagId"),
                            float(_number(_get(item, "confidence", f"{where}[{i}]"),
                                          f"{where}[{i}].confidence")))
                 for i, item in enumerate(_items(value, where)))


def _optional(value: Any, read: Callable[[Any, str], Any], where: str) -> Any:
    return None if value is None else read(value, where)


def read_suggestion_status(payload: Any, what: str) -> SuggestionStatus:
    def parse() -> SuggestionStatus:
        tags = _items(_get(payload, "tags", ""), "tags")
        return SuggestionStatus(
            state=_text(_get(payload, "state", ""), "state"),
            learned_at=_optional(payload.get("learnedAt"), _timestamp, "learnedAt"),
            learned_from=_optional(payload.get("learnedFrom"), _count, "learnedFrom"),
            held_back_right=_optional(payload.get("heldBackRight"), _number, "heldBackRight"),
            default_confidence=_optional(payload.get("defaultConfidence"), _number,
                                         "defaultConfidence"),
            tags=tuple((_integer(_get(tag, "id", f"tags[{i}]"), f"tags[{i}].id"),
                        _count(_get(tag, "suggested", f"tags[{i}]"), f"tags[{i}].suggested"))
                       for i, tag in enumerate(tags)),
            needed=_optional(payload.get("needed"), _count, "needed"),
            problem=_optional(payload.get("problem"), _text, "problem"))
    return _read(what, parse)


def read_rejected(payload: Any, what: str) -> int:
    return _read(what, lambda: _count(_get(payload, "rejected", ""), "rejected"))


def read_suggestions_accepted(payload: Any, what: str) -> SuggestionsAccepted:
    def parse() -> SuggestionsAccepted:
        cursor = _get(payload, "cursor", "")
        queries = _items(_get(payload, "queries", ""), "queries")
        return SuggestionsAccepted(
            tagged=_count(_get(payload, "tagged", ""), "tagged"),
            checked=_count(_get(payload, "checked", ""), "checked"),
            matching=_count(_get(payload, "matching", ""), "matching"),
            remaining=_count(_get(payload, "remaining", ""), "remaining"),
            cursor=None if cursor is None else _count(cursor, "cursor"),
            queries=tuple(TagEdit(_text(_get(item, "query", f"queries[{i}]"), "query"),
                                  _text(_get(item, "language", f"queries[{i}]"), "language"),
                                  _text(_get(item, "country", f"queries[{i}]"), "country"))
                          for i, item in enumerate(queries)))
    return _read(what, parse)


def _number(value: Any, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value):
        raise Malformed(f"{where} is not a number ({_show(value)})")
    return value


def _figures(value: Any, where: str, unknown: bool = False) -> FrozenMapping:
    """{"clicks": 120, "position": 4.5}: numbers by name (`unknown`: null stays, as None;
    else a null is left out); absent or null: none."""
    if value is None:
        return EMPTY
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")
    return FrozenMapping((name, None if found is None else _number(found, f"{where}.{name}"))
                         for name, found in value.items() if found is not None or unknown)


def _tag_sources(value: Any, where: str) -> tuple[TagSource, ...]:
    """{"<tag id>": {"ruleId": 5, "addedBy": "Ann", "importedFrom": "Queries.csv",
    "addedAt": "…"}} (each field optional) by tag id; absent or null: none."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")

    def source(tag: Any, found: Any) -> TagSource:
        at = f"{where}.{tag}"
        if not isinstance(found, dict):
            raise Malformed(f"{at} is not a JSON object")
        rule, by, when = found.get("ruleId"), found.get("addedBy"), found.get("addedAt")
        imported = found.get("importedFrom")
        return TagSource(
            tag_id=_integer(tag, f"{where} key {_show(tag)}"),
            rule_id=None if rule is None else _integer(rule, f"{at}.ruleId"),
            added_by=None if by is None else _text(by, f"{at}.addedBy"),
            added_at=None if when is None else _timestamp(when, f"{at}.addedAt"),
            imported_from=None if imported is None
            else _text(imported, f"{at}.importedFrom"),
            suggested=found.get("suggested") is True)

    return tuple(sorted((source(tag, found) for tag, found in value.items()),
                        key=lambda each: each.tag_id))


def parse_tag(obj: Any, where: str) -> Tag:
    description = obj.get("description") if isinstance(obj, dict) else None
    return Tag(
        id=_integer(_get(obj, "id", where), _at(where, "id")),
        project=_identifier(_get(obj, "project", where), _at(where, "project")),
        name=_text(_get(obj, "name", where), _at(where, "name")),
        color=_text(_get(obj, "color", where), _at(where, "color")),
        description=(None if description is None
                     else _text(description, _at(where, "description")) or None),
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


def read_query_versions(payload: Any, what: str) -> dict[str, datetime]:
    """{"results": [{"id", "updatedAt"}]}: each query's last change, by id."""
    def build() -> dict[str, datetime]:
        results = _items(_get(payload, "results", ""), "results")
        return {_identifier(_get(item, "id", f"results[{i}]"), f"results[{i}].id"):
                _timestamp(_get(item, "updatedAt", f"results[{i}]"), f"results[{i}].updatedAt")
                for i, item in enumerate(results)}

    return _read(what, build)


def read_imports(payload: Any, what: str) -> tuple[ImportRecord, ...]:
    """{"results": [import, …]}, newest first."""
    def one(item: Any, where: str) -> ImportRecord:
        finished = _get(item, "finishedAt", where)
        by = _get(item, "by", where)
        return ImportRecord(
            id=_identifier(_get(item, "id", where), f"{where}.id"),
            file_name=_text(_get(item, "fileName", where), f"{where}.fileName"),
            state=_text(_get(item, "state", where), f"{where}.state"),
            rows=_count(_get(item, "rows", where), f"{where}.rows"),
            added=_count(_get(item, "added", where), f"{where}.added"),
            present=_count(_get(item, "present", where), f"{where}.present"),
            rejected=_count(_get(item, "rejected", where), f"{where}.rejected"),
            tagged_by_rules=_count(_get(item, "taggedByRules", where),
                                   f"{where}.taggedByRules"),
            by=None if by is None else _text(by, f"{where}.by"),
            created_at=_timestamp(_get(item, "createdAt", where), f"{where}.createdAt"),
            finished_at=None if finished is None
            else _timestamp(finished, f"{where}.finishedAt"))

    return _read(what, lambda: tuple(
        one(item, f"results[{i}]")
        for i, item in enumerate(_items(_get(payload, "results", ""), "results"))))


def read_tag(payload: Any, what: str) -> Tag:
    return _read(what, lambda: parse_tag(payload, ""))


def read_tag_merge(payload: Any, what: str) -> TagMerge:
    return _read(what, lambda: TagMerge(
        merged=parse_tag(_get(payload, "merged", ""), "merged"),
        into=parse_tag(_get(payload, "into", ""), "into"),
        operation=_text(_get(payload, "operation", ""), "operation"),
        queries=_count(_get(payload, "queries", ""), "queries")))


def read_tag_unmerge(payload: Any, what: str) -> TagUnmerge:
    return _read(what, lambda: TagUnmerge(
        restored=parse_tag(_get(payload, "restored", ""), "restored"),
        operation=_text(_get(payload, "operation", ""), "operation"),
        queries=_count(_get(payload, "queries", ""), "queries")))


def read_capabilities(document: Any, operations: Mapping[str, tuple[str, str]],
                      filter_schema: str = "") -> Capabilities:
    """An OpenAPI document's extensions: `operations` maps fields of Capabilities to their
    (method, path); one is offered when the document has that operation, marked
    `x-tagdesk-extension: true`, and so is each property of the request schema
    `filter_schema` marked so (`filter_fields`). Anything that is not such a document offers
    none."""
    paths = _dig(document, "paths")
    properties = _dig(document, "components", "schemas", filter_schema, "properties")

    def marked(found: Any) -> bool:
        return isinstance(found, dict) and found.get("x-tagdesk-extension") is True

    offered = {name: marked(_dig(paths, path, method.lower()))
               for name, (method, path) in operations.items()}
    fields = frozenset(name for name, found in (properties or {}).items() if marked(found))
    return Capabilities(**offered, filter_fields=fields,
                        numbers=_numbers_offered(document, properties, fields))


def _numbers_offered(document: Any, properties: Any, fields: frozenset[str]) -> tuple[str, ...]:
    """The numbers a deployment offers: those its sort field lists, where its filter has
    metricRanges (an extension)."""
    if "metricRanges" not in fields:
        return ()
    item = _dig(properties, "sort", "items")
    reference = item.get("$ref") if isinstance(item, dict) else None
    if isinstance(reference, str) and reference.startswith("#/"):
        item = _dig(document, *reference[2:].split("/"))
    listed = _dig(item, "properties", "field", "enum")
    return tuple(name for name in NUMBER_NAMES if isinstance(listed, list) and name in listed)


def _dig(found: Any, *names: str) -> Any:
    """found[names[0]][names[1]]…, or None where one is missing or not an object."""
    for name in names:
        found = found.get(name) if isinstance(found, dict) else None
    return found


def _count(value: Any, where: str) -> int:
    number = _integer(value, where)
    if number < 0:
        raise Malformed(f"{where} is a negative count ({number})")
    return number


def _counted(values: Any, where: str, key: str, read_key: Callable[[Any, str], Any]) -> tuple:
    """(key, count) pairs of a list of objects such as {"value": "de", "count": 3}."""
    return tuple((read_key(_get(item, key, f"{where}[{i}]"), f"{where}[{i}].{key}"),
                  _count(_get(item, "count", f"{where}[{i}]"), f"{where}[{i}].count"))
                 for i, item in enumerate(_items(values, where)))


def _item_sums(values: Any, where: str, key: str,
               read_key: Callable[[Any, str], Any]) -> FrozenMapping:
    """Each item's "sums" of a list such as languages, by its key (items without: none)."""
    return FrozenMapping(
        (read_key(_get(item, key, f"{where}[{i}]"), f"{where}[{i}].{key}"),
         _figures(item["sums"], f"{where}[{i}].sums", unknown=True))
        for i, item in enumerate(_items(values, where))
        if isinstance(item, dict) and item.get("sums") is not None)


def _metric_counts(value: Any, where: str) -> FrozenMapping:
    if value is None:
        return EMPTY
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")
    return FrozenMapping((name, _count(found, f"{where}.{name}"))
                         for name, found in value.items())


def parse_facets(obj: Any) -> Facets:
    languages, countries = _get(obj, "languages", ""), _get(obj, "countries", "")
    tags = _get(obj, "tags", "")
    currency = obj.get("currency")
    return Facets(
        total_records=_count(_get(obj, "totalRecords", ""), "totalRecords"),
        untagged=_count(_get(obj, "untagged", ""), "untagged"),
        languages=_counted(languages, "languages", "value", _text),
        countries=_counted(countries, "countries", "value", _text),
        tags=_counted(tags, "tags", "id", _integer),
        sums=_figures(obj.get("sums"), "sums", unknown=True),
        untagged_sums=_figures(obj.get("untaggedSums"), "untaggedSums", unknown=True),
        language_sums=_item_sums(languages, "languages", "value", _text),
        country_sums=_item_sums(countries, "countries", "value", _text),
        tag_sums=_item_sums(tags, "tags", "id", _integer),
        currency=None if currency is None else _text(currency, "currency") or None,
        metric_counts=_metric_counts(obj.get("metricCounts"), "metricCounts"),
        suggested=_counted(obj.get("suggested") or [], "suggested", "id", _integer),
    )


def _texts(obj: dict, name: str, where: str) -> tuple[str, ...]:
    values = obj.get(name)
    return () if values is None else tuple(
        _text(value, f"{where}.{name}[{i}]") for i, value in enumerate(_items(values, _at(
            where, name))))


def _whole_numbers(obj: dict, name: str, where: str) -> tuple[int, ...]:
    values = obj.get(name)
    return () if values is None else tuple(
        _integer(value, f"{where}.{name}[{i}]") for i, value in enumerate(_items(values, _at(
            where, name))))


def parse_filters(obj: Any, where: str) -> QueryFilters:
    """A filter body as the API writes it (a saved view's, a job's) back into QueryFilters:
    each field read by the kind of its default (a truth value, text, a whole number, a list of
    texts or of whole numbers)."""
    if not isinstance(obj, dict):
        raise Malformed(f"{where} is not a JSON object")
    match = obj.get("tagMatch", "any")
    if match not in TAG_MATCHES:
        raise Malformed(f'{where}.tagMatch is not "any" or "all" ({_show(match)})')
    found: dict[str, Any] = {}
    for field in fields(QueryFilters):
        name = BODY_NAMES[field.name]
        value = obj.get(name)
        if value is None:
            continue
        if isinstance(field.default, Mapping):
            found[field.name] = _ranges(value, f"{where}.{name}")
        elif field.name == "min_confidence":
            found[field.name] = _number(value, f"{where}.{name}")
        elif isinstance(field.default, bool):
            if not isinstance(value, bool):
                raise Malformed(f"{where}.{name} is not true or false ({_show(value)})")
            found[field.name] = value
        elif isinstance(field.default, str):
            found[field.name] = _text(value, f"{where}.{name}")
        elif isinstance(field.default, int):
            found[field.name] = _integer(value, f"{where}.{name}")
        elif field.type == "tuple[int, ...]":
            found[field.name] = _whole_numbers(obj, name, where)
        else:
            found[field.name] = _texts(obj, name, where)
    try:
        return QueryFilters(**found)
    except InvalidRequest as problem:
        said = str(problem).rstrip(".")
        raise Malformed(f"in {where}, {said[:1].lower()}{said[1:]}") from None


def _ranges(value: Any, where: str) -> dict[str, tuple[Bound, Bound]]:
    """{"volume": {"min": 100, "max": 5000}} as (least, greatest) by name."""
    if not isinstance(value, dict):
        raise Malformed(f"{where} is not a JSON object")
    ranges = {}
    for name, bounds in value.items():
        if not isinstance(bounds, dict):
            raise Malformed(f"{where}.{name} is not a JSON object")
        ranges[name] = tuple(None if bounds.get(side) is None
                             else _number(bounds[side], f"{where}.{name}.{side}")
                             for side in ("min", "max"))
    return ranges


def _sort(value: Any, where: str) -> tuple[tuple[str, str], ...] | None:
    if value is None:
        return None
    return tuple((_text(_get(item, "field", f"{where}[{i}]"), f"{where}[{i}].field"),
                  _text(item.get("direction", "ASC"), f"{where}[{i}].direction"))
                 for i, item in enumerate(_items(value, where)))


def parse_saved_view(obj: Any, where: str) -> SavedView:
    return SavedView(
        id=_integer(_get(obj, "id", where), _at(where, "id")),
        project=_identifier(_get(obj, "project", where), _at(where, "project")),
        name=_text(_get(obj, "name", where), _at(where, "name")),
        filters=parse_filters(_get(obj, "filters", where), _at(where, "filters")),
        sort=_sort(_get(obj, "sort", where), _at(where, "sort")),
        total_records=_count(_get(obj, "totalRecords", where), _at(where, "totalRecords")),
        columns=_columns(obj.get("columns"), _at(where, "columns")),
    )


def _columns(value: Any, where: str) -> tuple[str, ...] | None:
    """A saved view's number columns: None when the deployment keeps none (or says null)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise Malformed(f"{where} is not a list of numbers' names ({_show(value)})")
    return tuple(value)


def parse_rule(obj: Any, where: str) -> Rule:
    reason = obj.get("pausedReason") if isinstance(obj, dict) else None
    paused = _get(obj, "paused", where)
    if not isinstance(paused, bool):
        raise Malformed(f"{_at(where, 'paused')} is not true or false ({_show(paused)})")
    return Rule(
        id=_integer(_get(obj, "id", where), _at(where, "id")),
        project=_identifier(obj.get("project", ""), _at(where, "project")),
        name=_text(_get(obj, "name", where), _at(where, "name")),
        condition=parse_filters(_get(obj, "condition", where), _at(where, "condition")),
        tag_ids=_whole_numbers(obj, "tagIds", where),
        paused=paused,
        paused_reason=None if reason is None else _text(reason, _at(where, "pausedReason")),
        matching=_count(_get(obj, "matching", where), _at(where, "matching")),
        carrying=_count(_get(obj, "carrying", where), _at(where, "carrying")),
        created_at=_timestamp(_get(obj, "createdAt", where), _at(where, "createdAt")),
        updated_at=_timestamp(_get(obj, "updatedAt", where), _at(where, "updatedAt")),
    )


def read_rule(payload: Any, what: str) -> Rule:
    return _read(what, lambda: parse_rule(payload, ""))


def read_rules(payload: Any, what: str) -> tuple[Rule, ...]:
    return _read(what, lambda: _records(_get(payload, "results", ""), parse_rule, "results"))


def read_rule_preview(payload: Any, what: str) -> RulePreview:
    return _read(what, lambda: RulePreview(
        matching=_count(_get(payload, "matching", ""), "matching"),
        lacking=_count(_get(payload, "lacking", ""), "lacking"),
        sample=_records(_get(payload, "sample", ""), parse_query, "sample")))


def read_facets(payload: Any, what: str) -> Facets:
    return _read(what, lambda: parse_facets(payload))


def read_saved_view(payload: Any, what: str) -> SavedView:
    return _read(what, lambda: parse_saved_view(payload, ""))


def read_saved_views(payload: Any, what: str) -> tuple[SavedView, ...]:
    return _read(what, lambda: _records(_get(payload, "results", ""), parse_saved_view,
                                        "results"))


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


def read_rule_applied(payload: Any, what: str) -> RuleApplied:
    def parse() -> RuleApplied:
        cursor = _get(payload, "cursor", "")
        return RuleApplied(
            tagged=_count(_get(payload, "tagged", ""), "tagged"),
            checked=_count(_get(payload, "checked", ""), "checked"),
            matching=_count(_get(payload, "matching", ""), "matching"),
            remaining=_count(_get(payload, "remaining", ""), "remaining"),
            cursor=None if cursor is None else _count(cursor, "cursor"),
            applied_at=_text(_get(payload, "appliedAt", ""), "appliedAt"))
    return _read(what, parse)


def read_rule_unapplied(payload: Any, what: str, counted: str = "removed") -> RuleUnapplied:
    def parse() -> RuleUnapplied:
        more = _get(payload, "more", "")
        if not isinstance(more, bool):
            raise Malformed(f"more is not true or false ({_show(more)})")
        operation = payload.get("operation")
        return RuleUnapplied(
            removed=_count(_get(payload, counted, ""), counted),
            queries=_count(_get(payload, "queries", ""), "queries"),
            more=more,
            operation=None if operation is None else _text(operation, "operation"))
    return _read(what, parse)


@dataclass(frozen=True)
class CommonWords:
    """The words and two-word phrases most of a filter's queries contain (POST
    /api/queries/words, an extension: `Capabilities.common_words`), most first: (text,
    count), the count exact (the queries a text filter of it finds among the filter's)."""

    total_records: int
    words: tuple[tuple[str, int], ...]
    phrases: tuple[tuple[str, int], ...]


def read_common_words(payload: Any, what: str) -> CommonWords:
    return _read(what, lambda: CommonWords(
        total_records=_count(_get(payload, "totalRecords", ""), "totalRecords"),
        words=_counted(_get(payload, "words", ""), "words", "text", _text),
        phrases=_counted(_get(payload, "phrases", ""), "phrases", "text", _text)))
