"""How many queries a project, or a tag, has — shown beside each, within the rate budget.

The reference API has no counts: each one is a `queries/list` call with `limit=1` (its
`totalRecords`). So a page that shows counts makes no extra call itself; it holds one lazy
loader (htmx, `hx-trigger="load"`), and each request of that loader reads **at most one** count
the session does not know yet, answers every count it knows, and — while some are still
missing — draws the loader again a moment later. Counts are kept in the session for
COUNT_SECONDS, so coming back to a page costs nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from flask import render_template, session

from queryapi import ApiError

from . import wording

SESSION_COUNTS = "query_counts"
COUNT_SECONDS = 300.0


def known_counts(wanted: list[tuple[str, Callable[[], int]]]) -> tuple[dict[str, int], bool]:
    """({key: count} of the wanted keys known now, whether some are still missing): reads at
    most one missing count (the first), through its `read`. A failed read ends the loading
    (the page stays as it is, without the rest of the counts)."""
    now = time.time()
    stored = {key: value for key, value in (session.get(SESSION_COUNTS) or {}).items()
              if now - value[1] < COUNT_SECONDS}
    missing = [(key, read) for key, read in wanted if key not in stored]
    more = len(missing) > 1
    if missing:
        key, read = missing[0]
        try:
            stored[key] = (read(), now)
        except ApiError:
            more = False
        session[SESSION_COUNTS] = stored
    return {key: stored[key][0] for key, _ in wanted if key in stored}, more


def counts_response(wanted: list[tuple[str, Callable[[], int]]], again_url: str) -> str:
    """The counts known, each an out-of-band swap of the element `count-<key>`, and the
    loader again while some are missing."""
    found, more = known_counts(wanted)
    return render_template("partials/counts.html",
                           counts=[(key, wording.count(number)) for key, number in found.items()],
                           again_url=again_url if more else None)
