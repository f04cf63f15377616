"""Exact counts of text filters, remembered for as long as they cannot change.

A filter with text (and languages, countries or tags) matches the same queries until the
project's queries themselves change, and then `projects.texts_version` changes with them
(triggers, migration 0008), or a link of one of its tags is added or removed, and then that
tag's `links_version` changes (0021). A count is remembered under the versions read in the
very statement that counted, so it is the count of exactly those versions' rows; a later
request asks for the versions first and finds the count only while they are still current.
Counting a common substring reads every match (~1 µs each on PostgreSQL, 20–40 ms for 32,000;
400 ms for 120,000 with codes and a tag at ten million queries), and paging, re-sorting,
selecting and bulk jobs ask for the same count again and again.

Each service process keeps its own; the versions live in the database, so processes never
disagree about what is current.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable

from cachetools import LRUCache

# Keys are (project id, versions, a 32-byte digest of the filter): 396 bytes an entry with its
# count (tracemalloc), 1.6 MiB when full.
DEFAULT_SIZE = 4096


class MatchCounts:
    def __init__(self, size: int = DEFAULT_SIZE):
        self._counts: LRUCache = LRUCache(maxsize=size)
        self._lock = threading.Lock()  # gunicorn threads share a worker's cache

    def get(self, key: Hashable) -> int | None:
        with self._lock:
            return self._counts.get(key)

    def put(self, key: Hashable, count: int) -> None:
        with self._lock:
            self._counts[key] = count


def init_app(app) -> None:
    app.extensions["tagdesk_match_counts"] = MatchCounts()
