"""A rule's links to the queries already in a project (an extension: rules/apply, unapply and
restore, service/api/rules.py), a part at a time: each call is one transaction through a Writer,
and its `cursor` (the last query key it reached) is where the next call carries on. The
dashboard runs them as a job (progress, Cancel, Undo).

- apply: the queries the rule's condition matches now, from the cursor on, that lack one of
  its tags get it; the link records the rule and the time, and the query's `updatedAt`
  changes, as set-tags does.
- unapply: the links the rule added (optionally only those added since a time: the undo of
  an apply) are taken away and kept under an operation's id in `rule_removals`.
- restore: an operation's links are put back, to queries and tags that still exist and lack
  them (the undo of an unapply).

A part holds the tags it writes links to (service/engine/tag_holds.py): a tag deleted or
merged meanwhile waits for the part, or, gone before the part held it, is not written to —
an apply ends (TagGone), a restore passes over its links.

Unapply and restore need no cursor: what a part did is gone from what the next one reads.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pyroaring import BitMap
from sqlalchemy import Integer, delete, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from ..store.models import Tag, utcnow
from . import kinds
from .counting import FilterOf
from .keys import keys_condition
from .listing import counter, project_tags
from .tables import Query, query_tags, rule_removals
from .tag_holds import hold_tags
from .tagging import touch
from .writer import Writer

# Queries a call takes at most: a part is well under a second on either database.
PART = 20_000
# An operation's removed links are kept this long for its undo.
KEPT = timedelta(days=7)


class TagGone(Exception):  # noqa: N818 — said to the caller as a sentence
    """A tag of the rule was deleted or merged into another after the rule was read: the part
    writes nothing (its transaction is the caller's to roll back)."""


def _insert(session: Session, table):
    """INSERT … ON CONFLICT DO NOTHING (a link another write made meanwhile stays as it is)."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def apply_part(session: Session, project_id: str, rule_id: int, tag_ids: list[int],
               condition: FilterOf, after: int, store) -> dict:
    """Tag the next part of the rule's matches (keys above `after`); the caller has begun the
    write (service.store.db.begin_write), read the rule, and commits. TagGone when one of the
    rule's tags is no longer there to hold."""
    if set(tag_ids) - hold_tags(session, project_id, tag_ids):
        raise TagGone
    tags = project_tags(session, project_id)
    counting = counter(session, project_id, store, tags)
    matches = counting.matches(condition(tags))
    start = matches.rank(after) if after else 0
    part = matches[start:start + PART]
    writer = Writer(session.connection(), project_id).begin()
    now = utcnow()
    tagged = BitMap()
    for tag_id in tag_ids:
        lacking = part - counting.tag(tag_id)
        if not lacking:
            continue
        links = _insert(session, query_tags).from_select(
            ["query_pk", "tag_id", "updated_at", "rule_id", "added_at"],
            select(Query.pk, literal(tag_id, Integer), literal(now), literal(rule_id, Integer),
                   literal(now)).where(keys_condition(session, Query.pk, list(lacking)))
        ).on_conflict_do_nothing().returning(query_tags.c.query_pk)
        made = BitMap(session.execute(links).scalars())
        writer.changes.add(kinds.TAG, str(tag_id), made)
        tagged |= made
    touch(session, list(tagged), now)
    writer.finish()
    last = part.max() if part else after
    return {"tagged": len(tagged), "checked": len(part), "matching": len(matches),
            "appliedAt": now,
            "remaining": max(len(matches) - start - len(part), 0),
            "cursor": last if start + len(part) < len(matches) else None}


def _rule_links(session: Session, project_id: str, rule_id: int, since: datetime | None):
    links = query_tags.c
    where = [links.rule_id == rule_id,
             links.tag_id.in_(select(Tag.id).where(Tag.project_id == project_id))]
    if since is not None:
        where.append(links.added_at >= since)
    return select(links.query_pk, links.tag_id, links.added_at).where(*where).order_by(
        links.query_pk).limit(PART)


def unapply_part(session: Session, project_id: str, rule_id: int, since: datetime | None,
                 operation: str) -> dict:
    """Take away the next part of the rule's links (by query key), kept under `operation` for
    restore; the caller has begun the write and commits."""
    now = utcnow()
    session.execute(delete(rule_removals).where(rule_removals.c.removed_at < now - KEPT))
    rows = session.execute(_rule_links(session, project_id, rule_id, since)).all()
    writer = Writer(session.connection(), project_id).begin()
    if rows:
        session.execute(_insert(session, rule_removals).on_conflict_do_nothing(), [
            {"operation": operation, "query_pk": pk, "tag_id": tag_id,
             "project_id": project_id, "rule_id": rule_id, "added_at": added_at,
             "removed_at": now} for pk, tag_id, added_at in rows])
        pairs = [(pk, tag_id) for pk, tag_id, _added_at in rows]
        for tag_id in {tag_id for _pk, tag_id in pairs}:
            keys = [pk for pk, each in pairs if each == tag_id]
            session.execute(delete(query_tags).where(
                query_tags.c.tag_id == tag_id, keys_condition(session, query_tags.c.query_pk,
                                                              keys)))
        writer.removed_links(pairs)
        touch(session, sorted({pk for pk, _tag_id in pairs}), now)
    writer.finish()
    return {"removed": len(rows), "queries": len({row[0] for row in rows}),
            "more": len(rows) == PART, "operation": operation}


def restore_part(session: Session, project_id: str, operation: str) -> dict:
    """Put back the next part of an operation's links where the query and the tag still
    exist (the tag held to the commit) and the link is not there again; the caller has begun
    the write and commits."""
    removed = rule_removals.c
    rows = session.execute(
        select(removed.query_pk, removed.tag_id, removed.rule_id, removed.added_at).where(
            removed.operation == operation, removed.project_id == project_id)
        .order_by(removed.query_pk, removed.tag_id).limit(PART)).all()
    writer = Writer(session.connection(), project_id).begin()
    now = utcnow()
    groups: dict[tuple[int, int, datetime | None], list[int]] = {}
    for pk, tag_id, rule_id, added_at in rows:
        groups.setdefault((tag_id, rule_id, added_at), []).append(pk)
    restored: list[tuple[int, int]] = []
    held = hold_tags(session, project_id, {tag_id for tag_id, _rule_id, _added_at in groups})
    for (tag_id, rule_id, added_at), keys in groups.items():
        if tag_id in held:  # a tag gone since: its links are passed over, and go too
            links = _insert(session, query_tags).from_select(
                ["query_pk", "tag_id", "updated_at", "rule_id", "added_at"],
                select(Query.pk, literal(tag_id, Integer), literal(now),
                       literal(rule_id, Integer), literal(added_at or now)).where(
                    keys_condition(session, Query.pk, keys), Query.project_id == project_id)
            ).on_conflict_do_nothing().returning(query_tags.c.query_pk)
            restored += [(pk, tag_id) for pk in session.execute(links).scalars()]
        session.execute(delete(rule_removals).where(
            removed.operation == operation, removed.tag_id == tag_id,
            keys_condition(session, removed.query_pk, keys)))
    writer.added_links(restored)
    touch(session, sorted({pk for pk, _tag_id in restored}), now)
    writer.finish()
    return {"restored": len(restored), "queries": len({pk for pk, _tag_id in restored}),
            "more": len(rows) == PART}
