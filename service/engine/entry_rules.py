"""Rules on entry (service/api/rules.py): the queries a write adds to a project get the tags of
every active rule of the project whose condition they match, in the write's transaction,
through its Writer. Rules only add tags; the links they add carry the rule's id
(query_tags.rule_id) and the query's time.

Counted with bitmaps, not row by row: a write's Changes already hold the bitmaps of its new
queries (all of them, their words, short strings, languages, countries, and the tags their
rows named), so each rule's condition is counted on those alone — the new keys are in no
stored piece yet — and intersected with the new keys once. Every rule sees the queries as they
entered: one rule's tags never make another rule match (so their order never matters).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pyroaring import BitMap, FrozenBitMap
from sqlalchemy import Integer, literal, or_, select, update
from sqlalchemy.engine import Connection

from ..store.models import Rule, Tag, utcnow
from . import folding, kinds
from .counting import CHECKED_AT_ONCE, Counter, FilterOf
from .held import Header, Held, Project_, Vocabulary, header
from .keys import keys_condition
from .tables import Query, query_tags


class _Bound:
    """What Counter asks of a session, answered by the write's connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def execute(self, *args, **kwargs):
        return self._connection.execute(*args, **kwargs)

    def connection(self) -> Connection:
        return self._connection

    def get_bind(self) -> Connection:
        return self._connection


class _NewKeys(Counter):
    """A Counter of the new queries only, from the write's bitmaps (nothing is cached across
    writes: each write's keys are its own)."""

    def __init__(self, connection: Connection, project_id: str, added: dict,
                 tag_ids: list[int]) -> None:
        held = Project_(epoch=-1, stamp=0)
        for (kind, value), keys in added.items():
            if kind in kinds.HELD_KINDS:
                # A copy: the links rules add go into the write's bitmaps, and every rule
                # must see the queries as they entered.
                held.whole[kind, value] = FrozenBitMap(keys)
        super().__init__(_Bound(connection), project_id, Header(-1, -1, -1, True), held,
                         Held(), tag_ids)
        self.added = added
        self.texts: dict[str, BitMap] = {}
        self.words: Vocabulary | None = None  # made when a condition first needs it
        self.read_texts: dict[int, str] | None = None  # likewise

    def containing(self, folded: str) -> list[str]:
        if self.words is None:
            self.words = Vocabulary()
            self.words.add(value for kind, value in self.added if kind == kinds.WORD)
        return self.words.containing(folded)

    def distinct_words(self) -> list[str]:
        return [value for kind, value in self.added if kind == kinds.WORD]

    def word_union(self, words: list[str]) -> BitMap:
        return self._union(kinds.WORD, words)

    def _checked(self, candidates: BitMap, test) -> BitMap:
        """As Counter._checked, the write's texts read once for every rule (a pattern or a
        term with a space each check some): one read of the range, not one a rule."""
        if self.read_texts is None:
            self.read_texts = {}
            keys = list(self.everything)
            for start in range(0, len(keys), CHECKED_AT_ONCE):
                self.read_texts.update(self.session.execute(select(Query.pk, Query.query).where(
                    keys_condition(self.session, Query.pk, keys[start:start + CHECKED_AT_ONCE]))
                ).all())
        texts = self.read_texts
        return BitMap(pk for pk in candidates if pk in texts and test(texts[pk]))

    def _union(self, kind: int, values) -> BitMap:
        return BitMap.union(BitMap(), *(self.added.get((kind, value), BitMap())
                                        for value in values))

    def text(self, term: str) -> BitMap:
        folded = folding.fold(term)
        if folded not in self.texts:
            self.texts[folded] = self._new_text(folded) & self.everything
        return self.texts[folded]

    def _new_text(self, folded: str) -> BitMap:
        # As Counter._text, reading the write's bitmaps instead of the stored pieces.
        if len(folded) <= folding.SHORT:
            return self._union(kinds.SHORT, [folded])
        if " " not in folded:
            return self._union(kinds.WORD, self.containing(folded))
        candidates = BitMap(self.everything)
        for part in folded.split(" "):
            if part:
                candidates &= self.text(part)
        for pair in {folded[i:i + 2] for i in range(len(folded) - 1)}:
            candidates &= self._union(kinds.SHORT, [pair])
        return self._checked(candidates, lambda text: folding.matches(folded, text))


# How a rule's kept condition (JSON) is read: the service's own reading of a kept filter
# (service/query_filters.stored), given at start-up by read_conditions_with.
_read_condition: Callable[[str], FilterOf]


def read_conditions_with(reader: Callable[[str], FilterOf]) -> None:
    global _read_condition
    _read_condition = reader


def active_rules(connection: Connection, project_id: str) -> list[Rule]:
    return list(connection.execute(
        select(Rule.id, Rule.condition, Rule.tag_ids).where(
            Rule.project_id == project_id, Rule.paused.is_(False)).order_by(Rule.id)))


def apply(connection: Connection, project_id: str, writer) -> int:
    """Tag the write's new queries by the project's active rules; how many queries got a tag.
    Called last before the writer finishes."""
    new = writer.changes.added.get((kinds.ALL, ""))
    if not new:
        return 0
    rules = active_rules(connection, project_id)
    if not rules:
        return 0
    tags = dict(connection.execute(select(Tag.id, Tag.name_folded).where(
        Tag.project_id == project_id)).all())
    counting = _NewKeys(connection, project_id, dict(writer.changes.added), sorted(tags))
    given: dict[int, BitMap] = {}  # tag → new keys a rule gave it, in this write
    tagged = BitMap()
    for rule_id, condition, tag_ids in rules:
        # The new queries only: a number's bitmaps in the write may hold present queries too
        # (their numbers changed: recheck).
        matches = counting.matches(_read_condition(condition)(tags)) & counting.everything
        if not matches:
            continue
        for tag_id in json.loads(tag_ids):
            if tag_id not in tags:
                continue  # deleted while the write ran: its rules hear of it after
            lacking = matches - counting.tag(tag_id) - given.get(tag_id, BitMap())
            if not lacking:
                continue
            _link(connection, tag_id, rule_id, lacking)
            writer.changes.add(kinds.TAG, str(tag_id), lacking)  # as added_links, kept a bitmap
            given[tag_id] = given.get(tag_id, BitMap()) | lacking
            tagged |= lacking
    return len(tagged)


def recheck(connection: Connection, project_id: str, writer, keys: BitMap) -> int:
    """Queries already present whose numbers the write changed get the tags of each active
    rule with a range (metricRanges) that they now match, as entering queries would; rules
    only add. The project's bitmaps as stored, with the write's changes to the numbers."""
    rules = [rule for rule in active_rules(connection, project_id)
             if '"metricRanges"' in rule.condition]
    if not rules or not keys:
        return 0
    at = header(connection, project_id)
    stored = Held().project(connection, project_id, at)
    now = Project_(epoch=stored.epoch, stamp=stored.stamp, whole=dict(stored.whole))
    for key in writer.changes.added.keys() | writer.changes.removed.keys():
        if key[0] == kinds.NUMBER:
            now.whole[key] = FrozenBitMap((now.bitmap(*key) - writer.changes.removed.get(
                key, BitMap())) | writer.changes.added.get(key, BitMap()))
    tags = dict(connection.execute(select(Tag.id, Tag.name_folded).where(
        Tag.project_id == project_id)).all())
    counting = Counter(_Bound(connection), project_id, at, now, Held(), sorted(tags))
    links: list[tuple[int, int, BitMap]] = []  # rule, tag, keys
    tagged = BitMap()
    for rule_id, condition, tag_ids in rules:
        matches = counting.matches(_read_condition(condition)(tags)) & keys
        for tag_id in json.loads(tag_ids) if matches else ():
            if tag_id not in tags:
                continue
            lacking = (matches - counting.tag(tag_id) - tagged_by(links, tag_id)
                       - writer.changes.added.get((kinds.TAG, str(tag_id)), BitMap()))
            if lacking:
                links.append((rule_id, tag_id, lacking))
                tagged |= lacking
    if tagged:
        # Their tags changed: so did they (updatedAt), and each link copies the time.
        now, changed = utcnow(), keys_condition(_Bound(connection), Query.pk, list(tagged))
        connection.execute(update(Query).where(changed).values(updated_at=now))
        connection.execute(update(query_tags).where(keys_condition(
            _Bound(connection), query_tags.c.query_pk, list(tagged))).values(updated_at=now))
    for rule_id, tag_id, lacking in links:
        _link(connection, tag_id, rule_id, lacking)
        writer.changes.add(kinds.TAG, str(tag_id), lacking)
    return len(tagged)


def tagged_by(links: list[tuple[int, int, BitMap]], tag_id: int) -> BitMap:
    return BitMap.union(BitMap(), *(keys for _rule, tag, keys in links if tag == tag_id))


def _link(connection: Connection, tag_id: int, rule_id: int, keys: BitMap) -> None:
    """The links, with the query's time (as every link copies it), the rule's id and when."""
    bound = _Bound(connection)
    links = query_tags.insert().from_select(
        ["query_pk", "tag_id", "updated_at", "rule_id", "added_at"],
        select(Query.pk, literal(tag_id, Integer), Query.updated_at,
               literal(rule_id, Integer), Query.updated_at).where(
            keys_condition(bound, Query.pk, list(keys))))
    connection.execute(links)


def sources(connection: Connection, query_pks: list[int]) -> dict[int, dict[int, dict]]:
    """For queries/list's records: query pk → {tag id: where the link came from}, for the
    links whose source is known: the rule that added it (`ruleId`), who the caller said added
    it (`addedBy`), the file of the import whose tags column named it (`importedFrom`),
    whether it is a suggestion accepted (`suggested`), and when (`addedAt`, a datetime)."""
    found: dict[int, dict[int, dict]] = {}
    if query_pks:
        links = query_tags.c
        rows = connection.execute(
            select(links.query_pk, links.tag_id, links.rule_id, links.added_by,
                   links.imported_from, links.added_at, links.suggested).where(
                keys_condition(_Bound(connection), links.query_pk, query_pks),
                or_(links.rule_id.is_not(None), links.added_at.is_not(None))))
        for query_pk, tag_id, rule_id, added_by, imported_from, added_at, suggested in rows:
            source = {"ruleId": rule_id, "addedBy": added_by, "importedFrom": imported_from,
                      "addedAt": added_at, "suggested": True if suggested else None}
            found.setdefault(query_pk, {})[tag_id] = {
                name: value for name, value in source.items() if value is not None}
    return found


def tag_deleted(session, project_id: str, tag_id: int, name: str) -> None:
    """The tag leaves every rule of the project that adds it, in the deletion's transaction;
    a rule left with no tag is paused, and says why."""
    for rule in session.scalars(select(Rule).where(Rule.project_id == project_id)):
        ids = json.loads(rule.tag_ids)
        if tag_id not in ids:
            continue
        ids = [each for each in ids if each != tag_id]
        rule.tag_ids = json.dumps(ids)
        if not ids:
            rule.paused = True
            rule.paused_reason = f"Its last tag, “{name}”, was deleted."
        rule.updated_at = utcnow()
    session.flush()
