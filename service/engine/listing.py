"""queries/list and queries/facets: the filter counted by the engine (service/engine/
counting.py), and a page of its matches read by their keys, or by walking an index in the
page's order and keeping the keys among the matches."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from pyroaring import BitMap
from sqlalchemy import Integer, bindparam, select
from sqlalchemy.orm import Session

from ..store.db import begin_write
from ..store.models import Tag
from . import id_keys, kinds, number_index
from .counting import Counter, Filter, FilterOf
from .held import Held, header
from .keys import keys_condition
from .numbers import NAMES
from .ordering import Sort, order_by
from .rebuild import rebuild
from .refusals import Missing
from .tables import Query, query_tags

QUERY_SORT_FIELDS = {
    "query": Query.query,
    "language": Query.language,
    "country": Query.country,
    "updatedAt": Query.updated_at,
    "id": Query.id,
    **{name: Query.__table__.c[name] for name in NAMES},
}
DEFAULT_QUERY_SORT = [Sort(field="updatedAt", direction="DESC")]
COLUMNS = (Query.pk, Query.id, Query.project_id, Query.query, Query.language, Query.country,
           Query.updated_at, *(Query.__table__.c[name] for name in NAMES))
CODE_KINDS = {"language": kinds.LANGUAGE, "country": kinds.COUNTRY}
# An unfiltered page from this offset on picks its keys from the sort order's index alone,
# then reads those rows (a CSV export or a bulk edit reads pages that deep).
DEFER_FROM_OFFSET = 2000
# Matches read by their keys and sorted whenever there are at most this many; beyond, when
# that costs less than walking the sort order's index (about WALK_COST a row walked against
# one row read by its key) to the end of the page.
COLLECT_ALWAYS = 2000
WALK_COST = 0.25
# A key's place in the id order looked up and chosen among (id_keys), against one row read;
# from how many keys that is worth it (fewer are read by their keys: a row read by its key
# costs ~20-90 us on PostgreSQL when not cached, 1,900 rows 30-180 ms).
PLACE_COST = 0.01
NARROW_FROM = 256
WALK_GIVES_UP = 4
WALK_BATCH = 4096
FIRST_BATCH = 64
STREAMED = {"stream_results": True, "max_row_buffer": WALK_BATCH}

SortKey = tuple[tuple[str, str], ...]


@lru_cache(maxsize=256)
def _ordering(sort: SortKey) -> tuple:
    """The ORDER BY of a queries page, checked (Invalid, never remembered) once per sort."""
    items = [Sort(field=name, direction=direction) for name, direction in sort]
    return tuple(order_by(items, QUERY_SORT_FIELDS, DEFAULT_QUERY_SORT, Query.id,
                          unknown_last=frozenset(NAMES)))


_tags = Tag.__table__
# Built once: every read asks it.
PROJECT_TAGS = select(_tags.c.id, _tags.c.name_folded).where(
    _tags.c.project_id == bindparam("project_id"))


def project_tags(session: Session, project_id: str) -> dict[int, str]:
    """The project's tags: id → folded name."""
    return dict(session.connection().execute(PROJECT_TAGS, {"project_id": project_id}).all())


def counter(session: Session, project_id: str, store: Held,
            tags: dict[int, str]) -> Counter:
    """The project's bitmaps as of now; built again first when a write went around the
    engine since they were."""
    connection = session.connection()
    at = header(connection, project_id)
    if at is None:  # deleted since the key was checked
        raise Missing("Project not found.")
    if not at.current:
        begin_write(session)
        rebuild(session.connection(), project_id)
        session.commit()
        connection = session.connection()
        at = header(connection, project_id)
    held = store.project(connection, project_id, at)
    return Counter(session, project_id, at, held, store, sorted(tags))


def facets(session: Session, project_id: str, filter_of: FilterOf, store: Held,
           sums: tuple[str, ...] = ()) -> dict:
    tags = project_tags(session, project_id)
    wanted = filter_of(tags)
    counting = counter(session, project_id, store, tags)
    if not (wanted.empty and sums):
        return counting.facets(wanted, sums)
    # The whole project's sums (every page's progress asks them) are kept until its next
    # write: a copy each time, which the caller may add to.
    key = (project_id, counting.at.epoch, counting.at.stamp, "facets", tuple(sorted(tags)),
           sums)
    return dict(store.term(key, lambda: counting.facets(wanted, sums)))


def check_sort(sort: list[Sort]) -> None:
    """Invalid, as queries/list gives, unless `sort` is one queries/list takes."""
    _ordering(tuple((item.field, item.direction.upper()) for item in sort))


def totals(session: Session, project_id: str, filters: list[FilterOf],
           store: Held) -> list[int]:
    """How many queries each filter matches, as queries/list's totalRecords: one read of the
    project's bitmaps and tags for all of them (saved views)."""
    if not filters:
        return []
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    return [counting.count(filter_of(tags)) for filter_of in filters]


def list_queries(session: Session, project_id: str, filter_of: FilterOf, sort: list[Sort],
                 page: int, limit: int, store: Held):
    """(total, rows, tags by query pk) for one page (counted from 1) of `limit` queries."""
    ordering = _ordering(tuple((item.field, item.direction.upper()) for item in sort))
    tags = project_tags(session, project_id)
    wanted = filter_of(tags)
    counting = counter(session, project_id, store, tags)
    matches = counting.matches(wanted)
    total = len(matches)
    offset = (page - 1) * limit
    if offset >= total:
        return total, [], {}
    rows = _Page(session, project_id, counting, wanted, matches, sort, ordering, offset,
                 limit).rows()
    return total, rows, tags_by_query(session, [row.pk for row in rows])


class _Page:
    def __init__(self, session: Session, project_id: str, counting: Counter, wanted: Filter,
                 matches: BitMap, sort: list[Sort], ordering, offset: int,
                 limit: int) -> None:
        self.session, self.project_id, self.counting = session, project_id, counting
        self.wanted, self.matches, self.sort, self.ordering = wanted, matches, sort, ordering
        self.offset, self.limit = offset, limit
        self.size = max(1, len(counting.everything))

    def rows(self):
        if self.sort and self.sort[0].field in NAMES:
            return self._by_number(self.sort[0])
        if self.wanted.empty:
            return self._unfiltered()
        if len(self.sort) == 1 and self.sort[0].field in CODE_KINDS:
            return self._by_code(self.sort[0])
        reach = self.offset + self.limit
        walks = [(reach * self.size / len(self.matches) * WALK_COST, self._walk_index)]
        tag = self._required_tag()
        direction = self._time_order()
        if tag is not None and direction:
            carriers = len(self.counting.tag(tag))
            walks.append((reach * carriers / len(self.matches) * WALK_COST / 2,
                          lambda: self._walk_links(tag, direction)))
        cost, walk = min(walks, key=lambda pair: pair[0])
        if len(self.matches) <= COLLECT_ALWAYS or len(self.matches) <= cost:
            return self._by_keys(self.matches, self.offset, self.limit)
        return walk()

    def _unfiltered(self):
        in_project = Query.project_id == self.project_id
        if self.offset < DEFER_FROM_OFFSET:
            return self.session.execute(select(*COLUMNS).where(in_project).order_by(
                *self.ordering).limit(self.limit).offset(self.offset)).all()
        # Every index of SQLite holds the row key; PostgreSQL's end with the id.
        key = Query.id if self.session.get_bind().dialect.name == "postgresql" else Query.pk
        page_keys = select(key).where(in_project).order_by(*self.ordering).limit(
            self.limit).offset(self.offset)
        return self.session.execute(select(*COLUMNS).where(
            in_project, key.in_(page_keys.scalar_subquery())).order_by(*self.ordering)).all()

    def _by_keys(self, keys: BitMap, offset: int, limit: int, ordering=None):
        return self.session.execute(
            select(*COLUMNS).where(keys_condition(self.session, Query.pk, list(keys)))
            .order_by(*(ordering or self.ordering)).limit(limit).offset(offset)).all()

    def _walked(self, statement, members: BitMap, reach: int, most: float | None = None,
                give_up: Callable[[], bool] = bool) -> list[int] | None:
        """The first `reach` keys of `statement` (keys in the page's order) among members;
        None if, more than `most` rows passed without them, `give_up()` says so."""
        found: list[int] = []
        passed = 0
        result = self.session.connection().execute(statement, execution_options=STREAMED)
        try:
            for part in _batches(result, reach * self.size / max(1, len(members))):
                found.extend(pk for (pk,) in part if pk in members)
                if len(found) >= reach:
                    return found[:reach]
                passed += len(part)
                if most is not None and passed > most:
                    if give_up():
                        return None
                    most = None
        finally:
            result.close()
        return found

    def _walk_index(self):
        statement = select(Query.pk).where(Query.project_id == self.project_id).order_by(
            *self.ordering)
        keys = self._walked(statement, self.matches, self.offset + self.limit)[self.offset:]
        return self._by_keys(BitMap(keys), 0, self.limit)

    def _required_tag(self) -> int | None:
        """The rarest tag every match carries, if any."""
        single = [next(iter(ids)) for ids in self.wanted.required if len(ids) == 1]
        return min(single, key=lambda tag: len(self.counting.tag(tag)), default=None)

    def _time_order(self) -> str | None:
        if not self.sort:
            return "DESC"
        if len(self.sort) == 1 and self.sort[0].field == "updatedAt":
            return self.sort[0].direction.upper()
        return None

    def _walk_links(self, tag: int, direction: str):
        """The matches found by walking the tag's links in time order (their copy of the
        time; the index holds it all): the first `reach`, and every later one of the same
        time as the last of them (ties, which the page breaks by id)."""
        links = query_tags.c
        descending = direction == "DESC"
        order = ((links.updated_at.desc(), links.query_pk.desc()) if descending
                 else (links.updated_at.asc(), links.query_pk.asc()))
        statement = select(links.query_pk, links.updated_at).where(
            links.tag_id == bindparam("tag", tag, type_=Integer)).order_by(*order)
        reach = self.offset + self.limit
        found, edge = BitMap(), None
        result = self.session.connection().execute(statement, execution_options=STREAMED)
        try:
            for part in _batches(result, reach * len(self.counting.tag(tag)) /
                                 max(1, len(self.matches))):
                for pk, updated_at in part:
                    if edge is not None and updated_at != edge:
                        return self._by_keys(found, self.offset, self.limit)
                    if pk in self.matches:
                        found.add(pk)
                        if edge is None and len(found) >= reach:
                            edge = updated_at
        finally:
            result.close()
        return self._by_keys(found, self.offset, self.limit)

    def _by_code(self, item: Sort):
        """Sorted by language or country (ties by id): the matches of each code, counted from
        its bitmap, say which codes the page falls in; each one's part is read by id."""
        kind, field = CODE_KINDS[item.field], QUERY_SORT_FIELDS[item.field]
        descending = item.direction.upper() == "DESC"
        offset, limit, rows = self.offset, self.limit, []
        by_id = (Query.id.asc(),)
        for code in sorted(self.counting.held.values(kind), reverse=descending):
            part = self.matches & self.counting.held.bitmap(kind, code)
            if offset >= len(part):
                offset -= len(part)
                continue
            take = min(limit, len(part) - offset)
            code_size = len(self.counting.held.bitmap(kind, code))
            walk_rows = (offset + take) * code_size / len(part) * WALK_COST
            if len(part) <= COLLECT_ALWAYS or len(part) <= walk_rows:
                rows += self._by_keys(part, offset, take, by_id)
            else:
                statement = select(Query.pk).where(
                    Query.project_id == self.project_id, field == code).order_by(*by_id)
                keys = self._walked(statement, part, offset + take)[offset:]
                rows += self._by_keys(BitMap(keys), 0, take, by_id)
            offset, limit = 0, limit - take
            if not limit:
                break
        return rows


    def _by_number(self, item: Sort):
        """Sorted by a number: the values at the page's first and last places, found in the
        number's bitmaps (number_index.value_at), say which matches the page holds — those
        between the two values, and the first of each value's ties in the order that breaks
        them; the queries without the number come after, in that order too."""
        held, name = self.counting.held, item.field
        descending = item.direction.upper() == "DESC"
        ties_order = self.ordering[1:]  # what breaks ties of the number, ending with the id
        known = self.matches & number_index.known(held, name)
        offset, rows = self.offset, []
        if offset < len(known):
            reach = min(offset + self.limit, len(known))
            first = number_index.value_at(held, name, known, offset, descending)
            last = first if reach <= first.before + len(first.ties) else \
                number_index.value_at(held, name, known, reach - 1, descending)
            skip = offset - first.before
            if first.value == last.value:
                return self._in_order(first.ties, skip, reach - offset, ties_order) + \
                    self._unknown_after(known, reach)
            rows += self._in_order(first.ties, skip, len(first.ties) - skip, ties_order)
            between = last.ahead - first.ahead - first.ties
            if between:
                rows += self._by_keys(between, 0, len(between))
            rows += self._in_order(last.ties, 0, reach - last.before, ties_order)
        return rows + self._unknown_after(known, offset + len(rows))

    def _unknown_after(self, known: BitMap, reached: int):
        """The page's matches without the number, from the place `reached` on."""
        take = self.offset + self.limit - reached
        if take <= 0:
            return []
        return self._in_order(self.matches - known, reached - len(known), take,
                              self.ordering[1:])

    def _in_order(self, keys: BitMap, skip: int, take: int, ordering: tuple):
        """`take` of the keys after the first `skip` of them in an order, whichever costs
        least: read by their keys and sorted; found by walking the order's index (one item);
        or, in id order, narrowed in memory to the few the places can hold (id_keys: each
        query's place in the id order, coarsely) and those read."""
        if take <= 0 or skip >= len(keys):
            return []
        take = min(take, len(keys) - skip)
        read_all = len(keys) if len(keys) > COLLECT_ALWAYS or len(ordering) > 1 else 0
        walk = (skip + take) * self.size / len(keys) * WALK_COST
        narrow = id_keys.placing_cost(len(keys), skip, len(keys) - skip - take,
                                      self.size) * PLACE_COST + take
        direction = _id_direction(ordering[0]) if len(ordering) == 1 else None
        narrowable = direction is not None and len(keys) >= NARROW_FROM
        if narrowable and narrow < min(walk, len(keys)):
            rows = self._narrowed(keys, skip, take, ordering, direction)
            if rows is not None:
                return rows
        if len(ordering) > 1 or read_all <= walk:
            return self._by_keys(keys, skip, take, ordering)
        statement = select(Query.pk).where(Query.project_id == self.project_id).order_by(
            *ordering)
        # The keys may lie further along the order than their share says (ids made in time
        # order: queries imported together lie together): past four times the rows their
        # share says, the walk gives up for narrowing, if the project's id order is held
        # (at 10M, 687,817 ties: 28,000 rows walked cost 68 ms, narrowing them 15 ms).
        found = self._walked(statement, keys, skip + take,
                             most=WALK_GIVES_UP * walk / WALK_COST if narrowable else None,
                             give_up=self._id_order_held)
        if found is not None:
            return self._by_keys(BitMap(found[skip:]), 0, take, ordering)
        rows = self._narrowed(keys, skip, take, ordering, direction)
        return rows if rows is not None else self._by_keys(keys, skip, take, ordering)

    def _id_order_held(self) -> bool:
        return id_keys.loaded(self.counting.store, self.session.connection(), self.project_id,
                              self.counting.at, self.counting.everything) is not None

    def _narrowed(self, keys: BitMap, skip: int, take: int, ordering, direction: str):
        """The rows at places `skip` … `skip + take` of the keys in id order, read among the
        few candidates the project's id order held in memory gives; None when it cannot."""
        narrowed = id_keys.among(self.counting.store, self.session.connection(),
                                 self.project_id, self.counting.at, self.counting.everything,
                                 keys, skip, take, descending=direction == "DESC")
        if narrowed is None:
            return None
        return self._by_keys(narrowed.candidates, skip - narrowed.before, take, ordering)


def _id_direction(clause) -> str | None:
    """ASC or DESC when the clause orders by id alone, else None."""
    for direction, by_id in (("ASC", Query.id.asc()), ("DESC", Query.id.desc())):
        if clause.compare(by_id):
            return direction
    return None


def _batches(result, expected: float):
    """The rows of a walk, fetched in batches: the first about the rows the walk is expected
    to pass (a whole batch of 4,096 cost ~10 ms of heap reads at ten million queries, for a
    page that needed 150), each next twice as large."""
    size = int(min(WALK_BATCH, max(FIRST_BATCH, expected * 1.5)))
    while part := result.fetchmany(size):
        yield part
        size = min(WALK_BATCH, size * 2)


def tags_by_query(session: Session, query_pks: list[int]) -> dict[int, list[int]]:
    tags: dict[int, list[int]] = {}
    if query_pks:
        rows = session.execute(
            select(query_tags.c.query_pk, query_tags.c.tag_id)
            .where(keys_condition(session, query_tags.c.query_pk, query_pks))
            .order_by(query_tags.c.query_pk, query_tags.c.tag_id))
        for query_pk, tag_id in rows:
            tags.setdefault(query_pk, []).append(tag_id)
    return tags
