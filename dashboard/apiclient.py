"""One queryapi.Client per signed-in session, and a short-lived cache of projects and tags.

The key lives in the server-side session store (Flask-Session). This process keeps, per
signed-in session id, a `Client` (so its connection pool is reused from page to page) and
what it recently read about projects and tags (so a page view costs one API call: the query
list). Cached lists expire after CACHE_SECONDS, and `invalidate()` drops them at once — the
bulk-editing work calls it after edits. Because several processes may serve one person, the
invalidation also bumps an epoch kept in the session store: every process compares it with the
epoch its cached lists were read under.

Whether the API offers creating tags (an extension of the reference; see docs/api.md) is
learned once per signed-in session, from the deployment's OpenAPI document, and kept with the
rest; edits do not change it. A lookup that fails (the service is busy or unreachable) counts
as "not offered" and is tried again after CACHE_SECONDS.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from flask import abort, current_app, g, session
from flask_login import current_user

from queryapi import ApiError, AuthError, Capabilities, Client, Mode, Project, Tag

from .timing import TimedClient

log = logging.getLogger(__name__)

SESSION_KEY = "api_key"
SESSION_NAME = "display_name"  # the name given at sign-in: who makes the changes
SESSION_EPOCH = "cache_epoch"
# An unknown project or tag id is looked up again, but not more often than this.
RECHECK_SECONDS = 5.0


@dataclass
class _Cached:
    value: object
    fetched_at: float
    epoch: int


@dataclass
class _Entry:
    client: TimedClient
    projects: _Cached | None = None
    tags: dict[str, _Cached] = field(default_factory=dict)
    # Other per-project reads kept like the tags (e.g. the project's progress): (what, project).
    reads: dict[tuple[str, str], _Cached] = field(default_factory=dict)
    # Languages and countries seen in this project's results: the pickers list them first.
    seen: dict[str, tuple[set[str], set[str]]] = field(default_factory=dict)
    # What the deployment offers beyond the reference (once per session), and when asking
    # last failed.
    capabilities: Capabilities | None = None
    capabilities_failed_at: float | None = None
    last_used: float = 0.0


class Registry:
    """Per-process: session id -> Client and cache. Bounded; idle entries are dropped."""

    def __init__(self, base_url: Callable[[], str], timeout: tuple[float, float],
                 max_sessions: int = 2000, idle_seconds: float = 4 * 3600):
        self._base_url = base_url
        self._timeout = timeout
        self._max = max_sessions
        self._idle = idle_seconds
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def _check_fork(self) -> None:
        # A forked worker must not share its parent's connections.
        if self._pid != os.getpid():
            self._entries = OrderedDict()
            self._lock = threading.Lock()
            self._pid = os.getpid()

    def entry(self, session_id: str, key: str, actor: str | None = None) -> _Entry:
        self._check_fork()
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(session_id)
            if entry is not None:
                self._entries.move_to_end(session_id)
                entry.last_used = now
                return entry
        client = TimedClient(Client(base_url=self._base_url(), api_key=key,
                                    mode=Mode.INTERACTIVE, timeout=self._timeout, actor=actor))
        with self._lock:
            entry = self._entries.setdefault(session_id, _Entry(client, last_used=now))
            if entry.client is not client:
                client.close()
            self._entries.move_to_end(session_id)
            self._evict(now)
        return entry

    def _evict(self, now: float) -> None:
        while self._entries:
            oldest_id, oldest = next(iter(self._entries.items()))
            if len(self._entries) <= self._max and now - oldest.last_used < self._idle:
                break
            del self._entries[oldest_id]
            oldest.client.close()

    def drop(self, session_id: str) -> None:
        self._check_fork()
        with self._lock:
            entry = self._entries.pop(session_id, None)
        if entry is not None:
            entry.client.close()

    def clear_cache(self, session_id: str, project_id: str | None = None) -> None:
        with self._lock:
            entry = self._entries.get(session_id)
            if entry is None:
                return
            if project_id is None:
                entry.projects = None
                entry.tags.clear()
                entry.reads.clear()
            else:
                entry.tags.pop(project_id, None)
                for key in [key for key in entry.reads if key[1] == project_id]:
                    del entry.reads[key]

    def close(self) -> None:
        with self._lock:
            entries, self._entries = list(self._entries.values()), OrderedDict()
        for entry in entries:
            entry.client.close()


# --- the signed-in session's view of it -----------------------------------------------------


def _registry() -> Registry:
    return current_app.extensions["tagdesk_registry"]


def _epoch() -> int:
    return int(session.get(SESSION_EPOCH, 0))


def _fresh(cached: _Cached | None, max_age: float | None = None) -> bool:
    if cached is None or cached.epoch != _epoch():
        return False
    limit = current_app.config["CACHE_SECONDS"] if max_age is None else max_age
    return time.monotonic() - cached.fetched_at < limit


def _entry() -> _Entry:
    key = session.get(SESSION_KEY)
    if not key or not current_user.is_authenticated:
        abort(current_app.login_manager.unauthorized())
    return _registry().entry(current_user.id, key, session.get(SESSION_NAME))


def client() -> Client:
    """The signed-in session's client (a queryapi.Client whose calls are timed)."""
    return _entry().client


def client_for_key(session_id: str, key: str, actor: str | None = None) -> Client:
    """At sign-in, before the session is marked signed in (`actor`: the name given)."""
    return _registry().entry(session_id, key, actor).client


def remember_projects(session_id: str, key: str, projects: list[Project]) -> None:
    """Sign-in already read the project list: keep it."""
    entry = _registry().entry(session_id, key)
    entry.projects = _Cached(list(projects), time.monotonic(), _epoch())


def projects(refresh: bool = False) -> list[Project]:
    entry = _entry()
    if refresh or not _fresh(entry.projects):
        entry.projects = _Cached(entry.client.all_projects(), time.monotonic(), _epoch())
    return entry.projects.value


def project_or_404(project_id: str) -> Project:
    """The project from the cached list; an id not in it is checked once more with a fresh
    list (a project created a moment ago), then it is a 404."""
    entry = _entry()
    found = _find(projects(), project_id)
    if found is None and not _fresh(entry.projects, RECHECK_SECONDS):
        found = _find(projects(refresh=True), project_id)
    if found is None:
        abort(404)
    return found


def _find(items: list[Project], project_id: str) -> Project | None:
    return next((item for item in items if item.id == project_id), None)


def tags(project_id: str, refresh: bool = False) -> list[Tag]:
    entry = _entry()
    cached = entry.tags.get(project_id)
    if refresh or not _fresh(cached):
        cached = _Cached(by_name(entry.client.iter_tags(project_id)), time.monotonic(),
                         _epoch())
        entry.tags[project_id] = cached
    return cached.value


def cached_read(what: str, project_id: str, read: Callable[[], object],
                refresh: bool = False):
    """`read()`'s answer for this project, kept as the tag list is (CACHE_SECONDS, dropped by
    `invalidate`), or read afresh when `refresh`."""
    entry = _entry()
    cached = entry.reads.get((what, project_id))
    if refresh or not (_fresh(cached) or _read_in_this_request(cached)):
        cached = _Cached(read(), time.monotonic(), _epoch())
        entry.reads[(what, project_id)] = cached
        g.setdefault("tagdesk_reads", []).append(cached)
    return cached.value


def _read_in_this_request(cached: _Cached | None) -> bool:
    """A read made earlier in the same request is not made again, however short the
    cache's life (two parts of one page ask for the same facets)."""
    return any(each is cached for each in g.get("tagdesk_reads", ()))


def tags_covering(project_id: str, tag_ids) -> list[Tag]:
    """The project's tags; read afresh if `tag_ids` holds an id the cached list lacks (a tag
    created since), at most every RECHECK_SECONDS."""
    known = tags(project_id)
    ids = {tag.id for tag in known}
    if any(tag_id not in ids for tag_id in tag_ids):
        cached = _entry().tags.get(project_id)
        if cached is not None and not _fresh(cached, RECHECK_SECONDS):
            known = tags(project_id, refresh=True)
    return known


def by_name(items) -> list[Tag]:
    return sorted(items, key=lambda tag: (tag.name.casefold(), tag.id))


def store_tags(project_id: str, fresh: list[Tag]) -> list[Tag]:
    """A page that read the whole tag list anyway refreshes the cache with it."""
    ordered = by_name(fresh)
    _entry().tags[project_id] = _Cached(ordered, time.monotonic(), _epoch())
    return ordered


def capabilities() -> Capabilities:
    """What the API offers beyond the reference's endpoints, learned once per session. When
    the service cannot say right now, nothing is offered, and it is asked again after
    CACHE_SECONDS (a rejected key still ends the session, as on every page)."""
    entry = _entry()
    if entry.capabilities is not None:
        return entry.capabilities
    failed_at = entry.capabilities_failed_at
    if failed_at is not None and time.monotonic() - failed_at < current_app.config[
            "CACHE_SECONDS"]:
        return Capabilities()
    try:
        entry.capabilities = entry.client.capabilities()
    except AuthError:
        raise
    except ApiError as error:
        log.info("could not learn what the API offers: %s", error)
        entry.capabilities_failed_at = time.monotonic()
        return Capabilities()
    return entry.capabilities


def offers_tag_creation() -> bool:
    return capabilities().create_tag


def tag_created(project_id: str, tag: Tag) -> list[Tag]:
    """A tag was just created: every process serving this session reads the project's tags
    afresh (the epoch), and this one at once; the new tag is in the list even should the
    read miss it."""
    invalidate(project_id)
    fresh = tags(project_id)
    if all(known.id != tag.id for known in fresh):
        fresh = store_tags(project_id, [*fresh, tag])
    return fresh


def seen_codes(project_id: str) -> tuple[set[str], set[str]]:
    """(languages, countries) seen so far in this project's results, by this session."""
    return _entry().seen.setdefault(project_id, (set(), set()))


def invalidate(project_id: str | None = None) -> None:
    """Forget cached projects and tags (of one project, or all) — call after edits. Every
    process serving this session notices through the epoch in the session store."""
    session[SESSION_EPOCH] = _epoch() + 1
    if current_user.is_authenticated:
        _registry().clear_cache(current_user.id, project_id)


def forget(session_id: str | None) -> None:
    """Sign-out or a rejected key: close the client, drop the cache."""
    if session_id:
        _registry().drop(session_id)
