"""Each query's place in its project's id order, coarsely, by pk, held per process beside the
bitmaps: the ties of a sorted page, put in id order, are then narrowed in memory to the few
queries the page's places can hold (`among`), and only those are read and ordered by the
database, where walking the id index passed every other query of the project first.

A query's key is its bucket: the project's ids read once in order and cut into buckets of 64,
numbered in that order; a bucket begins at its first id. A query added later takes the bucket
its id falls in, or, past the last id, a new bucket after every other; keys thus never order
two ids against their order, and a set of equal keys is ordered by the database. A bucket
grown to eight times its size has the project's ids read again.

Exact without stamps: a query's id never changes, and a project's pks are never given to
another of its queries within an epoch (queries leave a project only by writes around the
engine, and the project's bitmaps, built again after those, move its epoch). So the keys are
read once per epoch, in a thread of their own (pages meanwhile are found as without them),
and extended by the queries the project gained since, whatever order their writes committed
in (what is loaded is a bitmap of pks, not a highest pk). Ids compare
as the database compares them: bytes on SQLite, and on PostgreSQL `uuid`s, whose text (hex
digits in lower case) orders as their bytes. Only the ids compared in memory are checked (a
bucket's first, the largest, a new query's): one of them that is not ASCII (written by hand
on SQLite) leaves the project's keys unused for the epoch; others are placed by the database.

A large tie is not placed key by key: the buckets' pks are also held as bitmaps, 1,024
buckets a block and 16 blocks a group, and the tie is counted per group, then per block, from
the nearer end (a count is one bitmap intersection), so that only the keys of the one or two
blocks holding the page are placed: at ten million queries a page of a five-million tie
costs ~1-10 ms, not ~150.

Held in pages of 1,024 pks, only the pages a project's pks fall in: about 4.6 bytes a query;
the blocks 2.0 more, the groups 1.2 at ten million (0.1 at one).
"""

from __future__ import annotations

import array
import logging
import threading
import weakref
from contextlib import closing
from dataclasses import dataclass, field

import numpy as np
from cachetools import LRUCache
from pyroaring import BitMap
from sqlalchemy.engine import Connection, Engine

from .held import PROJECTS, Header, Held

logger = logging.getLogger(__name__)

BUCKET = 64
OVERFULL = 8 * BUCKET
# Buckets are kept in blocks of 1,024 (65,536 queries), and blocks in groups of 16, each a
# bitmap of its pks: a tie's keys are counted per group, then per block of the groups that
# hold the page, from the nearer end, and only the keys of its blocks are placed.
BLOCK_BITS, GROUP_BITS = 10, 4
# A count costs about as much as placing (~25 ns a key) a 1,280th of the project's keys
# (~200 us at ten million: a count passes each of its ~size/65,536 containers) and a 64th
# of the tie's while its containers are arrays (ties of up to a 16th of the project).
VISIT_SHARE, VISIT_TIE_SHARE = 1 / 1280, 1 / 64
PAGE_BITS = 10
PAGE = 1 << PAGE_BITS
ID_BYTES = 36
READ_AT_ONCE = 65_536
ORDERED = ("SELECT pk, id FROM queries WHERE project_id = {} ORDER BY id")
FROM_PK = ("SELECT pk, id FROM queries WHERE project_id = {} AND pk >= {}")


NEW, LOADING, READY = "new", "loading", "ready"


@dataclass
class ProjectKeys:
    """One project's keys as of one epoch."""

    epoch: int
    state: str = NEW  # NEW, its ids being read (LOADING), or READY
    loaded: BitMap = field(default_factory=BitMap)
    usable: bool = True  # every id read compares in memory as the database compares it
    page_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # -1: none
    pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    used: int = 0  # pages in use
    starts: np.ndarray = field(default_factory=lambda: np.zeros(0, f"S{ID_BYTES}"))
    sizes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    last: bytes = b""  # the largest id read
    blocks: list[BitMap] = field(default_factory=list)  # the pks of buckets 1,024 at a time
    groups: list[BitMap] = field(default_factory=list)  # the pks of blocks 16 at a time
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def nbytes(self) -> int:
        return (self.pages.nbytes + self.page_of.nbytes + self.starts.nbytes
                + self.sizes.nbytes + len(self.loaded.serialize())
                + sum(len(block.serialize()) for block in self.blocks + self.groups))

    def make_room(self, pks: np.ndarray) -> None:
        """A page for each pk that has none yet."""
        numbers = np.unique(pks >> PAGE_BITS)
        if len(numbers) and numbers[-1] >= len(self.page_of):
            grown = np.full(int(numbers[-1]) + 1, -1, np.int32)
            grown[:len(self.page_of)] = self.page_of
            self.page_of = grown
        new = numbers[self.page_of[numbers] < 0]
        if not len(new):
            return
        needed = (self.used + len(new)) * PAGE
        if needed > len(self.pages):
            # An eighth to spare when pages are added to (a few new queries at a time).
            spare = (needed // 8) // PAGE * PAGE if self.used else 0
            grown = np.zeros(needed + spare, np.uint32)
            grown[:self.used * PAGE] = self.pages[:self.used * PAGE]
            self.pages = grown
        self.page_of[new] = np.arange(self.used, self.used + len(new), dtype=np.int32)
        self.used += len(new)

    def place(self, pks: np.ndarray) -> np.ndarray:
        """Where each pk's key is (every pk has its page)."""
        slots = np.take(self.page_of, pks >> PAGE_BITS).view(np.uint32)
        slots <<= PAGE_BITS
        slots |= pks & (PAGE - 1)
        return slots

    def keys_of(self, pks: np.ndarray) -> np.ndarray:
        return np.take(self.pages, self.place(pks))

    def put(self, pks: np.ndarray, keys: np.ndarray) -> None:
        self.make_room(pks)
        self.pages[self.place(pks)] = keys
        self.loaded.update(_as_array(pks))
        for bits, bitmaps in ((BLOCK_BITS, self.blocks), (BLOCK_BITS + GROUP_BITS, self.groups)):
            _add(bitmaps, keys >> bits, pks)

    def holding(self, keys: BitMap, first: int, last: int) -> tuple[BitMap, int]:
        """The keys in the blocks that hold places `first` … `last` of `keys` in id order
        (ascending), and how many of the keys come before those blocks; all the keys when
        placing them costs less."""
        count = len(keys)
        if not placing_blocks(count, first, count - 1 - last, len(self.loaded)):
            return keys, 0
        low, high, before, within = _holding(keys, self.groups, 0, 0, count, first, last)
        low, high, before, _within = _holding(
            keys, self.blocks[:(high + 1) << GROUP_BITS], low << GROUP_BITS, before, within,
            first, last)
        return BitMap.union(*[keys & block for block in self.blocks[low:high + 1]]), before

    def read_all(self, connection: Connection, project_id: str, everything: BitMap) -> None:
        """Every query of the project read in id order and cut into buckets."""
        self.make_room(np.frombuffer(everything.to_array(), np.uint32))
        starts: list[bytes] = []
        done = 0
        with closing(_rows(connection, ORDERED, project_id)) as parts:
            for part in parts:
                ids = _comparable([row[1] for row in part[(-done) % BUCKET::BUCKET]])
                last = _comparable([part[-1][1]])
                if ids is None or last is None:
                    self.usable = False
                    return
                starts += ids
                places = np.arange(done, done + len(part), dtype=np.int64)
                self.put(_pks(part), (places // BUCKET).astype(np.uint32))
                done += len(part)
                self.last = last[0]
        self.loaded.run_optimize()
        self.starts = np.array([b""] + starts[1:], f"S{ID_BYTES}")
        self.sizes = np.full(len(starts), BUCKET, np.uint32)
        if len(starts):
            self.sizes[-1] = done - (len(starts) - 1) * BUCKET

    def read_new(self, connection: Connection, project_id: str, wanted: BitMap) -> None:
        """The queries not loaded yet (from the lowest wanted pk on) put in their buckets:
        those past the last id in new buckets of their own, in their order."""
        with closing(_rows(connection, FROM_PK, project_id, wanted.min())) as parts:
            for part in parts:
                part = [row for row in part if row[0] not in self.loaded]
                ids = _comparable([row[1] for row in part])
                if ids is None:
                    self.usable = False
                    return
                if not part:
                    continue
                pks, ids = _pks(part), np.array(ids, f"S{ID_BYTES}")
                keys = np.zeros(len(part), np.uint32)
                past = ids > np.bytes_(self.last)
                inside = np.searchsorted(self.starts, ids[~past], side="right") - 1
                keys[~past] = inside
                self.sizes += np.bincount(inside, minlength=len(self.sizes)).astype(np.uint32)
                if past.any():
                    order = np.argsort(ids[past], kind="stable")
                    first = len(self.starts)
                    keys[np.flatnonzero(past)[order]] = first + np.arange(len(order)) // BUCKET
                    self.starts = np.concatenate([self.starts, ids[past][order][::BUCKET]])
                    self.sizes = np.concatenate([self.sizes, np.bincount(
                        np.arange(len(order)) // BUCKET).astype(np.uint32)])
                    self.last = bytes(ids[past][order][-1])
                self.put(pks, keys)
        self.loaded.run_optimize()


class IdKeys:
    """Every project's keys a process holds (the projects most recently asked)."""

    def __init__(self) -> None:
        self._projects: LRUCache = LRUCache(maxsize=PROJECTS)
        self._lock = threading.Lock()

    def project(self, project_id: str, at: Header, fresh: bool = False) -> ProjectKeys | None:
        """The project's keys as of `at`'s epoch (begun again if `fresh`); None when a later
        epoch is already held (a read that began before the bitmaps were built again)."""
        with self._lock:
            held = self._projects.get(project_id)
            if held is None or held.epoch < at.epoch or (fresh and held.epoch == at.epoch):
                held = self._projects[project_id] = ProjectKeys(epoch=at.epoch)
            return held if held.epoch == at.epoch else None


# One per Held (per service app): what a project's pks name is that database's.
_by_store: weakref.WeakKeyDictionary[Held, IdKeys] = weakref.WeakKeyDictionary()
_by_store_lock = threading.Lock()


def of(store: Held) -> IdKeys:
    with _by_store_lock:
        found = _by_store.get(store)
        if found is None:
            found = _by_store[store] = IdKeys()
        return found


@dataclass(frozen=True)
class Narrowed:
    """The keys among which places `skip` … `skip + take` of a set in id order lie, and how
    many of the set come before all of them."""

    candidates: BitMap
    before: int


def loaded(store: Held, connection: Connection, project_id: str, at: Header,
           everything: BitMap) -> ProjectKeys | None:
    """The project's keys with every query of `everything` in them, or None — also while
    the project's ids are being read (in a thread of their own: at ten million queries the
    read takes a minute, which no request should wait for, nor hold the keys' lock for)."""
    keys = of(store).project(project_id, at)
    for _attempt in range(2):
        if keys is None:
            return None
        with keys.lock:
            if not keys.usable or keys.state == LOADING:
                return None
            if keys.state == NEW:
                keys.state = LOADING
                _read_all_meanwhile(keys, connection.engine, project_id, BitMap(everything))
                return None
            missing = everything - keys.loaded
            if missing:
                keys.read_new(connection, project_id, missing)
            if len(keys.sizes) and keys.sizes.max() <= OVERFULL:
                return keys if keys.usable else None
        keys = of(store).project(project_id, at, fresh=True)
    return None


def _read_all_meanwhile(keys: ProjectKeys, engine: Engine, project_id: str,
                        everything: BitMap) -> None:
    """Read the project's ids into `keys` on a connection and thread of their own; until
    they are in, `keys` is not used (state LOADING), so nothing else touches it."""
    def read() -> None:
        try:
            with engine.connect() as connection:
                keys.read_all(connection, project_id, everything)
        except Exception:  # the project's keys go unused this epoch; pages stay exact
            logger.warning("Reading project %s's ids failed.", project_id, exc_info=True)
            keys.usable = False
        finally:
            with keys.lock:
                keys.state = READY

    threading.Thread(target=read, name="tagdesk-id-keys", daemon=True).start()


def among(store: Held, connection: Connection, project_id: str, at: Header,
          everything: BitMap, keys: BitMap, skip: int, take: int,
          descending: bool = False) -> Narrowed | None:
    """Places `skip` … `skip + take` of `keys` (of the project's queries `everything`) in id
    order, narrowed by their buckets: the candidates are every key from the bucket of the
    first of those places to the last's; None when the keys cannot say."""
    if take <= 0 or skip + take > len(keys):
        return None
    project = loaded(store, connection, project_id, at, everything)
    if project is None:
        return None
    count = len(keys)
    # The places in ascending order.
    first, last = (count - skip - take, count - 1 - skip) if descending else \
        (skip, skip + take - 1)
    with project.lock:
        if not keys <= project.loaded:
            return None  # rows gone since the bitmaps were read: the database answers
        part, before = project.holding(keys, first, last)
        pks = np.frombuffer(part.to_array(), np.uint32)
        found = project.keys_of(pks)
    low, high = np.partition(found, [first - before, last - before])[
        [first - before, last - before]]
    inside = (found >= low) & (found <= high)
    ahead = count - before - int(np.count_nonzero(found <= high)) if descending else \
        before + int(np.count_nonzero(found < low))
    return Narrowed(BitMap(_as_array(pks[inside])), ahead)


def placing_blocks(count: int, ahead: int, behind: int, size: int) -> bool:
    """Whether places among `count` keys of a project of `size` queries, `ahead` of them
    before the first place and `behind` after the last, cost less found by counting
    blocks (from the nearer end) than by placing every key."""
    return placing_cost(count, ahead, behind, size) < count


def placing_cost(count: int, ahead: int, behind: int, size: int) -> float:
    """What finding the places costs, in keys placed."""
    blocks = max(1, size >> (BLOCK_BITS + 6))
    share = min(ahead, behind) / max(1, count)
    visits = share * (blocks >> GROUP_BITS) + min(share * blocks, 8) + 2
    visit = size * VISIT_SHARE + min(count, size >> 4) * VISIT_TIE_SHARE
    return min(count, visits * visit + 2 * count / blocks)


def _add(bitmaps: list[BitMap], numbers: np.ndarray, pks: np.ndarray) -> None:
    """Each pk added to the bitmap its number names (made when missing)."""
    if not len(numbers):
        return
    bitmaps += [BitMap() for _ in range(int(numbers.max()) + 1 - len(bitmaps))]
    order = np.argsort(numbers, kind="stable")
    for part in np.split(order, np.flatnonzero(np.diff(numbers[order])) + 1):
        bitmaps[int(numbers[part[0]])].update(_as_array(pks[part]))


def _holding(keys: BitMap, bitmaps: list[BitMap], start: int, skipped: int, within: int,
             first: int, last: int) -> tuple[int, int, int, int]:
    """Of bitmaps[start:], which hold `within` of the keys with `skipped` before them, the
    first and the last holding places `first` and `last` of the keys, the keys before the
    first, and those in the first … last: counted from the nearer end."""
    counts: list[int] = []
    if first - skipped <= skipped + within - 1 - last:
        seen = 0
        for bitmap in bitmaps[start:]:
            counts.append(keys.intersection_cardinality(bitmap))
            seen += counts[-1]
            if skipped + seen > last:
                break
    else:
        start, seen = len(bitmaps), 0
        while skipped + within - seen > first:
            start -= 1
            counts.append(keys.intersection_cardinality(bitmaps[start]))
            seen += counts[-1]
        counts.reverse()
        skipped += within - seen
    ends = np.cumsum(counts) + skipped
    low, high = np.searchsorted(ends, [first, last], side="right")
    before = int(ends[low] - counts[low])
    return start + int(low), start + int(high), before, int(ends[high]) - before


def _rows(connection: Connection, statement: str, *values):
    """The rows of one of the statements above, in parts, read by the driver itself (a
    million rows: SQLAlchemy's rows cost twice the driver's tuples) — on PostgreSQL by a
    cursor of the server's, in the caller's transaction."""
    driver = connection.connection.driver_connection
    if connection.dialect.name == "postgresql":
        cursor = driver.cursor(name="tagdesk_id_keys")
        cursor.execute(statement.format(*["%s"] * len(values)), values)
    else:
        cursor = driver.cursor()
        cursor.execute(statement.format(*["?"] * len(values)), values)
    try:
        while part := cursor.fetchmany(READ_AT_ONCE):
            yield part
    finally:
        cursor.close()


def _comparable(ids: list) -> list[bytes] | None:
    """The ids as bytes that compare as the database compares them, or None."""
    found = []
    for value in ids:
        text = str(value)
        if not text.isascii() or "\0" in text or len(text) > ID_BYTES:
            return None
        found.append(text.encode("ascii"))
    return found


def _pks(rows: list) -> np.ndarray:
    return np.fromiter((row[0] for row in rows), np.uint32, len(rows))


def _as_array(pks: np.ndarray) -> array.array:
    """As a BitMap takes many keys fastest."""
    return array.array("I", pks.astype(np.uint32).tobytes())
