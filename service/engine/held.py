"""What each process holds of a project: its bitmaps of all queries, of each language,
country, tag and number, and the words of its texts, brought up to date on every read from
the pieces written since (their stamps): a new piece takes the place of its chunk's keys in
the whole bitmap, so the pieces themselves are not kept. A read then intersects bitmaps in
memory; the pieces of words and short strings are read for a term when it is asked for, and
the result kept while the project's texts stay as they are.

Kept per process, keyed by the project's epoch (which moves when pieces are dropped) and
stamp (which moves with every write of the engine): processes never disagree about what is
current, since the stamps live in the database.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from dataclasses import dataclass, field

from cachetools import LRUCache
from pyroaring import BitMap, FrozenBitMap
from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from ..store.models import Project
from .kinds import ALL, HELD_KINDS, TAG, WORD
from .pieces import CHUNK_SHIFT
from .tables import pieces

EMPTY = FrozenBitMap()
# Projects held per process, and term results remembered.
PROJECTS = 64
TERMS = 512


@dataclass(frozen=True)
class Header:
    epoch: int
    stamp: int
    texts_stamp: int
    current: bool  # no write went around the engine since the bitmaps were built


_projects = Project.__table__
# Built once (every read asks it; building a statement costs more than running it here).
HEADER = select(_projects.c.engine_epoch, _projects.c.engine_stamp, _projects.c.texts_stamp,
                _projects.c.changes_outside == _projects.c.changes_indexed).where(
    _projects.c.id == bindparam("project_id"))


def header(connection: Connection, project_id: str) -> Header | None:
    row = connection.execute(HEADER, {"project_id": project_id}).one_or_none()
    return None if row is None else Header(row[0], row[1], row[2], bool(row[3]))


class Vocabulary:
    """The distinct words of a project's folded texts, searchable by substring: joined with
    NUL between them (no text holds one), one `str.find` after another finds every word
    holding a term at the speed of a memory scan."""

    def __init__(self) -> None:
        self.words: set[str] = set()
        self.ordered: list[str] = []
        self.starts: list[int] = []  # where each word of `ordered` starts in `joined`
        self.joined = "\0"

    def add(self, new_words) -> None:
        new_words = sorted(set(new_words) - self.words)
        if not new_words:
            return
        self.words.update(new_words)
        at = len(self.joined)
        for word in new_words:
            self.starts.append(at)
            at += len(word) + 1
        self.ordered.extend(new_words)
        self.joined += "\0".join(new_words) + "\0"

    def containing(self, term: str) -> list[str]:
        """Every word that holds `term` (not empty, no NUL)."""
        found, joined, starts = [], self.joined, self.starts
        at = joined.find(term)
        while at != -1:
            index = bisect.bisect_right(starts, at) - 1
            found.append(self.ordered[index])
            following = index + 1
            at = joined.find(term, starts[following]) if following < len(starts) else -1
        return found


@dataclass
class Project_:
    epoch: int
    stamp: int = -1
    whole: dict[tuple[int, str], BitMap] = field(default_factory=dict)
    # The stamp at which each kind's bitmaps last changed (what is made from them is kept
    # while they stay as they are), and what was made: name → (the stamps it was made at, it).
    changed: dict[int, int] = field(default_factory=dict)
    made: dict[str, tuple[tuple[int, ...], object]] = field(default_factory=dict)
    vocabulary: Vocabulary = field(default_factory=lambda: Vocabulary())
    untagged: tuple[int, FrozenBitMap] = (-1, FrozenBitMap())
    lock: threading.Lock = field(default_factory=threading.Lock)

    def bitmap(self, kind: int, value: str) -> FrozenBitMap:
        return self.whole.get((kind, value)) or EMPTY

    def values(self, kind: int) -> list[str]:
        return [value for (k, value), keys in self.whole.items() if k == kind and keys]

    def no_tag(self) -> FrozenBitMap:
        """The queries that carry no tag ("untagged"), worked out once per stamp."""
        stamp = self.stamp  # before the bitmaps are read: a read may bring them up meanwhile
        worked_out, found = self.untagged
        if worked_out != stamp:
            tagged = FrozenBitMap.union(EMPTY, *(keys for (kind, _value), keys
                                                 in self.whole.items() if kind == TAG))
            found = self.bitmap(ALL, "") - tagged
            self.untagged = (stamp, found)
        return found

    def kept(self, name: str, of_kinds: tuple[int, ...], make,
             as_of: dict[int, int] | None = None):
        """What `make()` makes from the bitmaps of `of_kinds`, made again only once one of
        them changed. Kept with the stamps read before making it (or those of `as_of`, a copy
        of `changed` taken before what `make` uses was read): what a read made while another
        brought the bitmaps up to date is made again by the next read (a kind is marked
        changed once all its bitmaps are replaced)."""
        changed = self.changed if as_of is None else as_of
        version = tuple(changed.get(kind, -1) for kind in of_kinds)
        found = self.made.get(name)
        if found is None or found[0] != version:
            found = self.made[name] = (version, make())
        return found[1]


class Held:
    def __init__(self) -> None:
        self._projects: LRUCache = LRUCache(maxsize=PROJECTS)
        self._terms: LRUCache = LRUCache(maxsize=TERMS)
        self._lock = threading.Lock()

    def project(self, connection: Connection, project_id: str, at: Header) -> Project_:
        """The project's held bitmaps as of `at` (or a later write)."""
        with self._lock:
            held = self._projects.get(project_id)
            if held is None or held.epoch != at.epoch:
                held = self._projects[project_id] = Project_(epoch=at.epoch)
        with held.lock:
            if held.stamp < at.stamp:
                self._refresh(connection, project_id, held, at)
        return held

    @staticmethod
    def _refresh(connection: Connection, project_id: str, held: Project_, at: Header) -> None:
        # Pieces written after `at` are left for the next read: what is held is as of `at`.
        rows = connection.execute(
            select(pieces.c.kind, pieces.c.value, pieces.c.chunk, pieces.c["keys"]).where(
                pieces.c.project_id == project_id, pieces.c.stamp > held.stamp,
                pieces.c.stamp <= at.stamp, pieces.c.kind.in_(HELD_KINDS)))
        changed: dict[tuple[int, str], dict[int, BitMap]] = defaultdict(dict)
        for kind, value, chunk, keys in rows:
            changed[kind, value][chunk] = BitMap.deserialize(keys)
        for key, chunks in changed.items():
            held.whole[key] = _replaced(held.whole.get(key), chunks)
        # Only once every bitmap of a kind is replaced: what a read makes meanwhile (kept)
        # must not be kept as of this stamp.
        for kind in {kind for kind, _value in changed}:
            held.changed[kind] = at.stamp
        words = connection.execute(
            select(pieces.c.value).where(
                pieces.c.project_id == project_id, pieces.c.stamp > held.stamp,
                pieces.c.stamp <= at.stamp, pieces.c.kind == WORD, pieces.c.size > 0)
            .distinct()).scalars()
        held.vocabulary.add(set(words))
        held.stamp = at.stamp

    def term(self, key: tuple, compute) -> BitMap:
        found = self.remembered(key)
        if found is None:
            found = compute()
            self.remember(key, found)
        return found

    def remembered(self, key: tuple):
        """What was kept for a term or pattern (its key names the texts' stamp), or None."""
        with self._lock:
            return self._terms.get(key)

    def remember(self, key: tuple, value) -> None:
        with self._lock:
            self._terms[key] = value


def _replaced(whole: FrozenBitMap | None, chunks: dict[int, BitMap]) -> FrozenBitMap:
    """`whole` with each chunk's keys those of its new piece. Frozen: what every read shares
    can never be changed in place by one of them."""
    if whole is None:
        return FrozenBitMap.union(EMPTY, *chunks.values())
    kept = BitMap(whole)
    for chunk in chunks:
        kept.remove_range(chunk << CHUNK_SHIFT, (chunk + 1) << CHUNK_SHIFT)
    return FrozenBitMap.union(FrozenBitMap(kept), *chunks.values())


def all_keys(held: Project_) -> BitMap:
    return held.bitmap(ALL, "")
