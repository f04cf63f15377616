"""Filtering, sorting and paging of queries and tags, as SQLAlchemy Core statements."""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache

from cachetools import LRUCache
from pyroaring import BitMap
from sqlalchemy import (
    Integer,
    String,
    and_,
    any_,
    bindparam,
    case,
    cast,
    column,
    false,
    func,
    literal,
    or_,
    select,
    table,
    text,
    tuple_,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from weblib.tag_names import fold_tag_name

from . import bitmap_index
from .errors import BadRequest
from .match_counts import MatchCounts
from .models import (
    Project,
    Query,
    Tag,
    language_country_counts,
    query_tags,
    text_gram_counts,
)
from .validation import MAX_ID, QueryListBody, SortItem, TagListBody

QUERY_SORT_FIELDS = {
    "query": Query.query,
    "language": Query.language,
    "country": Query.country,
    "updatedAt": Query.updated_at,
    "id": Query.id,
}
TAG_SORT_FIELDS = {"name": Tag.name_folded, "id": Tag.id}
DEFAULT_QUERY_SORT = [SortItem(field="updatedAt", direction="DESC")]
DEFAULT_TAG_SORT = [SortItem(field="name", direction="ASC")]

# The filter's field that holds the codes of each code sort field.
CODE_FILTERS = {"language": "languages", "country": "countries"}

FTS = table("queries_fts", column("rowid"))
# The trigram index needs at least three characters; shorter terms fall back to LIKE.
TRIGRAM = 3
# PostgreSQL: the project (by its number), codes and lower-cased text of every query, with
# the trigram index (migrations 0006 and 0011).
TEXTS = table("query_texts", column("pk"), column("project_number"), column("language"),
              column("country"), column("folded"))
PROJECT_NUMBERS = table("projects", column("id", Project.id.type), column("number"))
# The longest term whose matches text_gram_counts holds (migration 0009): on SQLite only the
# terms shorter than the trigram index's three characters, folded as that index folds
# (migration 0013).
COUNTED_GRAM_LENGTH = {"postgresql": 4, "sqlite": 2}
# SQLite: every character the trigram index folds to another, and what it becomes
# (migration 0013).
FOLDS = table("text_folds", column("c"), column("folded"))
# A filter matching at least this share of the project is cheaper to check row by row in
# sort order (about 1/share rows read per result) than to collect and sort all its matches.
SCAN_IN_ORDER_SHARE = 0.005
# From this offset on, an unfiltered page first picks its row keys from the sort order's index
# alone, then reads those rows: skipping 99,000 rows in the index costs ~10 ms, reading each
# skipped row from the table cost 1.3 ms per thousand (a CSV export or a bulk edit of 100,000
# queries reads pages that deep).
DEFER_FROM_OFFSET = 2000
# Statements of filters without text (none, or languages, countries and tags), built once per
# shape with named parameters and run with each request's values: building them cost 0.6–1.2
# ms of CPU, about a third of such a request. A shape is the dialect, the sort, which filters
# are given and how the page is read; a client can make many, so only the latest are kept.
PREPARED_SHAPES = 256
# A page of a filter with one tag and few matches, sorted by time, may be found by walking the
# tag's links in time order (_walked_keys): this many links a statement, when the links
# expected to be walked are at most LINK_WALK_PER_MATCH times the matches (a link read from
# the index costs a fraction of a row read at random), from LINK_WALK_FROM matches (below,
# reading them all is cheap).
LINK_WALK_BATCH = 4096
LINK_WALK_PER_MATCH = 8
LINK_WALK_FROM = 2000


def order_by(sort: list[SortItem], fields: dict, default: list[SortItem], tie_breaker):
    clauses, errors = [], []
    for position, item in enumerate(sort or default):
        column = fields.get(item.field)
        direction = item.direction.upper()
        if column is None:
            errors.append(
                f"'sort.{position}.field': '{item.field}' is not a sort field; "
                f"use one of {', '.join(fields)}."
            )
        if direction not in ("ASC", "DESC"):
            errors.append(f"'sort.{position}.direction': use ASC or DESC.")
        if column is not None and direction in ("ASC", "DESC"):
            clauses.append(column.desc() if direction == "DESC" else column.asc())
    if errors:
        raise BadRequest(errors)
    # Sorted by the tie-breaker itself: no second term (SQLite then ignored the covering
    # (project_id, id) index for a page sorted by id and scanned the global id index instead).
    if any(fields.get(item.field) is tie_breaker for item in sort or default):
        return clauses
    return [*clauses, tie_breaker.asc()]


def _tag_ids(values: list) -> list[int]:
    """The values that can name a tag; anything else names no tag and so matches nothing."""
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


@dataclass(frozen=True)
class Filters:
    """A queries/list filter with its tags resolved to this project's tag ids."""

    text: str
    languages: frozenset[str]
    countries: frozenset[str]
    tag_sets: tuple[frozenset[int], ...]  # the query has one of each set's tags
    # How many queries carry each resolved tag (tags.query_count, kept by triggers), and the
    # project's query count, read with them.
    tag_counts: dict[int, int] = field(default_factory=dict, compare=False, hash=False)
    project_total: int | None = field(default=None, compare=False, hash=False)
    # Codes as the named parameters `languages` and `countries` (a statement built once for
    # its shape, _Prepared), rather than as the values themselves.
    named: bool = field(default=False, compare=False, hash=False)

    @property
    def known_total(self) -> int | None:
        """The number of matches when the tag rows already told it: one tag, nothing else."""
        if self.text or self.languages or self.countries or len(self.tag_sets) != 1:
            return None
        (ids,) = self.tag_sets
        return self.tag_counts[next(iter(ids))] if len(ids) == 1 else None

    @property
    def empty(self) -> bool:
        return not (self.text or self.languages or self.countries or self.tag_sets)


def resolve_filters(session: Session, project_id: str, body: QueryListBody) -> Filters | None:
    """None when a tag filter names no tag of this project: then nothing can match."""
    tag_sets, tag_counts, project_total = [], {}, None

    def project_tags(by: str, values) -> frozenset[int]:
        nonlocal project_total
        rows = session.connection().execute(
            _tag_lookup(by), {"project_id": project_id, "tags": sorted(values)}).all()
        tag_counts.update((tag_id, count) for tag_id, count, _total in rows)
        project_total = rows[0][2] if rows else project_total
        return frozenset(tag_id for tag_id, _count, _total in rows)

    if body.tagIds:
        wanted = _tag_ids(body.tagIds)
        tag_sets.append(project_tags("id", wanted) if wanted else frozenset())
    if body.tagNames:
        tag_sets.append(project_tags("name_folded",
                                     {fold_tag_name(name) for name in body.tagNames}))
    if any(not ids for ids in tag_sets):
        return None
    return Filters(
        text=body.query or "",
        languages=frozenset(code.lower() for code in body.languages or ()),
        countries=frozenset(code.upper() for code in body.countries or ()),
        tag_sets=tuple(tag_sets),
        tag_counts=tag_counts,
        project_total=project_total,
    )


@lru_cache(maxsize=2)
def _tag_lookup(by: str):
    """The project's tags whose `by` ("id" or "name_folded") is one of the parameter `tags`,
    each with its query count and the project's."""
    return select(Tag.id, Tag.query_count, _project_total(PROJECT_PARAMETER)).where(
        Tag.project_id == PROJECT_PARAMETER,
        getattr(Tag, by).in_(bindparam("tags", expanding=True)))


def _in(column, name: str, values, filters: Filters):
    """`column IN values`; as the named parameter `name` when the filter's statements are
    built once for their shape (Filters.named)."""
    values = sorted(values)
    return column.in_(bindparam(name, values, expanding=True) if filters.named else values)


def _tag_set_name(position: int) -> str:
    return f"tags_{position}"


def _trigram_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _sqlite_folds(session: Session) -> tuple[dict[str, str], dict[str, list[str]]]:
    """SQLite: (each character the trigram index folds to another → what it becomes, each
    folded character → every character that folds to it, itself included), from
    `text_folds` (migration 0013). Read once per database connection: the table changes only
    with a migration."""
    info = session.connection().info
    if "tagdesk_text_folds" not in info:
        folds = dict(session.execute(select(FOLDS.c.c, FOLDS.c.folded)).all())
        spellings: dict[str, list[str]] = defaultdict(list)
        for character, folded in sorted(folds.items()):
            spellings[folded].append(character)
        info["tagdesk_text_folds"] = folds, {
            folded: [folded, *characters] for folded, characters in spellings.items()}
    return info["tagdesk_text_folds"]


def _sqlite_folded(session: Session, term: str) -> str:
    """SQLite: `term` folded as the trigram index folds it, character by character."""
    folds, _spellings = _sqlite_folds(session)
    return "".join(folds.get(character, character) for character in term)


def _sqlite_contains(session: Session, term: str):
    """SQLite: the text contains `term` folded as the trigram index folds it (the terms that
    index cannot match, shorter than three characters). It does when it contains one of the
    strings that fold to the same: the term's characters folded, each replaced by any
    character that folds to it ("σο": "σο", "Σο", "ςο", "σΟ", …). LIKE itself ignores ASCII
    case, so spellings that differ only in it are left out: "ä" is `LIKE '%ä%' OR LIKE '%Ä%'`,
    "sh" `LIKE '%sh%' OR LIKE '%ſh%'` (ſ folds to s)."""
    folds, spellings = _sqlite_folds(session)
    choices = []
    for character in term:
        folded = folds.get(character, character)
        choices.append(sorted({c.lower() if c.isascii() else c
                               for c in spellings.get(folded, [folded])}))
    return or_(*(Query.query.contains("".join(spelling), autoescape=True)
                 for spelling in itertools.product(*choices)))


def _fts_rowids(term: str):
    return select(FTS.c.rowid).where(
        text("queries_fts MATCH :phrase").bindparams(phrase=_trigram_phrase(term)))


def _contains_pattern(term: str) -> str:
    """The LIKE pattern (escape character "/") of a text containing `term`: the same for the
    count row by row and for the bitmap index's words, so that both agree."""
    escaped = term.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


def _folded_contains(term: str):
    """The text contains `term`, ignoring case: ILIKE lower-cases both sides, and the stored
    side was lower-cased once, on insert (migration 0006)."""
    return TEXTS.c.folded.like(func.lower(_contains_pattern(term)), escape="/")


def _text_matches(project_id: str, filters: Filters) -> list:
    """PostgreSQL: a filter with text as conditions on `query_texts` alone: the substring, and
    the codes and tags (migration 0011). The trigram index's candidates are checked on the
    narrow copy, so no `queries` row is read for a candidate that does not match."""
    number = select(PROJECT_NUMBERS.c.number).where(PROJECT_NUMBERS.c.id == project_id)
    conditions = [TEXTS.c.project_number == number.scalar_subquery(),
                  _folded_contains(filters.text)]
    if filters.languages:
        conditions.append(TEXTS.c.language.in_(sorted(filters.languages)))
    if filters.countries:
        conditions.append(TEXTS.c.country.in_(sorted(filters.countries)))
    for ids in filters.tag_sets:
        conditions.append(TEXTS.c.pk.in_(
            select(query_tags.c.query_pk).where(query_tags.c.tag_id.in_(sorted(ids)))))
    return conditions


def _texts_count(project_id: str, filters: Filters):
    """PostgreSQL: the matches of a filter with text, counted row by row on `query_texts`."""
    return select(func.count()).select_from(TEXTS).where(
        *_text_matches(project_id, filters)).scalar_subquery()


def _texts_count_and_keys(project_id: str, filters: Filters):
    """PostgreSQL: as _texts_count (column `total`), and the matches' row keys (column
    `match_keys`) when they are few enough to be collected and sorted: the page then reads
    those rows by key instead of finding every match a second time."""
    total = func.count()
    few = total < SCAN_IN_ORDER_SHARE * func.greatest(1, _project_total(project_id))
    keys = case((few, func.array_agg(TEXTS.c.pk))).label("match_keys")
    return (select(total.label("total"), keys).select_from(TEXTS)
            .where(*_text_matches(project_id, filters)).subquery())


def _counted_on_texts(session: Session, filters: Filters) -> bool:
    """PostgreSQL: a filter with text is counted row by row on `query_texts` (_texts_count),
    unless it is a short text alone (text_gram_counts)."""
    if not filters.text or session.get_bind().dialect.name != "postgresql":
        return False
    only_text = not (filters.languages or filters.countries or filters.tag_sets)
    return not (only_text and len(filters.text) <= COUNTED_GRAM_LENGTH["postgresql"])


def _counted_from_bitmaps(session: Session, filters: Filters) -> bool:
    """PostgreSQL: a filter with text without a space (and not a short text alone, counted
    ahead) is counted from the bitmap index (service/bitmap_index.py) while it is current."""
    return _counted_on_texts(session, filters) and bitmap_index.usable(filters.text)


def _uses_trigram_index(session: Session, term: str) -> bool:
    return session.get_bind().dialect.name == "sqlite" and len(term) >= TRIGRAM


def _clustered_in_codes(filters: Filters, sort: list[SortItem]) -> bool:
    """Sorted first by language or country, with a filter on text, language or country. Such
    matches cluster in a few codes (German words and language "de" in DE, AT and CH), so
    walking the sort order's index and checking each row can pass most of the project before
    the first match: at a million queries, 0.3–1.6 s for "schuhe" or "de" by country Z to A.
    Such pages are read code by code (_paged_by_code), or collected and sorted. (Tags do not
    cluster so: a tag's matches are met early in any order.)"""
    return (bool(sort) and sort[0].field in ("language", "country")
            and bool(filters.text or filters.languages or filters.countries))


def _counter_conditions(project_id: str, filters: Filters) -> list:
    """The rows of `language_country_counts` a language and country filter selects."""
    counters = language_country_counts.c
    conditions = [counters.project_id == project_id]
    if filters.languages:
        conditions.append(_in(counters.language, "languages", filters.languages, filters))
    if filters.countries:
        conditions.append(_in(counters.country, "countries", filters.countries, filters))
    return conditions


def _code_groups(session: Session, project_id: str, filters: Filters, field: str,
                 descending: bool) -> list[tuple[str, int, int]]:
    """(code, matches, the project's queries with that code) for each code the filter
    matches, in the page's order of codes. Without text or tags, from the counters alone."""
    counters = language_country_counts.c
    counter_code = counters.language if field == "language" else counters.country
    sizes = (select(counter_code.label("code"), func.sum(counters.query_count).label("size"))
             .where(counters.project_id == project_id).group_by(counter_code).subquery())
    if filters.text and session.get_bind().dialect.name == "postgresql":
        code = TEXTS.c[field]
        matches = (select(code.label("code"), func.count().label("n"))
                   .where(*_text_matches(project_id, filters)).group_by(code).subquery())
    elif filters.text and _uses_trigram_index(session, filters.text):
        code = QUERY_SORT_FIELDS[field]
        matches = (_fts_matches(session, project_id, filters, code.label("code"),
                                func.count().label("n")).group_by(code).subquery())
    elif filters.text or filters.tag_sets:
        code = QUERY_SORT_FIELDS[field]
        matches = (select(code.label("code"), func.count().label("n"))
                   .where(*_conditions(session, project_id, filters, in_order=False))
                   .group_by(code).subquery())
    else:
        matches = (select(counter_code.label("code"), func.sum(counters.query_count).label("n"))
                   .where(*_counter_conditions(project_id, filters))
                   .group_by(counter_code).subquery())
    order = matches.c.code.desc() if descending else matches.c.code.asc()
    return [tuple(row) for row in session.execute(
        select(matches.c.code, matches.c.n, sizes.c.size)
        .join(sizes, sizes.c.code == matches.c.code)
        .where(matches.c.n > 0).order_by(order))]


def _paged_by_code(session: Session, project_id: str, filters: Filters, columns: list,
                   field: str, groups: list[tuple[str, int, int]], offset: int, limit: int):
    """A page sorted by language or country (ties by id) when the filter clusters in codes:
    the filter's count per code (`groups`, from _code_groups) says which codes the page falls
    in, and only those codes' rows are read, each code's by id — walked where the filter
    matches much of the code, collected where it matches little. The caller has checked that
    the offset falls within the matches."""
    postgres = session.get_bind().dialect.name == "postgresql"
    code_column = QUERY_SORT_FIELDS[field]
    by_id = [SortItem(field="id", direction="ASC")]
    parts = []
    for code, matches, size in groups:
        if offset >= matches:
            offset -= matches
            continue
        take = min(limit, matches - offset)
        walk = matches >= SCAN_IN_ORDER_SHARE * max(1, size)
        # The filter narrowed to this code (one the filter matches), so that a collected
        # part finds only its own code's matches.
        in_code = replace(filters, **{CODE_FILTERS[field]: frozenset({code})})
        part = select(*columns).where(
            code_column == code,
            *_conditions(session, project_id, in_code, in_order=walk, sort=by_id))
        if not walk and postgres:
            fenced = part.offset(0).subquery()
            part = select(fenced).order_by(fenced.c.id)
        else:
            part = part.order_by(Query.id)
        parts.append(select(part.limit(take).offset(offset).subquery()))
        limit -= take
        offset = 0
        if not limit:
            break
    return parts[0] if len(parts) == 1 else union_all(*parts)


def _newest_first(sort: list[SortItem]) -> bool:
    return not sort or (len(sort) == 1 and sort[0].field == "updatedAt"
                        and sort[0].direction.upper() == "DESC")


def _language_country_index_orders(filters: Filters, sort: list[SortItem]) -> bool:
    """One language and one country, newest first: an equality prefix of
    `ix_queries_language_country_updated` (project, language, country, updated_at DESC, id on
    SQLite), whose walk is already the page's order — better than checking rows in order."""
    return (len(filters.languages) == 1 and len(filters.countries) == 1
            and not filters.text and not filters.tag_sets and _newest_first(sort))


def _conditions(session: Session, project_id: str, filters: Filters, *, in_order: bool,
                text_joined: bool = False, sort: list[SortItem] | None = None) -> list:
    """WHERE conditions in one of two shapes.

    Driving (in_order=False): each filter may use its index to find its few matches, which
    are then sorted. In order (for filters that match much of the project): on SQLite the
    filters are written so that no index of theirs is usable (`pk + 0`, `language || ''`), so
    SQLite walks the sort order's index and checks each row, stopping after one page; on
    PostgreSQL the substring check is written so that the planner expects many matches.
    """
    conditions = [Query.project_id == project_id]
    sqlite = session.get_bind().dialect.name == "sqlite"
    if filters.text and not text_joined:
        if _uses_trigram_index(session, filters.text):
            key = Query.pk + 0 if in_order else Query.pk
            conditions.append(key.in_(_fts_rowids(filters.text)))
        elif sqlite:
            conditions.append(_sqlite_contains(session, filters.text))
        elif in_order:
            # PostgreSQL cannot estimate a substring's share (it guessed 0.01 % for one that
            # matches 2 %) and then sorts every match instead of walking the sort order. The
            # count has shown the share is large; COALESCE makes the planner assume half.
            conditions.append(func.coalesce(
                Query.query.icontains(filters.text, autoescape=True), false()))
        else:
            # Every condition of the filter is checked on query_texts: the rows found are the
            # matches.
            matches = select(TEXTS.c.pk).where(*_text_matches(project_id, filters))
            return [*conditions, Query.pk.in_(matches)]
    language, country = Query.language, Query.country
    if in_order and sqlite and not _language_country_index_orders(filters, sort or []):
        language, country = Query.language.concat(""), Query.country.concat("")
    if filters.languages:
        conditions.append(_in(language, "languages", filters.languages, filters))
    if filters.countries:
        conditions.append(_in(country, "countries", filters.countries, filters))
    for position, ids in enumerate(filters.tag_sets):
        tagged = _in(query_tags.c.tag_id, _tag_set_name(position), ids, filters)
        if in_order or text_joined:
            conditions.append(select(query_tags.c.query_pk).where(
                query_tags.c.query_pk == Query.pk, tagged).exists())
        else:
            conditions.append(Query.pk.in_(select(query_tags.c.query_pk).where(tagged)))
    return conditions


def _contiguous_span(session: Session, project_id: str) -> tuple[int, int] | None:
    """The project's lowest and highest row key when no other project's row lies between
    them — as after a bulk import. Row keys are unique integers, so the span holds only this
    project's rows exactly when its width equals the project's query count."""
    # Three single-aggregate subqueries: each is one index probe (min/max optimization).
    in_project = Query.project_id == project_id
    low, high, count = session.execute(select(
        select(func.min(Query.pk)).where(in_project).scalar_subquery(),
        select(func.max(Query.pk)).where(in_project).scalar_subquery(),
        select(Project.query_count).where(Project.id == project_id).scalar_subquery(),
    )).one()
    if low is not None and high - low + 1 == count:
        return low, high
    return None


def _project_total(project_id: str):
    return select(Project.query_count).where(Project.id == project_id).scalar_subquery()


def _count(session: Session, project_id: str, filters: Filters):
    """The number of matches, as an expression to select (with other figures, in one
    statement)."""
    if filters.empty:
        return _project_total(project_id)
    if filters.known_total is not None:
        # Read with the tag itself; kept by triggers on the links (migration 0005).
        return literal(filters.known_total)
    only_tags = not (filters.text or filters.languages or filters.countries)
    if only_tags and len(filters.tag_sets) == 1:
        (ids,) = filters.tag_sets
        # Links never cross projects (set-tags checks every tag), so the project's tags
        # alone say which of its queries match: no need to visit the queries table.
        return (select(func.count(query_tags.c.query_pk.distinct()))
                .where(_in(query_tags.c.tag_id, _tag_set_name(0), ids, filters))
                .scalar_subquery())
    if not (filters.text or filters.tag_sets):
        # Languages and countries only: a sum over the project's counters (migration 0005).
        counters = language_country_counts.c
        return (select(func.coalesce(func.sum(counters.query_count), 0))
                .where(*_counter_conditions(project_id, filters)).scalar_subquery())
    if _counted_on_texts(session, filters):
        return _texts_count(project_id, filters)
    only_text = not (filters.languages or filters.countries or filters.tag_sets)
    dialect = session.get_bind().dialect.name
    if only_text and len(filters.text) <= COUNTED_GRAM_LENGTH.get(dialect, 0):
        return _gram_count(session, project_id, filters)
    if filters.text and _uses_trigram_index(session, filters.text):
        span = _contiguous_span(session, project_id) if only_text else None
        if span is not None:
            # Every row key in the span is this project's: the index alone can count.
            return select(func.count()).select_from(FTS).where(
                text("queries_fts MATCH :phrase").bindparams(
                    phrase=_trigram_phrase(filters.text)),
                FTS.c.rowid.between(*span)).scalar_subquery()
        return _fts_matches(session, project_id, filters, func.count()).scalar_subquery()
    return select(func.count()).select_from(Query).where(
        *_conditions(session, project_id, filters, in_order=False)).scalar_subquery()


def _fts_matches(session: Session, project_id: str, filters: Filters, *columns):
    """SQLite: `columns` of a filter's matches, found from its text's full-text matches and
    checked row by row for the rest (each tag by one probe of the row's links: the `IN` of a
    tag's links built a list of 350,000 keys for a common tag)."""
    return (select(*columns).select_from(FTS).join(Query, Query.pk == FTS.c.rowid)
            .where(text("queries_fts MATCH :phrase").bindparams(
                phrase=_trigram_phrase(filters.text)))
            .where(*_conditions(session, project_id, filters, in_order=False,
                                text_joined=True)))


def _gram_count(session: Session, project_id: str, filters: Filters):
    """The matches of a short text-only filter, kept by triggers (migration 0009): a text
    contains a term of n characters exactly when the term is one of its n-character strings,
    folded as the filter folds them (PostgreSQL: `lower()` on both sides; SQLite: the trigram
    index's folding, migration 0013)."""
    postgres = session.get_bind().dialect.name == "postgresql"
    folded = func.lower(filters.text) if postgres else _sqlite_folded(session, filters.text)
    counted = func.coalesce(select(text_gram_counts.c.query_count).where(
        text_gram_counts.c.project_id == project_id,
        text_gram_counts.c.gram == folded).scalar_subquery(), 0)
    if not postgres:
        return counted  # the trigram index folds one character to one: never longer
    # A database whose lower() lengthens a character (ICU: "İ" → "i̇") can make a term longer
    # than any counted string; such a term is counted row by row.
    return case((func.char_length(folded) <= COUNTED_GRAM_LENGTH["postgresql"], counted),
                else_=_texts_count(project_id, filters))


def tags_by_query(session: Session, query_pks: list[int]) -> dict[int, list[int]]:
    tags: dict[int, list[int]] = defaultdict(list)
    if query_pks:
        if session.get_bind().dialect.name == "postgresql":
            # One array parameter rather than one bind parameter per row key.
            wanted = query_tags.c.query_pk == any_(
                bindparam("query_pks", query_pks, type_=ARRAY(Integer)))
        else:
            wanted = query_tags.c.query_pk.in_(query_pks)
        rows = session.execute(
            select(query_tags.c.query_pk, query_tags.c.tag_id).where(wanted)
            .order_by(query_tags.c.query_pk, query_tags.c.tag_id)
        )
        for query_pk, tag_id in rows:
            tags[query_pk].append(tag_id)
    return tags


def _with_tags(statement, sort: list[SortItem], *figures):
    """One page of rows, each with its tag ids ("3,7"), in the page's order. The tags are
    looked up for the page's rows only, after the limit, in the same statement; so may
    other figures be."""
    page = statement.subquery("page")
    tag_list = select(func.aggregate_strings(cast(query_tags.c.tag_id, String), ",")).where(
        query_tags.c.query_pk == page.c.pk).scalar_subquery()
    columns = {name: page.c[column.key] for name, column in QUERY_SORT_FIELDS.items()}
    return select(page, tag_list.label("tag_list"), *figures).order_by(
        *order_by(sort, columns, DEFAULT_QUERY_SORT, page.c.id))


def _remembered_key(project_id: str, versions: tuple[int, int], filters: Filters) -> tuple:
    # A digest, not the filter: a filter may hold up to 2,000 codes and 1,000 characters,
    # and the memory of 4,096 of them would be a client's to fill.
    described = json.dumps([filters.text, sorted(filters.languages), sorted(filters.countries),
                            [sorted(ids) for ids in filters.tag_sets]])
    return project_id, versions, hashlib.sha256(described.encode()).digest()


def _links_version(filters: Filters):
    """The sum of the filter's tags' link versions (migration 0021): each only grows, so the
    sum changes whenever a link of any of them does."""
    ids = sorted(set().union(*filters.tag_sets))
    if not ids:
        return literal(0)
    return select(func.coalesce(func.sum(Tag.links_version), 0)).where(
        Tag.id.in_(ids)).scalar_subquery()


def _totals(session: Session, project_id: str, filters: Filters,
            counts: MatchCounts | None) -> tuple[int, int, list[int] | None]:
    """(matches, the project's query count, the matches' row keys when the count read them
    and they are few: _texts_count_and_keys). A text filter is counted once per version of
    the project's queries and of its tags' links (service/match_counts.py)."""
    texts_version = select(Project.texts_version).where(
        Project.id == project_id).scalar_subquery()
    remembered = counts is not None and bool(filters.text)
    if remembered:
        project_total, *versions = session.execute(select(
            _project_total(project_id), texts_version, _links_version(filters))).one()
        total = counts.get(_remembered_key(project_id, tuple(versions), filters))
        if total is not None:
            return total, project_total, None
    if _counted_from_bitmaps(session, filters):
        counted = bitmap_index.matches(
            session.connection(), project_id, _contains_pattern(filters.text),
            filters.languages, filters.countries, filters.tag_sets)
        if counted.matches is not None:
            total, project_total = len(counted.matches), counted.project_total
            if remembered:
                versions = (counted.texts_version, counted.links_version)
                counts.put(_remembered_key(project_id, versions, filters), total)
            few = total < SCAN_IN_ORDER_SHARE * max(1, project_total)
            return total, project_total, list(counted.matches) if few else None
    if _counted_on_texts(session, filters):
        counted = _texts_count_and_keys(project_id, filters)
        figures = [counted.c.total, counted.c.match_keys]
    else:
        figures = [_count(session, project_id, filters), literal(None)]
    # The versions read in the counting statement itself: the count is of their rows.
    total, keys, project_total, *versions = session.execute(select(
        *figures, _project_total(project_id), texts_version, _links_version(filters))).one()
    if remembered:
        counts.put(_remembered_key(project_id, tuple(versions), filters), total)
    return total, project_total, keys


COLUMNS = (Query.pk, Query.id, Query.project_id, Query.query, Query.language, Query.country,
           Query.updated_at)
# The values of a statement built once per shape (_PREPARED), given when it runs.
PROJECT_PARAMETER = bindparam("project_id", type_=Project.id.type)
LIMIT_PARAMETER = bindparam("limit", type_=Integer)
OFFSET_PARAMETER = bindparam("offset", type_=Integer)

SortKey = tuple[tuple[str, str], ...]


class _Prepared:
    """Statements by shape, the latest PREPARED_SHAPES of them (shared by the threads of a
    process; a statement is never changed once built)."""

    def __init__(self, size: int = PREPARED_SHAPES):
        self._statements: LRUCache = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def get(self, shape: tuple, build):
        with self._lock:
            statement = self._statements.get(shape)
        if statement is None:
            statement = build()
            with self._lock:
                self._statements[shape] = statement
        return statement


_PREPARED = _Prepared()


@lru_cache(maxsize=PREPARED_SHAPES)
def _query_ordering(sort: SortKey) -> tuple:
    """The ORDER BY of a queries page for its sort, as (field, direction upper-cased): checked
    (BadRequest, never remembered) and built once per sort."""
    items = [SortItem(field=name, direction=direction) for name, direction in sort]
    return tuple(order_by(items, QUERY_SORT_FIELDS, DEFAULT_QUERY_SORT, Query.id))


def _page_statement(session: Session, project_id: str | BindParameter, filters: Filters,
                    sort: list[SortItem], ordering, in_order: bool, limit, offset,
                    deferred: bool, keys: list[int] | None = None):
    """A page of a filter not read code by code, with its tags (and, unfiltered, the total).
    `deferred`: an unfiltered page from DEFER_FROM_OFFSET on. `keys`: the row keys of every
    match, already found (PostgreSQL), to collect and sort."""
    if keys is not None:
        matching = select(*COLUMNS).where(Query.project_id == project_id, Query.pk == any_(
            bindparam("match_keys", keys, type_=ARRAY(Integer))))
    else:
        matching = select(*COLUMNS).where(
            *_conditions(session, project_id, filters, in_order=in_order, sort=sort))
    collect_first = not filters.empty and not in_order
    if collect_first and session.get_bind().dialect.name == "postgresql":
        # PostgreSQL tends to bet that walking the sort order's index will meet a page of
        # matches soon, and loses badly for rare ones (and for codes, above); OFFSET 0 keeps
        # the subquery apart, so the matches are collected first and then sorted.
        fenced = matching.offset(0).subquery()
        sort_fields = {name: fenced.c[column.key] for name, column in QUERY_SORT_FIELDS.items()}
        statement = select(fenced).order_by(
            *order_by(sort, sort_fields, DEFAULT_QUERY_SORT, fenced.c.id))
        paged = statement.limit(limit).offset(offset)
    elif deferred:
        # The key the sort order's index holds: on SQLite every index holds the row key; on
        # PostgreSQL none does, but each ends with `id` (with the project's (project, id)
        # index to find the rows again).
        key = Query.id if session.get_bind().dialect.name == "postgresql" else Query.pk
        page_keys = select(key).where(Query.project_id == project_id).order_by(
            *ordering).limit(limit).offset(offset)
        # No ORDER BY here: the rows are found by key and _with_tags puts the page in order.
        paged = matching.where(key.in_(page_keys.scalar_subquery()))
    else:
        paged = matching.order_by(*ordering).limit(limit).offset(offset)
    # Unfiltered, the project's counter is the total: read it with the page.
    figures = [_project_total(project_id).label("total")] if filters.empty else []
    return _with_tags(paged, sort, *figures)


def _time_order(sort: SortKey) -> str | None:
    """"DESC" or "ASC" when the page is sorted by update time alone (newest first by
    default), else None."""
    if not sort:
        return "DESC"
    if len(sort) == 1 and sort[0][0] == "updatedAt":
        return sort[0][1]
    return None


def _tag_by_time_page(session: Session, direction: str):
    """A page of one rare tag in update-time order, from the links' copy of the time
    (migration 0018): the tag's links are walked in time order as far as the page reaches,
    and only the links at least as far up as the last of them are joined to their queries and
    sorted — those are the page's candidates, ties on the time (broken by id) included."""
    links = query_tags.c
    descending = direction == "DESC"
    tag = bindparam("tag_id", type_=Integer)
    reached = (select(links.updated_at).where(links.tag_id == tag)
               .order_by(links.updated_at.desc() if descending else links.updated_at.asc())
               .limit(bindparam("reach", type_=Integer)).subquery())
    edge = select((func.min if descending else func.max)(reached.c.updated_at)).scalar_subquery()
    candidates = (select(*COLUMNS).select_from(query_tags.join(Query, Query.pk == links.query_pk))
                  .where(links.tag_id == tag,
                         links.updated_at >= edge if descending else links.updated_at <= edge,
                         Query.project_id == PROJECT_PARAMETER))
    if session.get_bind().dialect.name == "postgresql":
        # Kept apart (OFFSET 0), so the candidates are sorted rather than the project's
        # time index walked in the hope of meeting them.
        candidates = candidates.offset(0)
    fenced = candidates.subquery()
    time = fenced.c.updated_at.desc() if descending else fenced.c.updated_at.asc()
    paged = (select(fenced).order_by(time, fenced.c.id.asc())
             .limit(LIMIT_PARAMETER).offset(OFFSET_PARAMETER))
    return _with_tags(paged, [SortItem(field="updatedAt", direction=direction)])


def _walked_keys(session: Session, filters: Filters, sort: SortKey, keys: list[int],
                 reach: int) -> list[int] | None:
    """The keys of the first `reach` matches in time order, and of every later match as new
    as the last of them (ties, which the page breaks by id), found by walking the filter's tag's
    links in time order (their copy of the time, migration 0018; index only) and keeping
    those among the matches' `keys` — when the filter is one tag and more (text, codes) and
    sorted by time, and that walk is expected to be short. Else None: the page reads every
    match's row to sort them (at ten million queries 13,000–41,000 random reads, 35–280 ms)."""
    direction = _time_order(sort)
    if direction is None or len(filters.tag_sets) != 1 or len(keys) < LINK_WALK_FROM:
        return None
    (ids,) = filters.tag_sets
    if len(ids) != 1:
        return None
    (tag_id,) = ids
    budget = LINK_WALK_PER_MATCH * len(keys)
    # The matches are spread over the tag's links about evenly in time.
    if reach * filters.tag_counts.get(tag_id, 0) > budget * len(keys):
        return None
    members = BitMap(keys)
    links = query_tags.c
    descending = direction == "DESC"
    order = ((links.updated_at.desc(), links.query_pk.desc()) if descending
             else (links.updated_at.asc(), links.query_pk.asc()))
    found: list[int] = []
    edge, last, walked = None, None, 0
    while walked < budget:
        statement = select(links.query_pk, links.updated_at).where(links.tag_id == tag_id)
        if last is not None:
            after = tuple_(links.updated_at, links.query_pk)
            statement = statement.where(after < last if descending else after > last)
        rows = session.execute(statement.order_by(*order).limit(LINK_WALK_BATCH)).all()
        for query_pk, updated_at in rows:
            if edge is not None and updated_at != edge:
                return found
            if query_pk in members:
                found.append(query_pk)
                if edge is None and len(found) >= reach:
                    edge = updated_at
        if len(rows) < LINK_WALK_BATCH:
            return found
        walked += len(rows)
        last = (rows[-1].updated_at, rows[-1].query_pk)
    return None


def _answer(session: Session, project_id: str, filters: Filters, rows, total: int | None):
    if filters.empty:
        total = rows[0].total if rows else session.scalar(select(_project_total(project_id)))
    tags = {row.pk: sorted(map(int, row.tag_list.split(","))) for row in rows if row.tag_list}
    return total, rows, tags


def _list_prepared(session: Session, project_id: str, filters: Filters, body: QueryListBody,
                   sort: SortKey, ordering):
    """A page of a filter without text, not read code by code: the same statements
    as list_queries would build, taken from _PREPARED and run with this request's values."""
    connection = session.connection()
    dialect = connection.dialect.name
    named = replace(filters, named=True)
    offset = (body.page - 1) * body.limit
    values = {"project_id": project_id, "languages": sorted(filters.languages),
              "countries": sorted(filters.countries), "limit": body.limit, "offset": offset,
              **{_tag_set_name(position): sorted(ids)
                 for position, ids in enumerate(filters.tag_sets)}}
    which = (bool(filters.languages), bool(filters.countries), len(filters.tag_sets))
    total, in_order = None, False
    if filters.known_total is not None and filters.project_total is not None:
        # One tag and nothing else: its count was read with the tag.
        total, project_total = filters.known_total, filters.project_total
    elif not filters.empty:
        counting = _PREPARED.get((dialect, "total", *which), lambda: select(
            _count(session, PROJECT_PARAMETER, named), _project_total(PROJECT_PARAMETER)))
        total, project_total = connection.execute(counting, values).one()
    if total is not None:
        if offset >= total:
            return total, [], {}
        in_order = total >= SCAN_IN_ORDER_SHARE * max(1, project_total)
    direction = _time_order(sort)
    if filters.known_total is not None and not in_order and direction:
        # One rare tag in time order: a short walk of its links' time index.
        (ids,) = filters.tag_sets
        statement = _PREPARED.get((dialect, "tag by time", direction),
                                  lambda: _tag_by_time_page(session, direction))
        return _answer(session, project_id, filters, connection.execute(statement, {
            **values, "tag_id": next(iter(ids)), "reach": offset + body.limit}).all(), total)
    deferred = filters.empty and offset >= DEFER_FROM_OFFSET
    shape = (dialect, sort, *which, len(filters.languages) == 1 and len(filters.countries) == 1,
             in_order, deferred)
    statement = _PREPARED.get(shape, lambda: _page_statement(
        session, PROJECT_PARAMETER, named, body.sort, ordering, in_order, LIMIT_PARAMETER,
        OFFSET_PARAMETER, deferred))
    return _answer(session, project_id, filters, connection.execute(statement, values).all(),
                   total)


def list_queries(session: Session, project_id: str, body: QueryListBody,
                 counts: MatchCounts | None = None):
    """(total, rows, tags by query pk) for one page. With `counts`, text filters are
    counted once per version of the project's queries and of their tags' links."""
    sort = tuple((item.field, item.direction.upper()) for item in body.sort)
    ordering = _query_ordering(sort)
    filters = resolve_filters(session, project_id, body)
    if filters is None:
        return 0, [], {}
    if not (filters.text or _clustered_in_codes(filters, body.sort)):
        return _list_prepared(session, project_id, filters, body, sort, ordering)
    offset = (body.page - 1) * body.limit
    in_order = False
    # One sort item (ties by id), already checked by _query_ordering above.
    by_code = len(body.sort) == 1 and _clustered_in_codes(filters, body.sort)
    if by_code:
        descending = body.sort[0].direction.upper() == "DESC"
        groups = _code_groups(session, project_id, filters, body.sort[0].field, descending)
        # The page is found from the matches per code, and their sum is the total.
        total = sum(matches for _code, matches, _size in groups)
        if offset >= total:
            return total, [], {}
        statement = _with_tags(_paged_by_code(session, project_id, filters, list(COLUMNS),
                                              body.sort[0].field, groups, offset, body.limit),
                               body.sort)
    else:
        keys = None
        if filters.known_total is not None and filters.project_total is not None:
            total, project_total = filters.known_total, filters.project_total
        else:
            total, project_total, keys = _totals(session, project_id, filters, counts)
        if offset >= total:
            return total, [], {}
        in_order = (total >= SCAN_IN_ORDER_SHARE * max(1, project_total)
                    and not _clustered_in_codes(filters, body.sort))
        if keys is not None and not in_order:
            keys = _walked_keys(session, filters, sort, keys, offset + body.limit) or keys
        statement = _page_statement(session, project_id, filters, body.sort, ordering,
                                    in_order, body.limit, offset, deferred=False,
                                    keys=None if in_order else keys)
    return _answer(session, project_id, filters, session.execute(statement).all(), total)


def list_tags(session: Session, project_id: str, body: TagListBody):
    ordering = order_by(body.sort, TAG_SORT_FIELDS, DEFAULT_TAG_SORT, Tag.id)
    conditions = [Tag.project_id == project_id]
    if body.name:
        conditions.append(Tag.name_folded.contains(fold_tag_name(body.name), autoescape=True))
    where = and_(*conditions)
    total = session.scalar(select(func.count()).select_from(Tag).where(where))
    rows = session.execute(
        select(Tag).where(where).order_by(*ordering)
        .limit(body.limit).offset((body.page - 1) * body.limit)
    ).scalars().all()
    return total, rows
