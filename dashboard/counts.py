"""How many queries a project, or a tag, has — shown beside each, within the rate budget.

The reference API has no counts: each one is a `queries/list` call with `limit=1` (its
`totalRecords`). So a page that shows counts makes no extra call itself; it holds one lazy
loader (htmx, `hx-trigger="load"`), and each request of that loader reads **at most one** count
the session does not know yet, answers every count it knows, and — while some are still
missing — draws the loader again, to come back when the session may read the next one.

The session's reads are paced: up to COUNT_BURST (3) at once, then one every COUNT_INTERVAL
(1) seconds — a token bucket kept in the session, so a person's tabs share it. A project of 40
tags takes some 40 s to count, at a tenth of the organization's 10 requests a second, and
leaves the person's own calls (filters, edits) their room. Counts are kept in the session for
COUNT_SECONDS, so coming back to a page costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from flask import current_app, render_template, session

from queryapi import ApiError

from . import wording

SESSION_COUNTS = "query_counts"
SESSION_CREDIT = "query_count_credit"
COUNT_SECONDS = 300.0
# The loader's shortest wait between two requests (milliseconds).
AGAIN_MS = 250


def _credit(now: float) -> tuple[float, float, float]:
    """(reads the session may make now, the bucket's size, seconds per read): the bucket
    refills by one read every COUNT_INTERVAL seconds, up to COUNT_BURST."""
    interval = float(current_app.config["COUNT_INTERVAL"])
    burst = float(current_app.config["COUNT_BURST"])
    if interval <= 0:
        return burst, burst, 0.0
    credit, at = session.get(SESSION_CREDIT) or (burst, now)
    return min(burst, credit + max(0.0, now - at) / interval), burst, interval


def known_counts(wanted: list[tuple[str, Callable[[], object]]]) -> tuple[dict[str, object],
                                                                            float | None]:
    """({key: count} of the wanted keys known now, seconds until the loader should ask again,
    or None when nothing more is to come): reads at most one missing count (the first),
    through its `read`, when the session's pace allows. A failed read ends the loading (the
    page stays as it is, without the rest of the counts)."""
    now = time.time()
    stored = {key: value for key, value in (session.get(SESSION_COUNTS) or {}).items()
              if now - value[1] < COUNT_SECONDS}
    missing = [(key, read) for key, read in wanted if key not in stored]
    again: float | None = None
    if missing:
        credit, _burst, interval = _credit(now)
        if credit >= 1:
            key, read = missing[0]
            credit -= 1
            try:
                stored[key] = (read(), now)
                missing = missing[1:]
            except ApiError:
                missing = []
            session[SESSION_COUNTS] = stored
            if interval:
                session[SESSION_CREDIT] = (credit, now)
        if missing:
            again = max(AGAIN_MS / 1000, (1 - credit) * interval)
    return {key: stored[key][0] for key, _ in wanted if key in stored}, again


def counts_response(wanted: list[tuple[str, Callable[[], object]]], again_url: str,
                    describe: Callable[[object], object] = wording.count) -> str:
    """The counts known, each an out-of-band swap of the element `count-<key>` with what
    `describe` makes of it, and the loader again (with its wait) while some are missing."""
    found, again = known_counts(wanted)
    return render_template("partials/counts.html",
                           counts=[(key, describe(number)) for key, number in found.items()],
                           again_url=again_url if again is not None else None,
                           again_ms=round(again * 1000) if again is not None else 0)


def every_count(found: list[tuple[str, int]]) -> str:
    """Counts read all at once (one facets call): each fills its place, no loader follows."""
    return render_template("partials/counts.html",
                           counts=[(key, wording.count(number)) for key, number in found],
                           again_url=None, again_ms=0)
