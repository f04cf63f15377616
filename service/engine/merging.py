"""A tag merged into another, and the merge undone (an extension: tags/merge and tags/unmerge,
service/api/tag_changes.py), each one transaction through a Writer.

- merge: every query that carried the tag carries the other (a link it lacked is made, with
  the merged link's rule, time and author), the tag's links go, and so does its row; every
  query that carried it is touched (`updatedAt`), since its tags changed. Rules that named
  the tag (their tags, or their condition) and saved views that did (their filter) name the
  other instead, each tag once. What it
  took and made is kept under the operation's id (`tag_merges`, `tag_merge_links`).
- unmerge: the tag's row comes back under its own id (ids are never given to another tag, so
  the id is still its own), its links exactly as they were (to the queries still there), the
  links the merge made are taken away, the rules and saved views it changed are put back
  where nobody has changed them since, and the record goes: an operation is undone once.
  Merges that share a tag are undone last first (LaterMerge names the one to undo first):
  then each undo finds the queries as its merge left them, and gives back exactly their tags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import (
    Boolean,
    DateTime,
    Integer,
    String,
    delete,
    exists,
    false,
    insert,
    literal,
    select,
    true,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..store.models import Rule, SavedView, Tag, utcnow
from .deleting import lock_tag_and_its_queries
from .keys import keys_condition
from .tables import Query, query_tags, tag_merge_links, tag_merges
from .tagging import touch
from .writer import Writer

# A merge is kept this long for its undo.
KEPT = timedelta(days=7)


class NameTaken(Exception):
    """Undo: a tag of the merged tag's name was made since (its name, as it reads)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class LaterMerge(Exception):  # noqa: N818 — a sentence for the person
    """Undo: a merge made since depends on this one — it merged the tag this one went into, or
    merged another tag into it — and is to be undone first (`name` into `into`, as they
    read)."""

    def __init__(self, name: str, into: str) -> None:
        super().__init__(f"“{name}” was merged into “{into}” after this merge. Undo the merge "
                         f"of “{name}” into “{into}” first.")
        self.name, self.into = name, into


def _as_id(value) -> int | None:
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.isascii() and text.isdigit() else None


def _renamed_ids(values: list, tag_id: int, into_id: int) -> list:
    """`values` (tag ids, as numbers or text) with `tag_id` as `into_id`, each tag once."""
    out: list = []
    seen: set[int] = set()
    for value in values:
        number = _as_id(value)
        if number == tag_id:
            value, number = into_id, into_id
        if number is not None:
            if number in seen:
                continue
            seen.add(number)
        out.append(value)
    return out


def _renamed_names(values: list[str], folded: str, into_name: str) -> list[str]:
    out: list[str] = []
    for value in values:
        if fold_tag_name(value) == folded:
            value = into_name
        if fold_tag_name(value) not in {fold_tag_name(each) for each in out}:
            out.append(value)
    return out


def renamed_condition(condition: dict, tag: Tag, into: Tag) -> dict:
    """A rule's condition (as stored) naming `into` wherever it named `tag`."""
    changed = dict(condition)
    for field in ("tagIds", "excludeTagIds"):
        if field in changed:
            changed[field] = _renamed_ids(changed[field], tag.id, into.id)
    for field in ("tagNames", "excludeTagNames"):
        if field in changed:
            changed[field] = _renamed_names(changed[field], tag.name_folded, into.name)
    return changed


def _renamed_everywhere(session: Session, project_id: str, tag: Tag, into: Tag,
                        now) -> dict:
    """Every rule (its tags, its condition) and saved view (its filter) naming `tag` names
    `into` instead; what each was before and after, by kind and id, for the undo."""
    changed: dict[str, dict] = {"rules": {}, "views": {}}
    for rule in session.scalars(select(Rule).where(Rule.project_id == project_id)
                                .order_by(Rule.id)):
        ids, condition = json.loads(rule.tag_ids), json.loads(rule.condition)
        new_ids = _renamed_ids(ids, tag.id, into.id)
        new_condition = renamed_condition(condition, tag, into)
        if new_ids == ids and new_condition == condition:
            continue
        after_ids, after_condition = json.dumps(new_ids), _json(new_condition)
        changed["rules"][str(rule.id)] = {"tagIds": [rule.tag_ids, after_ids],
                                          "condition": [rule.condition, after_condition]}
        rule.tag_ids, rule.condition, rule.updated_at = after_ids, after_condition, now
    for view in session.scalars(select(SavedView).where(SavedView.project_id == project_id)
                                .order_by(SavedView.id)):
        filters = json.loads(view.filters)
        new_filters = renamed_condition(filters, tag, into)
        if new_filters == filters:
            continue
        after = _json(new_filters)
        changed["views"][str(view.id)] = {"filters": [view.filters, after]}
        view.filters, view.updated_at = after, now
    session.flush()
    return changed


def _json(value: dict) -> str:
    """As rules and saved views keep their filters."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def merge(session: Session, project_id: str, tag: Tag, into: Tag, operation: str) -> int:
    """Merge `tag` into `into` (both of the project) in the caller's write transaction; how
    many queries changed (those that carried `tag`)."""
    if session.get_bind().dialect.name == "postgresql":
        lock_tag_and_its_queries(session, tag.id)
    now = utcnow()
    old = select(tag_merges.c.operation).where(tag_merges.c.merged_at < now - KEPT)
    session.execute(delete(tag_merge_links).where(tag_merge_links.c.operation.in_(old)))
    session.execute(delete(tag_merges).where(tag_merges.c.merged_at < now - KEPT))
    links = query_tags.c
    keys = list(session.scalars(select(links.query_pk).where(links.tag_id == tag.id)
                                .order_by(links.query_pk)))
    had = set(session.scalars(select(links.query_pk).where(
        links.tag_id == into.id, keys_condition(session, links.query_pk, keys)))) if keys else set()
    lacking = [key for key in keys if key not in had]
    named_in = _renamed_everywhere(session, project_id, tag, into, now)
    session.execute(insert(tag_merges).values(
        operation=operation, project_id=project_id, tag_id=tag.id, into_id=into.id,
        name=tag.name, name_folded=tag.name_folded, color=tag.color,
        description=tag.description, named_in=json.dumps(named_in), merged_at=now))
    # Set-based, from the links themselves: a row at a time, 100,000 links took PostgreSQL
    # over two minutes on a loaded machine.
    merged_links = select(links.query_pk, links.rule_id, links.added_at, links.added_by,
                          links.imported_from, links.suggested).where(links.tag_id == tag.id)
    other = query_tags.alias("other")
    lacks_into = merged_links.where(~exists().where(other.c.query_pk == links.query_pk,
                                                    other.c.tag_id == into.id)).subquery()
    took = merged_links.subquery()
    session.execute(insert(tag_merge_links).from_select(
        ["operation", "made", "query_pk", "from_rule", "linked_at", "linked_by",
         "linked_from", "linked_suggested"],
        select(literal(operation, String), false(), took.c.query_pk, took.c.rule_id,
               took.c.added_at, took.c.added_by, took.c.imported_from, took.c.suggested)))
    session.execute(insert(tag_merge_links).from_select(
        ["operation", "made", "query_pk"],
        select(literal(operation, String), true(), lacks_into.c.query_pk)))
    with Writer(session.connection(), project_id) as writer:
        if lacking:
            # A link the merge makes keeps the merged link's rule, time, author, file and
            # whether it was a suggestion accepted.
            session.execute(insert(query_tags).from_select(
                ["query_pk", "tag_id", "updated_at", "rule_id", "added_at", "added_by",
                 "imported_from", "suggested"],
                select(lacks_into.c.query_pk, literal(into.id, Integer), literal(now, DateTime),
                       lacks_into.c.rule_id, lacks_into.c.added_at, lacks_into.c.added_by,
                       lacks_into.c.imported_from, lacks_into.c.suggested)))
            writer.added_links([(key, into.id) for key in lacking])
        session.execute(delete(query_tags).where(links.tag_id == tag.id)
                        .execution_options(synchronize_session=False))
        touch(session, keys, now)
        session.execute(delete(Tag).where(Tag.id == tag.id)
                        .execution_options(synchronize_session=False))
        writer.dropped_tag(tag.id)
    return len(keys)


@dataclass(frozen=True)
class Step:
    """One merge of a chain: `tag_id` into `into_id` (the record `operation`)."""

    operation: str
    tag_id: int
    into_id: int
    merged_at: datetime


def merge_chains(connection: Connection, tag_ids: set[int]) -> dict[int, list[Step]]:
    """The merges each of these tags went through one after another (M into T, then T into U),
    for those merged into another; the last step's `into_id` is where it is now, whether or
    not that tag exists. A merge is followed whatever its age: ids are never given to
    another tag."""
    merges = tag_merges.c
    chains: dict[int, list[Step]] = {tag_id: [] for tag_id in tag_ids}
    moving = set(tag_ids)
    while moving:
        now_at = {tag_id: chains[tag_id][-1].into_id if chains[tag_id] else tag_id
                  for tag_id in moving}
        went = {row.tag_id: Step(row.operation, row.tag_id, row.into_id, row.merged_at)
                for row in connection.execute(select(
                    merges.operation, merges.tag_id, merges.into_id, merges.merged_at)
                    .where(merges.tag_id.in_(sorted(set(now_at.values())))))}
        for tag_id in list(moving):
            step = went.get(now_at[tag_id])
            passed = {tag_id, *(each.into_id for each in chains[tag_id])}
            if step is None or step.into_id in passed:  # a circle is never followed
                moving.discard(tag_id)
            else:
                chains[tag_id].append(step)
    return {tag_id: chain for tag_id, chain in chains.items() if chain}


def merged(session: Session, project_id: str, operation: str):
    """The merge of that operation in the project while it can be undone (a week), or None
    (another project's alike)."""
    return session.execute(select(tag_merges).where(
        tag_merges.c.operation == operation, tag_merges.c.project_id == project_id,
        tag_merges.c.merged_at >= utcnow() - KEPT)).first()


def _restored_everywhere(session: Session, project_id: str, named_in: dict) -> None:
    """Each rule and saved view the merge changed, and nobody since, as it was before."""
    now = utcnow()
    for rule_id, change in named_in.get("rules", {}).items():
        rule = session.scalar(select(Rule).where(Rule.id == int(rule_id),
                                                 Rule.project_id == project_id))
        if rule is None:
            continue
        for field, column in (("tagIds", "tag_ids"), ("condition", "condition")):
            before, after = change[field]
            if getattr(rule, column) == after:
                setattr(rule, column, before)
        rule.updated_at = now
    for view_id, change in named_in.get("views", {}).items():
        view = session.scalar(select(SavedView).where(SavedView.id == int(view_id),
                                                      SavedView.project_id == project_id))
        before, after = change["filters"]
        if view is not None and view.filters == after:
            view.filters, view.updated_at = before, now
    session.flush()


def _later_merge(session: Session, project_id: str, record):
    """The last merge made after `record` that merged the tag `record` went into, or merged
    another tag into it, or None. Undone first, `record` changes exactly what it made: the
    queries of that tag are then as `record` left them (undone in any order, a query that
    carried only the first tag kept the second; docs/api.md, Unmerge)."""
    merges = tag_merges.c
    return session.execute(select(merges.tag_id, merges.into_id, merges.name).where(
        merges.project_id == project_id, merges.operation != record.operation,
        merges.merged_at >= record.merged_at,
        (merges.tag_id == record.into_id) | (merges.into_id == record.into_id))
        .order_by(merges.merged_at.desc()).limit(1)).first()


def _name_of(session: Session, tag_id: int) -> str:
    """A tag's name: as it is, or as it was when it was merged into another; its id if it was
    deleted."""
    name = session.scalar(select(Tag.name).where(Tag.id == tag_id))
    if name is None:
        name = session.scalar(select(tag_merges.c.name).where(tag_merges.c.tag_id == tag_id)
                              .order_by(tag_merges.c.merged_at.desc()).limit(1))
    return name if name is not None else f"tag {tag_id}"


def unmerge(session: Session, project_id: str, record) -> tuple[Tag, int]:
    """Undo the merge `record` (merged()) in the caller's write transaction: the tag back, and
    how many queries changed. LaterMerge: a merge made since depends on it. NameTaken: a tag
    of its name was made since."""
    if session.get_bind().dialect.name == "postgresql":
        # The tag it went into, and its queries, held: a merge of it or into it waits, or is
        # seen by the check below once it is committed.
        lock_tag_and_its_queries(session, record.into_id)
    later = _later_merge(session, project_id, record)
    if later is not None:
        raise LaterMerge(later.name, _name_of(session, later.into_id))
    existing = session.scalar(select(Tag.name).where(
        Tag.project_id == project_id, Tag.name_folded == record.name_folded))
    if existing is not None:
        raise NameTaken(existing)
    now = utcnow()
    saved = tag_merge_links.c
    rows = session.execute(select(saved.made, saved.query_pk, saved.from_rule, saved.linked_at,
                                  saved.linked_by, saved.linked_from, saved.linked_suggested)
                           .where(saved.operation == record.operation)).all()
    taken = [row for row in rows if not row.made]
    made = [row.query_pk for row in rows if row.made]
    links = query_tags.c
    with Writer(session.connection(), project_id) as writer:
        session.execute(insert(Tag.__table__).values(
            id=record.tag_id, project_id=project_id, name=record.name,
            name_folded=record.name_folded, color=record.color,
            description=record.description))
        back: list[int] = []
        groups: dict[tuple, list[int]] = {}
        for row in taken:
            groups.setdefault((row.from_rule, row.linked_at, row.linked_by, row.linked_from,
                               row.linked_suggested), []).append(row.query_pk)
        for (rule_id, added_at, added_by, imported_from, suggested), keys in groups.items():
            statement = insert(query_tags).from_select(
                ["query_pk", "tag_id", "updated_at", "rule_id", "added_at", "added_by",
                 "imported_from", "suggested"],
                select(Query.pk, literal(record.tag_id, Integer), literal(now),
                       literal(rule_id, Integer), literal(added_at, DateTime),
                       literal(added_by, String), literal(imported_from, String),
                       literal(suggested, Boolean))
                .where(keys_condition(session, Query.pk, keys),
                       Query.project_id == project_id)
            ).returning(query_tags.c.query_pk)
            back += list(session.execute(statement).scalars())
        writer.added_links([(pk, record.tag_id) for pk in back])
        gone: list[int] = []
        if made:
            gone = list(session.execute(delete(query_tags).where(
                links.tag_id == record.into_id, keys_condition(session, links.query_pk, made))
                .returning(links.query_pk)).scalars())
            writer.removed_links([(pk, record.into_id) for pk in gone])
        changed = sorted(set(back) | set(gone))
        touch(session, changed, now)
    _restored_everywhere(session, project_id, json.loads(record.named_in))
    session.execute(delete(tag_merge_links).where(saved.operation == record.operation))
    session.execute(delete(tag_merges).where(tag_merges.c.operation == record.operation))
    tag = session.scalar(select(Tag).where(Tag.id == record.tag_id))
    return tag, len(changed)
