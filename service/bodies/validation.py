"""Request bodies: strict JSON parsing and pydantic models that forbid unknown fields; a
filter's body (QueryFilterBody) also says what each of its fields is in the count engine's
terms (`to_filter`), so that a filter field is one place here."""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal
from urllib.parse import unquote

from flask import request
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    model_validator,
)

from weblib.tag_names import fold_tag_name, tag_name_problem
from weblib.text_rules import has_forbidden_character

from ..engine.counting import Filter
from ..engine.keys import MAX_ID
from ..engine.numbers import BY_NAME, NAMES
from ..patterns import compile_pattern
from .errors import ApiError, BadRequest

MAX_STRING = 1000
MAX_CODE = 35
MAX_ITEMS = 1000
MAX_LIMIT = 1000
DEFAULT_LIMIT = 50
MAX_PAGE = 1_000_000_000
# Every integer of a request is a 32-bit one, what the engine holds: ids and query keys are
# PostgreSQL `integer`s, and the bitmaps' keys stop at 2^32. Past it, a 400 naming the field.
MIN_INTEGER = -(2**31)
MAX_TAG_NAME = 200  # as the command line's create-tag (admin.create_tag) and the tags table
MAX_VIEW_NAME = 100  # as the saved_views table
MAX_TAG_DESCRIPTION = 300  # as the tags table
HEX_COLOR = re.compile(r"#[0-9a-fA-F]{6}")


def _printable(value: str) -> str:
    """The API's rule of characters for every string: weblib.text_rules."""
    if has_forbidden_character(value):
        raise ValueError("must not contain control characters or unpaired surrogates")
    return value


def _folded_name(value: str, limit: int) -> str:
    """A name compared as tag names are (weblib.tag_names: "ß" as "ss"): at most `limit`
    characters as sent, and also once folded; no control characters, no bidi controls;
    trimmed, not empty."""
    _printable(value)
    if len(value) > limit:
        raise ValueError(f"must be at most {limit} characters")
    value = value.strip()
    if not value:
        raise ValueError("must not be empty or only spaces")
    problem = tag_name_problem(value)
    if problem:
        raise ValueError(problem)
    if len(fold_tag_name(value)) > limit:
        raise ValueError(f"must be at most {limit} characters when compared without "
                         "regard to case")
    return value


def _tag_name(value: str) -> str:
    """A new tag's name (MAX_TAG_NAME)."""
    return _folded_name(value, MAX_TAG_NAME)


def _tag_description(value: str) -> str | None:
    """What a tag is for: the rule of characters of every text (weblib.text_rules), trimmed,
    at most MAX_TAG_DESCRIPTION characters; empty means none."""
    _printable(value)
    value = value.strip()
    if len(value) > MAX_TAG_DESCRIPTION:
        raise ValueError(f"A description can be at most {MAX_TAG_DESCRIPTION} characters; "
                         f"this one has {len(value):,}")
    return value or None


def _view_name(value: str) -> str:
    """A saved view's name (MAX_VIEW_NAME), compared as tag names are."""
    return _folded_name(value, MAX_VIEW_NAME)


def _pattern(value: str) -> str:
    """A pattern RE2 runs (service/patterns.py); its sentence names what is wrong."""
    compile_pattern(value)
    return value


def _tag_color(value: str) -> str:
    if not HEX_COLOR.fullmatch(value):
        raise ValueError("must be # followed by six hexadecimal digits, such as #1f77b4")
    return value.lower()


def _whole_number(value):
    # JSON Schema counts 26.0 as an integer; so do we. Booleans stay rejected (strict int).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _number_or_text(value) -> str:
    """Which member of TagRef checks a value: a string is a name, anything else an id (so a
    bad one is told what an id must be, once, not also that it is no string)."""
    return "str" if isinstance(value, str) else "int"


Int = Annotated[StrictInt, BeforeValidator(_whole_number), Field(ge=MIN_INTEGER, le=MAX_ID)]
Text = Annotated[StrictStr, Field(max_length=MAX_STRING), AfterValidator(_printable)]
Code = Annotated[StrictStr, Field(max_length=MAX_CODE), AfterValidator(_printable)]
TagRef = Annotated[Annotated[Int, Tag("int")] | Annotated[Text, Tag("str")],
                   Discriminator(_number_or_text)]
TagName = Annotated[StrictStr, AfterValidator(_tag_name)]
# A suggestion's confidence: a number from 0 to 1.
Confidence = Annotated[StrictInt | StrictFloat, Field(ge=0, le=1)]
TagColor = Annotated[StrictStr, AfterValidator(_tag_color)]
ViewName = Annotated[StrictStr, AfterValidator(_view_name)]
TagDescription = Annotated[StrictStr, AfterValidator(_tag_description)]
Pattern = Annotated[StrictStr, AfterValidator(_printable), AfterValidator(_pattern)]


def _number_name(value: str) -> str:
    if value not in NAMES:
        raise ValueError(f"'{value}' is not a number a query has; use one of "
                         f"{', '.join(NAMES)}")
    return value


NumberName = Annotated[StrictStr, AfterValidator(_number_name)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RangeBody(Strict):
    """A number's bounds, inclusive; either may be left out, not both."""

    min: StrictInt | StrictFloat | None = None
    max: StrictInt | StrictFloat | None = None

    @model_validator(mode="after")
    def _bounds(self) -> RangeBody:
        if self.min is None and self.max is None:
            raise ValueError("give 'min', 'max' or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("'min' must not be greater than 'max'")
        return self


class SortItem(Strict):
    field: StrictStr
    direction: StrictStr = "ASC"


class Paged(Strict):
    # Bounds narrower than Int's are given with the default (Field(…) =): pydantic then
    # checks them in place of Int's, and a refusal names the field's own limit.
    page: Int = Field(1, ge=1, le=MAX_PAGE)
    limit: Int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    sort: Annotated[list[SortItem], Field(max_length=5)] = []


class QueryFilterBody(Strict):
    """The filter of queries/list, and the whole body of queries/facets (an extension)."""

    query: Text | None = None
    languages: Annotated[list[Code], Field(max_length=MAX_ITEMS)] | None = None
    countries: Annotated[list[Code], Field(max_length=MAX_ITEMS)] | None = None
    tagIds: Annotated[list[TagRef], Field(max_length=MAX_ITEMS)] | None = None  # noqa: N815
    tagNames: Annotated[list[Text], Field(max_length=MAX_ITEMS)] | None = None  # noqa: N815
    # Extensions (docs/api.md): how tagIds and tagNames combine, tags the queries must not
    # carry, queries with no tag at all, and a regular expression on the text.
    tagMatch: Literal["any", "all"] = "any"  # noqa: N815
    excludeTagIds: Annotated[list[Int], Field(max_length=MAX_ITEMS)] | None = None  # noqa: N815
    excludeTagNames: Annotated[list[Text], Field(max_length=MAX_ITEMS)] | None = None  # noqa: N815
    untagged: StrictBool = False
    pattern: Pattern | None = None
    # Numbers within bounds, by name (service/engine/numbers.py).
    metricRanges: dict[NumberName, RangeBody] | None = None  # noqa: N815
    # Suggested one of these tags (service/engine/suggested.py), at or above minConfidence
    # (absent: the project's default confidence; also the threshold of include "suggestions").
    suggestedTagIds: Annotated[list[Int], Field(max_length=MAX_ITEMS)] | None = None  # noqa: N815
    minConfidence: Confidence | None = None  # noqa: N815

    def to_filter(self, tags: dict[int, str]) -> Filter:
        """The engine's Filter, field by field, its tags resolved to the project's tag ids
        (`tags`: id → folded name). A tag that is not the project's matches nothing where it
        is required, and is no matter where excluded."""
        if self.untagged and (self.tagIds or self.tagNames):
            raise BadRequest(["'untagged': queries with no tag cannot also have one of "
                              "'tagIds' or 'tagNames'; send one or the other."])
        required, every = _named_tags(self.tagIds, self.tagNames, tags)
        if self.tagMatch == "all":
            chosen = sorted(set().union(*required))
            required = [frozenset({tag_id}) for tag_id in chosen] if every else [frozenset()]
        excluded, _every = _named_tags(self.excludeTagIds, self.excludeTagNames, tags)
        return Filter(
            text=self.query or "",
            languages=frozenset(code.lower() for code in self.languages or ()),
            countries=frozenset(code.upper() for code in self.countries or ()),
            required=tuple(required),
            excluded=frozenset().union(*excluded),
            untagged=bool(self.untagged),
            pattern=self.pattern or "",
            match_all=self.tagMatch == "all",
            ranges=_stored_ranges(self.metricRanges or {}),
            suggested=None if self.suggestedTagIds is None else frozenset(
                tag_id for tag_id in self.suggestedTagIds if tag_id in tags),
            min_confidence=None if self.minConfidence is None else float(self.minConfidence),
        )


def _stored_ranges(ranges: dict[str, RangeBody]) -> tuple[tuple[str, int | None, int | None],
                                                          ...]:
    """Numbers' bounds as the engine stores the numbers, by name."""
    found = []
    for name, bounds in sorted(ranges.items()):
        number = BY_NAME[name]
        found.append((name,
                      None if bounds.min is None else number.lower_bound(bounds.min),
                      None if bounds.max is None else number.upper_bound(bounds.max)))
    return tuple(found)


def _tag_ids(values: list) -> list[int]:
    """The values that can name a tag; anything else names no tag."""
    ids = []
    for value in values:
        if isinstance(value, str):
            value = value.strip()
            if not (value.isascii() and value.isdigit()):
                continue
            value = int(value)
        if 1 <= value <= MAX_ID:
            ids.append(value)
    return ids


def _named_tags(ids, names, tags: dict[int, str]) -> tuple[list[frozenset[int]], bool]:
    """The project's tags of a filter's lists by id and by name, as sets (one per list), and
    whether every one exists."""
    by_name = {name: tag_id for tag_id, name in tags.items()}
    sets, every = [], True
    if ids:
        named_ids = [_tag_ids([ref]) for ref in ids]  # [] for a value that names no tag
        every &= all(found and found[0] in tags for found in named_ids)
        sets.append(frozenset(found[0] for found in named_ids if found and found[0] in tags))
    if names:
        wanted = {fold_tag_name(name) for name in names}
        every &= wanted <= set(by_name)
        sets.append(frozenset(by_name[name] for name in wanted if name in by_name))
    return sets, every


class QueryListBody(Paged, QueryFilterBody):
    # What each item carries beyond the reference's fields: "metrics", its numbers;
    # "suggestions", its suggested tags.
    include: Annotated[list[Literal["metrics", "suggestions"]], Field(max_length=5)] = []


class FacetsBody(QueryFilterBody):
    # The numbers to sum (or average) beside each count.
    sums: Annotated[list[NumberName], Field(max_length=len(NAMES))] = []


def stored_filter(kept: str) -> QueryFilterBody:
    """A filter a rule (its condition) or a saved view keeps: JSON, validated when saved. One
    kept before every integer was held to 32 bits may hold a tag id past them, which named no
    tag: it is read as 0, which names none either."""
    fields = json.loads(kept)
    for name in ("tagIds", "excludeTagIds"):
        if isinstance(fields.get(name), list):
            fields[name] = [0 if isinstance(value, int) and not MIN_INTEGER <= value <= MAX_ID
                            else value for value in fields[name]]
    return QueryFilterBody.model_validate(fields)


class TagListBody(Paged):
    name: Text | None = None


class CreateTagBody(Strict):
    name: TagName
    color: TagColor | None = None


class UpdateTagBody(Strict):
    """A tag's new name, colour or description (an extension). Absent: kept; the defaults are
    never validated, so a `null` name or colour is a 400, while `"description": null` (or
    "") takes the description away."""

    id: Int
    name: TagName = None
    color: TagColor = None
    description: TagDescription | None = None


class MergeTagBody(Strict):
    id: Int
    intoId: Int  # noqa: N815


OPERATION = r"^[0-9a-f]{32}$"


class UnmergeTagBody(Strict):
    operation: Annotated[str, Field(pattern=OPERATION)]


class ViewListBody(Strict):
    """Saved views (an extension): the list takes no field."""


Columns = Annotated[list[NumberName], Field(max_length=len(NAMES))]


class CreateViewBody(Strict):
    name: ViewName
    filters: QueryFilterBody
    sort: Annotated[list[SortItem], Field(max_length=5)] | None = None
    columns: Columns | None = None  # the numbers it shows ([]: none; absent: the default)


class ViewIdBody(Strict):
    id: Int


class UpdateViewBody(ViewIdBody):
    # Absent: kept. The defaults are never validated, so a `null` name or filter is a 400
    # while a left-out one is None here; `sort: null` goes back to the default order.
    name: ViewName = None
    filters: QueryFilterBody = None
    sort: Annotated[list[SortItem], Field(max_length=5)] | None = None
    columns: Columns | None = None  # `null`: the default ones


class SetTagsItem(Strict):
    query: Text
    language: Code
    country: Code
    tagIds: Annotated[list[Int], Field(max_length=MAX_ITEMS)]  # noqa: N815


class SetTagsBody(Strict):
    queries: Annotated[list[SetTagsItem], Field(max_length=MAX_ITEMS)]


class PageParams(Strict):
    page: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 1
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def read_json() -> object:
    """The request's JSON body; an empty body is `{}`. 415 for other media types."""
    raw = request.get_data(cache=True)  # raises 413 past MAX_CONTENT_LENGTH
    if not raw.strip():
        return {}
    if request.mimetype != "application/json":
        raise ApiError(415, "Request body must be JSON (Content-Type: application/json).")
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise BadRequest("Request body is not valid JSON.") from None


def describe(error: ValidationError) -> list[str]:
    messages = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"] if part not in _UNION_TAGS)
        if item["type"] == "extra_forbidden":
            messages.append(f"Unknown field '{location}'.")
        elif item["type"] == "missing":
            messages.append(f"'{location}' is required.")
        else:
            message = item["msg"].removeprefix("Value error, ")
            message += "" if message.endswith(".") else "."  # a sentence of ours has its own
            messages.append(f"'{location}': {message}" if location else message)
    return messages


# pydantic names the member of a union in error locations (TagRef's "int", "str"); people
# don't care.
_UNION_TAGS = {"int", "str"}


def parse(model: type[Strict], data: object) -> Strict:
    if not isinstance(data, dict):
        raise BadRequest(["Request body must be a JSON object."])
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise BadRequest(describe(error)) from None


def parse_query_string(model: type[Strict]) -> Strict:
    data = {}
    for name, value in request.args.items():
        if name in model.model_fields:
            if not re.fullmatch(r"[0-9]{1,10}", value):
                raise BadRequest([f"'{name}' must be a positive whole number."])
            data[name] = int(value)
        else:
            data[name] = value
    return parse(model, data)


ACTOR_HEADER = "X-Tagdesk-Actor"
MAX_ACTOR = 100


def read_actor() -> str | None:
    """Who the caller says makes a change (an extension, docs/api.md): the header
    X-Tagdesk-Actor, UTF-8 percent-encoded (headers carry Latin-1 only), recorded with the tags
    a change adds. A label the caller gives, not an identity the service checks."""
    raw = request.headers.get(ACTOR_HEADER)
    if raw is None:
        return None
    try:
        name = unquote(raw, errors="strict").strip()
    except UnicodeDecodeError:
        raise BadRequest([f"'{ACTOR_HEADER}' must be UTF-8, percent-encoded."]) from None
    if has_forbidden_character(name):
        raise BadRequest([f"'{ACTOR_HEADER}' must not contain control characters."])
    if len(name) > MAX_ACTOR:
        raise BadRequest([f"'{ACTOR_HEADER}' must be at most {MAX_ACTOR} characters."])
    # Shown as who added a tag and in the activity log: the characters names may hold.
    problem = tag_name_problem(name) if name else None
    if problem:
        raise BadRequest([f"'{ACTOR_HEADER}' {problem}."])
    return name or None
