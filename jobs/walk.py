"""A walk over a filter's queries that writes deltas on fresh state, batch by batch.

The API has no "get queries by ids": fresh tags come from queries/list. A walk reads the
filter's queries sorted by id, a page at a time; that read *is* the fresh state, taken just
before the write. For each page it works out each query's new tag set, sends set-tags only for
the queries whose set changes, and stores the batch — so what was done so far is always known.

Writes can change which queries match the filter (removing a tag the filter asks for, or a
replacement): they drop out of it, and page offsets shift. The walk keeps

    k     how many processed queries still match the filter (they come first in id order),
    last  the largest id processed so far,

and reads next a page that starts *before* k, so that the page's first row must be one it has
processed already: the number of such rows (ids <= last) at the start of the page tells exactly
where the unprocessed ones begin, even if someone else changed the filter's membership
meanwhile. Should the page hold none, the walk has lost its place (others removed processed
queries from the filter) and finds it again from the first page. The page size varies a little
(between half and all of the batch size) to keep a page starting before k and most of it new.

Stable edits. When the edit's own writes cannot change the filter's membership (adding tags,
removing tags the filter does not select on), only someone else can shift the offsets. Then the
walk reads full pages starting exactly at k (no overlap row, so 10,000 queries take 10 reads,
not 11) and checks each page's totalRecords against the previous read: a change means others
moved queries in or out of the filter, and the page is read again the verifiable way above.
What the total cannot see is another writer removing a processed query and adding another
between two reads (docs/decisions.md).

Which written queries still match is the service's answer, not the walk's: after a batch
that may move queries, the walk counts only the queries it did not write, and its next read,
which starts before them, shows where it is (docs/decisions.md).

Writes. Where the service edits tags in place (tags-edit), each batch sends only what it
changes, so nothing another writer committed after the page was read is lost, and the walk
takes no lease: in-page edits, other jobs and the service's own writers go on beside it.
Against a service with only set-tags, a batch sends whole tag sets: the walk holds the
project's lease across the walk and hands it over between batches (an edit made through
Tagdesk waits for it, and the walk reads the verifiable way after handing it over).

Interruptions. A batch's intended changes are stored (pending) before its write and confirmed
after. A walk resumed after an interruption re-reads the same place: a query whose fresh tags
already show its pending change was written before the interruption and is counted as this
walk's change, not written again; rows of the pending batch that no longer match the filter
(the write removed them from it) are counted as done. Deltas on fresh state are idempotent, so
re-running a batch never applies anything twice, and the stored changes say exactly what was
done.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from queryapi import ApiError, Client, Query, QueryFilters

from .deltas import Change, Delta
from .edit import Edit
from .rewrite import Rewrite, lease_needed, rewrite, write
from .store import Store

log = logging.getLogger(__name__)

ID_ORDER = [("id", "ASC")]
MAX_BATCH = 1000  # the service's largest page and set-tags batch

WRITE, SAME, SKIP = "write", "same", "skip"
CHECK_EVERY = 0.25  # seconds between looks for a Cancel or for an edit waiting for the lease


class WalkError(ApiError):
    """The service answered in a way a walk cannot work with (a sentence for the person)."""


def position(k: int, size: int) -> tuple[int, int, bool]:
    """(page, limit, verifiable) of the next read when `k` processed queries still match.

    A page starting before k lets the walk check its place; among page sizes between half and
    all of `size`, the one giving the most new rows is used. `verifiable` is False only in the
    corner case where no such size exists (tiny batch sizes): then the page starts at k."""
    if k <= 0:
        return 1, size, False
    best: tuple[int, int] | None = None  # (new rows, limit)
    for limit in range(size, max(size // 2, 1) - 1, -1):
        remainder = k % limit
        if remainder and (best is None or limit - remainder > best[0]):
            best = (limit - remainder, limit)
            if best[0] >= size - 1:
                break
    if best is None:
        return k // size + 1, size, False
    limit = best[1]
    return k // limit + 1, limit, True


@dataclass
class Counters:
    processed: int = 0
    changed: int = 0
    untouched: int = 0
    k: int = 0
    last: str | None = None
    total: int = 0
    batches: int = 0

    @classmethod
    def of(cls, edit: Edit) -> Counters:
        return cls(edit.processed, edit.changed, edit.untouched, edit.cursor_k,
                   edit.cursor_last, edit.total, edit.batches)

    def stored(self) -> dict:
        return {"processed": self.processed, "changed": self.changed,
                "untouched": self.untouched, "cursor_k": self.k, "cursor_last": self.last,
                "total": self.total}


# A plan says, for each fresh query of a page, what to do: (WRITE, new tags) / (SAME, None): it
# is already as the edit wants it / (SKIP, None): not this edit's business (an undo's covering
# filter holds queries the edit never changed).
Plan = Callable[[list[Query]], list[tuple[str, tuple[int, ...] | None]]]


def stable_membership(filters: QueryFilters, delta: Delta,
                      named: frozenset[int] | None) -> bool:
    """Can the edit's writes not change which queries match the filter? Then reads and writes
    can overlap (the next page is where it would have been anyway). `named`: the ids of the
    tags the filter names (QueryFilters.tags_named; None: it asks about every tag). Only a
    filter on tags can change by tagging, and only by a tag it names."""
    if not filters.reads_tags:
        return True
    return delta.replace is None and named is not None and not (delta.tag_ids & named)


@dataclass
class Step:
    """One page read and planned: what to record and write, and where the walk is after it."""

    outcome: str                      # "write", "more" (nothing new), "moved", "lost", "end"
    batch: int = 0
    records: list[Change] | None = None
    writes: Rewrite | None = None           # the rows whose tags this batch changes
    stored: dict | None = None        # the counters once this batch is written
    last_page: bool = False
    pending: dict[str, Change] | None = None  # an interrupted batch's rows not met yet


class Walk:
    """Runs the walk. Where writes are whole tag sets (`rewrite.lease_needed`), the project's
    lease is held across the walk and handed over between batches to any edit waiting for it
    (an in-page edit waits at most one batch); else no lease is taken.

    `pipelined` (only when the writes cannot change the filter's membership): the read of the
    next page overlaps the write of this one — one write in flight at a time, written and
    recorded in order — which brings a job close to the rate limit's floor when the service
    takes longer per call than the limit allows between calls. Safe with the rate limits:
    queryapi's pacer reserves a request's place before sending it, so two calls in flight
    cannot overshoot a window (BULK_PIPELINE, on by default)."""

    def __init__(self, client: Client, store: Store, edit: Edit, filters: QueryFilters,
                 plan: Plan, *,
                 batch_size: int = MAX_BATCH, holder: str | None = None,
                 lock_wait: float | None = None, stable: bool = False, pipelined: bool = False,
                 on_batch: Callable[[], None] | None = None,
                 stop: threading.Event | None = None, yield_wait: float = 10.0):
        self.client = client
        self.store = store
        self.edit = edit
        self.project_id = edit.project_id
        self.filters = filters
        self.plan = plan
        self.size = max(1, min(batch_size, MAX_BATCH))
        self.holder = holder or edit.id
        self.lock_wait = lock_wait
        self.stable = stable
        self.pipelined = pipelined
        self._filter_total: int | None = None  # totalRecords of the last read (stable edits)
        self._asked: dict[str, float] = {}
        self._cancel_seen = self._waiting = False  # as the writer last found them
        self.on_batch = on_batch
        self.stop = stop
        self.yield_wait = yield_wait
        self._writer: ThreadPoolExecutor | None = None
        self._in_flight: Future | None = None
        self._leased = lease_needed(client)

    def run(self) -> str:
        """Walk to the end, or to a cancellation: "done" or "cancelled"."""
        counters = Counters.of(self.edit)
        pending = {}
        if self.edit.pending_batch:
            pending = self.store.pending_changes(self.edit.id, self.edit.pending_batch)
        if self.pipelined:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="tagdesk-write")
        if self._leased:
            self.store.lock(self.project_id, self.holder, self.lock_wait)
        try:
            while True:
                if self._cancelled():
                    self._drain()
                    return "cancelled"
                if self._others_waiting():
                    self._let_others_in()
                step = self._read_and_plan(counters, pending)
                if step.outcome == "moved":
                    continue  # others changed the filter's membership: read the verifiable way
                if step.outcome == "lost":
                    log.info("edit %s: lost its place; finding it again from the start",
                             self.edit.id)
                    self._drain()
                    counters.k = 0
                    continue
                pending = step.pending or {}
                if step.outcome == "write":
                    if self._in_flight is not None:
                        self._drain()  # batches are written and recorded in order
                        if self._cancelled():  # the page read meanwhile is left alone
                            return "cancelled"
                    if self._writer is not None:
                        self._in_flight = self._writer.submit(self._write, step)
                    else:
                        self._write(step)
                    if self.on_batch is not None:
                        self.on_batch()
                if step.last_page or step.outcome == "end":
                    self._drain()
                    return "done"
        finally:
            try:
                self._drain()
            finally:
                if self._leased:
                    self.store.unlock(self.project_id, self.holder)
                if self._writer is not None:
                    self._writer.shutdown(wait=True)

    # --- steps -----------------------------------------------------------------------------

    # Each question to the jobs database takes a few milliseconds. The writer asks both after
    # each batch it records (off the path between a page's read and its write); the walk
    # itself asks at most every CHECK_EVERY seconds, for the time before the first write.

    def _cancelled(self) -> bool:
        if (self.stop and self.stop.is_set()) or self._cancel_seen:
            return True
        return self._due("cancel") and self.store.cancel_requested(self.edit.id)

    def _others_waiting(self) -> bool:
        if not self._leased:
            return False
        return self._waiting or (self._due("waiters")
                                 and bool(self.store.waiters(self.project_id)))

    def _due(self, what: str) -> bool:
        now = time.monotonic()
        if now - self._asked.get(what, float("-inf")) < CHECK_EVERY:
            return False
        self._asked[what] = now
        return True

    def _drain(self) -> None:
        """Wait for the write in flight (and its record); its failure is the walk's."""
        future, self._in_flight = self._in_flight, None
        if future is not None:
            future.result()

    def _let_others_in(self) -> None:
        """Someone waits for the project's lease (an in-page edit): finish the write in
        flight, hand the lease over, and take it back once they are done."""
        self._drain()
        self._waiting = False
        self._filter_total = None  # their edit may move queries: read the verifiable way next
        self.store.unlock(self.project_id, self.holder)
        deadline = time.monotonic() + self.yield_wait
        while self.store.waiters(self.project_id) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.store.lock(self.project_id, self.holder, self.lock_wait)

    def _write(self, step: Step) -> None:
        # Recorded as pending before the write, in the writer's thread: off the path of the
        # next page's read.
        self.store.begin_batch(self.edit.id, step.batch, step.records)
        if step.writes is not None:
            write(self.client, self.project_id, step.writes)
        stats = self.client.stats
        self.store.commit_batch(self.edit.id, step.batch, {
            **step.stored,
            "requests": self.edit.requests + stats.requests,
            "rate_limited": self.edit.rate_limited + stats.rate_limited,
        })
        self._cancel_seen = self.store.cancel_requested(self.edit.id)
        self._waiting = self._leased and bool(self.store.waiters(self.project_id))

    def _trusted_position(self, k: int) -> tuple[int, int] | None:
        """(page, limit) of a page starting exactly at k, for a stable edit that may read
        without an overlap row."""
        if not (self.stable and self._filter_total is not None and k):
            return None
        for limit in range(self.size, max(self.size // 2, 1) - 1, -1):
            if k % limit == 0:
                return k // limit + 1, limit
        return None

    def _read_and_plan(self, counters: Counters, pending: dict[str, Change]) -> Step:
        trusted = self._trusted_position(counters.k)
        if trusted is not None:
            (page, limit), verifiable = trusted, False
        else:
            page, limit, verifiable = position(counters.k, self.size)
        result = self.client.list_queries(self.project_id, self.filters, ID_ORDER,
                                          page=page, limit=limit)
        total_before, self._filter_total = self._filter_total, result.page.total_records
        if trusted is not None and result.page.total_records != total_before:
            self._filter_total = None  # offsets may have shifted under this page
            return Step("moved")
        rows = result.results
        used = result.page.limit if result.page.limit > 0 else limit
        offset = (page - 1) * used
        ids = [row.id for row in rows]
        if any(first >= second for first, second in zip(ids, ids[1:], strict=False)):
            raise WalkError("The service did not list the queries in id order, so the edit "
                            "cannot keep its place. Nothing more was changed.")
        seen = 0
        if counters.last is not None:
            while seen < len(rows) and rows[seen].id <= counters.last:
                seen += 1
        if seen == 0 and verifiable and offset > 0:
            return Step("lost")  # fewer processed queries match than we counted
        last_page = len(rows) < used or result.page.next_page is None
        counters.k = offset + seen
        counters.total = counters.processed + max(result.page.total_records - counters.k, 0)
        fresh = rows[seen:]
        if not fresh and not pending:
            if last_page:
                return Step("end")
            counters.k = offset + len(rows)
            return Step("more")

        planned = list(zip(fresh, self.plan(list(fresh)), strict=True))
        to_write = {row.id: new for row, (action, new) in planned if action == WRITE}
        step = rewrite(fresh, lambda row: to_write.get(row.id))
        writes = step
        records: list[Change] = list(step.changes)
        stays = 0
        for row, (action, _new) in planned:
            earlier = pending.pop(row.id, None)
            if row.id in step.written:
                pass
            elif earlier is not None and (earlier.added or earlier.removed) \
                    and earlier.looks_applied(row.tags):
                records.append(earlier)  # written just before an interruption
            elif action != SKIP:
                counters.untouched += 1
            if self.stable or row.id not in step.written:
                stays += 1  # its tags are as read, or written in a way it stays in
        # A pending batch's rows that are gone from the filter were written (that is what
        # moved them out); those further on will be met again.
        boundary = fresh[-1].id if fresh else counters.last
        left_over = [pending.pop(query_id) for query_id in list(pending)
                     if last_page or (boundary is not None and query_id <= boundary)]
        records += left_over
        counters.processed += len(fresh) + len(left_over)
        counters.changed += len(records)
        counters.k += stays
        if fresh:
            counters.last = fresh[-1].id
        counters.batches += 1
        counters.total = max(counters.total, counters.processed)
        return Step("write", counters.batches, records, writes, counters.stored(), last_page,
                    pending)
