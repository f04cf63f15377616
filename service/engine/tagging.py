"""Write the tags of many queries: match each item, give its query the tags the call asks for
(set-tags: exactly these; the tags-edit extension: these added, those removed), all or
nothing. The one writer of `query_tags` for calls that name queries."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ..store.db import begin_write, retried
from ..store.models import Tag, utcnow
from .keys import MAX_ID, keys_condition
from .listing import tags_by_query
from .refusals import Invalid, Missing
from .tables import Query, query_tags
from .writer import Writer

NAMED_AT_MOST = 10  # an error names this many items; beyond that it counts them


class Item(Protocol):
    """An item of a call that names queries (set-tags, tags-edit)."""

    query: str
    language: str
    country: str


class NamesTags(Item, Protocol):
    """An item of set-tags: its query's tags become exactly these."""

    tagIds: list[int]  # noqa: N815


@dataclass(frozen=True)
class Tagged:
    """An item's query after the call: its row, its tags and when it last changed."""

    row: object
    tag_ids: list[int]
    updated_at: datetime


# The tags an item names (each must be a tag of the project), and its query's tags after the
# call, from those it has now.
NamedTags = Callable[[Item], Iterable[int]]
TagsAfter = Callable[[Item, set[int]], set[int]]


def item_key(item: Item) -> tuple[str, str, str]:
    return item.query, item.language.lower(), item.country.upper()


def describe_item(key: tuple[str, str, str]) -> str:
    query, language, country = key
    return f'"{query}" ({language}, {country})'


def named_messages(messages: list[str]) -> list[str]:
    """The first NAMED_AT_MOST messages, and how many more there are."""
    if len(messages) <= NAMED_AT_MOST:
        return messages
    return [*messages[:NAMED_AT_MOST], f"… and {len(messages) - NAMED_AT_MOST} more."]


def _check_items(session: Session, project_id: str, items: list[Item],
                 named_tags: NamedTags) -> None:
    errors, first_seen = [], {}
    for position, item in enumerate(items):
        key = item_key(item)
        if key in first_seen:
            errors.append(
                f"Item {position} repeats item {first_seen[key]} ({describe_item(key)})."
            )
        first_seen.setdefault(key, position)
    wanted = {tag_id for item in items for tag_id in named_tags(item)}
    storable = {tag_id for tag_id in wanted if 1 <= tag_id <= MAX_ID}
    if wanted:
        known = set(session.scalars(
            select(Tag.id).where(Tag.project_id == project_id, Tag.id.in_(storable))
        )) if storable else set()
        errors += [f"Tag {tag_id} is not a tag of this project."
                   for tag_id in sorted(wanted - known)]
    if errors:
        raise Invalid(named_messages(errors))


def _match(session: Session, project_id: str, items: list[Item]) -> dict:
    """The items' rows by key, locked: row locks serialize concurrent writers on the same
    queries (PostgreSQL); SQLite takes its write lock when the transaction begins."""
    if session.get_bind().dialect.name == "postgresql":
        keys = [item_key(item) for item in items]
        rows = session.execute(MATCH_ROWS, {
            "project_id": project_id, "texts": [key[0] for key in keys],
            "languages": [key[1] for key in keys], "countries": [key[2] for key in keys],
        }).all()
    else:
        rows = session.execute(
            select(Query.pk, Query.id, Query.project_id, Query.query, Query.language,
                   Query.country, Query.updated_at)
            .where(Query.project_id == project_id,
                   Query.query.in_({item.query for item in items}))
            .order_by(Query.pk)
            .with_for_update()
        ).all()
    return {(row.query, row.language, row.country): row for row in rows}


# PostgreSQL: a call's keys, row keys and links travel as arrays, one parameter each, so each
# step is one statement with a few parameters instead of a thousand of either.
MATCH_ROWS = text(
    "SELECT q.pk, q.id, q.project_id, q.query, q.language, q.country, q.updated_at "
    "FROM queries q JOIN unnest(CAST(:texts AS text[]), CAST(:languages AS text[]), "
    "CAST(:countries AS text[])) AS item(query, language, country) "
    "ON q.query = item.query AND q.language = item.language AND q.country = item.country "
    "WHERE q.project_id = :project_id ORDER BY q.pk FOR UPDATE OF q")
TOUCH_ROWS = text(
    "UPDATE queries SET updated_at = :now WHERE pk = ANY (CAST(:query_pks AS integer[]))")
TOUCH_LINKS = text(
    "UPDATE query_tags SET updated_at = :now WHERE query_pk = ANY (CAST(:query_pks AS "
    "integer[])) AND updated_at <> :now")
# All of a call's removed (or added) links in one statement; executemany would send one
# statement per link.
DELETE_LINKS = text(
    "DELETE FROM query_tags USING unnest(CAST(:query_pks AS integer[]), "
    "CAST(:tag_ids AS integer[])) AS gone(query_pk, tag_id) "
    "WHERE query_tags.query_pk = gone.query_pk AND query_tags.tag_id = gone.tag_id")
INSERT_LINKS = text(
    "INSERT INTO query_tags (query_pk, tag_id, updated_at, added_at, added_by) "
    "SELECT *, CAST(:now AS timestamp), CAST(:now AS timestamp), CAST(:by AS varchar) "
    "FROM unnest(CAST(:query_pks AS integer[]), CAST(:tag_ids AS integer[]))")


def _write_links(session: Session, removals: list[tuple[int, int]],
                 additions: list[tuple[int, int]], now, actor: str | None) -> None:
    """Added links carry `now`, the time their queries are about to be touched with (and when
    they were added), and who the caller said made them."""
    if session.get_bind().dialect.name == "postgresql":
        for statement, links in ((DELETE_LINKS, removals), (INSERT_LINKS, additions)):
            if links:
                query_pks, tag_ids = zip(*links, strict=True)
                session.execute(statement, {"query_pks": list(query_pks),
                                            "tag_ids": list(tag_ids), "now": now,
                                            "by": actor})
        return
    # SQLite: executemany reuses one prepared statement.
    if removals:
        session.execute(
            delete(query_tags)
            .where(query_tags.c.query_pk == bindparam("q"), query_tags.c.tag_id == bindparam("t"))
            .execution_options(synchronize_session=False),
            [{"q": q, "t": t} for q, t in removals],
        )
    if additions:
        session.execute(insert(query_tags),
                        [{"query_pk": q, "tag_id": t, "updated_at": now, "added_at": now,
                          "added_by": actor} for q, t in additions])


def accepted_confidences(session: Session, links: list[tuple[int, int]]
                         ) -> list[tuple[int, int, float]]:
    """Of these links (query key, tag), those made by an accepted suggestion, with the
    confidence it had (query_tags.suggested_confidence)."""
    if not links:
        return []
    wanted = set(links)
    rows = session.execute(select(
        query_tags.c.query_pk, query_tags.c.tag_id, query_tags.c.suggested_confidence).where(
        keys_condition(session, query_tags.c.query_pk, sorted({pk for pk, _tag in links})),
        query_tags.c.suggested_confidence.is_not(None)))
    return [(pk, tag, confidence) for pk, tag, confidence in rows if (pk, tag) in wanted]


def touch(session: Session, query_pks: list[int], now) -> None:
    """The queries' `updatedAt` becomes `now`, and so does their links' copy of it."""
    if not query_pks:
        return
    if session.get_bind().dialect.name == "postgresql":
        session.execute(TOUCH_ROWS, {"now": now, "query_pks": query_pks})
        session.execute(TOUCH_LINKS, {"now": now, "query_pks": query_pks})
        return
    session.execute(update(Query).where(keys_condition(session, Query.pk, query_pks))
                    .values(updated_at=now))
    session.execute(update(query_tags).where(
        keys_condition(session, query_tags.c.query_pk, query_pks),
        query_tags.c.updated_at != now).values(updated_at=now))


def set_tags(session: Session, project_id: str, items: list[NamesTags],
             actor: str | None = None) -> list[Tagged]:
    """Replace the tag sets of the items' queries (set-tags)."""
    return write_tags(session, project_id, items, lambda item: item.tagIds,
                      lambda item, _before: set(item.tagIds), actor)


def write_tags(session: Session, project_id: str, items: list[Item], named_tags: NamedTags,
               tags_after: TagsAfter, actor: str | None = None) -> list[Tagged]:
    """Give each item's query the tags `tags_after(item, its tags now)`, in one transaction,
    run again when it lost a deadlock (two calls, or a call and a tag's deletion, taking rows
    the other holds): the caller gets its answer, not a 503. The tags are worked out from the
    rows as they stand under this transaction's locks, so nothing another writer committed
    before is overwritten. The links it adds record `actor` (who the caller says made the
    change) and when."""
    return retried(session, lambda: _write_tags_once(session, project_id, items, named_tags,
                                                     tags_after, actor))


def _write_tags_once(session: Session, project_id: str, items: list[Item],
                     named_tags: NamedTags, tags_after: TagsAfter,
                     actor: str | None) -> list[Tagged]:
    begin_write(session)
    writer = Writer(session.connection(), project_id).begin()
    _check_items(session, project_id, items, named_tags)
    matched = _match(session, project_id, items)
    missing = [describe_item(item_key(i)) for i in items if item_key(i) not in matched]
    if missing:
        raise Missing(" ".join(named_messages([f"No query {name} in this project."
                                                for name in missing])))

    current = tags_by_query(session, [row.pk for row in matched.values()])
    now = utcnow()
    additions, removals, changed = [], [], set()
    for item in items:
        row = matched[item_key(item)]
        before = set(current.get(row.pk, []))
        after = tags_after(item, before)
        if before != after:
            changed.add(row.pk)
            additions += [(row.pk, t) for t in after - before]
            removals += [(row.pk, t) for t in before - after]
            current[row.pk] = sorted(after)

    try:
        writer.suggestions_back(accepted_confidences(session, removals))
        _write_links(session, removals, additions, now, actor)
        writer.added_links(additions)
        writer.removed_links(removals)
        touch(session, sorted(changed), now)
        writer.finish()
    except IntegrityError:
        # A tag was deleted (settings → Projects) after _check_items found it, and a link to
        # it can no longer be made: the call is answered as if the tag had never been there.
        session.rollback()
        _check_items(session, project_id, items, named_tags)
        raise
    session.commit()

    tagged = []
    for item in items:
        row = matched[item_key(item)]
        updated_at = now if row.pk in changed else row.updated_at
        tagged.append(Tagged(row, current.get(row.pk, []), updated_at))
    return tagged
