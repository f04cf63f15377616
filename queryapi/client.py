"""The client of the Query & Tag API: one per signed-in dashboard session, or per bulk job.

Why retrying is safe. Both modes may send a request again after a failure whose outcome is
unknown (a read timeout, a dropped connection, a 503 from a proxy in front of the service), so
every call this client makes must give the same result when repeated:

- The three list calls (projects, queries, tags) only read. Repeating one changes nothing.
  (Two of them are POSTs only because their filters travel in a JSON body.)
- set-tags *replaces* each query's tag set with the one given; it does not add to it. Applying
  the same items twice leaves the same tags as applying them once (the service does not even
  touch `updatedAt` the second time, since nothing changed). The same holds for a long list
  split into batches: if batch 3 of 5 fails, calling `set_tags` again with the whole list
  re-applies batches 1 and 2 to the same effect and goes on.

- tags-edit (an extension) adds and removes tags: adding a tag a query has, or removing one
  it lacks, changes nothing, so the same items sent twice leave the same tags.

This is why urllib3's Retry is configured to retry POST and PATCH as well as GET (retries.py).
A full tag set worked out from a read overwrites whatever another writer committed after the
read; where the service offers tags-edit (`capabilities().tag_edits`), `edit_tags` sends
only what changes.

Three calls are the exception: `create_tag`, `create_view` and `create_rule`, extensions of
the reference (POST /api/tags/create, /api/views/create, /api/rules/create) that some
deployments offer — `capabilities()` says whether this one does. Creating is not safe to
repeat (the second attempt is a 409), so it is sent again only when it certainly did nothing:
its connection could not be opened, or the answer was 429. The other extensions are safe to
repeat: facets and a rule's preview only read, an update or a pause gives the same values
again, and a delete leaves the view or rule deleted (a repeat that arrives after the first
did its work answers NotFound).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from .errors import ApiError, InvalidRequest, RateLimited, TransportError, Unavailable
from .keys import ApiKey
from .records import (
    Capabilities,
    CommonWords,
    Facets,
    ImportRecord,
    Project,
    ProjectPage,
    Query,
    QueryFilters,
    QueryPage,
    Rule,
    RuleApplied,
    RulePreview,
    RuleUnapplied,
    SavedView,
    SuggestionsAccepted,
    SuggestionStatus,
    Tag,
    TagAssignment,
    TagEdit,
    TagMerge,
    TagPage,
    TagUnmerge,
    read_capabilities,
    read_common_words,
    read_facets,
    read_imports,
    read_project_page,
    read_queries,
    read_query_page,
    read_query_versions,
    read_rejected,
    read_rule,
    read_rule_applied,
    read_rule_preview,
    read_rule_unapplied,
    read_rules,
    read_saved_view,
    read_saved_views,
    read_suggestion_status,
    read_suggestions_accepted,
    read_tag,
    read_tag_merge,
    read_tag_page,
    read_tag_unmerge,
)
from .retries import Mode
from .stats import ClientStats
from .transport import Transport, encode

# The largest page and set-tags batch the service accepts, and its body limit (1 MiB) with
# room to spare for the envelope.
MAX_PAGE_SIZE = 1000
MAX_BATCH = 1000
MAX_BODY_BYTES = 1_000_000
# Walking every page sorts by id: a record edited during the walk keeps its place, so none is
# skipped or seen twice (the default order, updatedAt DESC, would move it to the front).
WALK_ORDER = [("id", "ASC")]

PROJECTS = "/api/projects/list"
QUERIES = "/api/queries/list"
SET_TAGS = "/api/queries/many/tags-only"
EDIT_TAGS = "/api/queries/many/tags-edit"
TAGS = "/api/tags/list"
OPENAPI = "/api/openapi.json"
# Extensions: see capabilities().
CREATE_TAG = "/api/tags/create"
UPDATE_TAG = "/api/tags/update"
MERGE_TAG = "/api/tags/merge"
UNMERGE_TAG = "/api/tags/unmerge"
FACETS = "/api/queries/facets"
WORDS = "/api/queries/words"
QUERY_VERSIONS = "/api/queries/versions"
IMPORTS = "/api/imports/list"
VIEWS = "/api/views/list"
CREATE_VIEW = "/api/views/create"
UPDATE_VIEW = "/api/views/update"
DELETE_VIEW = "/api/views/delete"
RULES = "/api/rules/list"
PREVIEW_RULE = "/api/rules/preview"
CREATE_RULE = "/api/rules/create"
UPDATE_RULE = "/api/rules/update"
PAUSE_RULE = "/api/rules/pause"
DELETE_RULE = "/api/rules/delete"
APPLY_RULE = "/api/rules/apply"
UNAPPLY_RULE = "/api/rules/unapply"
RESTORE_RULE = "/api/rules/restore"
SUGGESTION_STATUS = "/api/suggestions/status"
REFRESH_SUGGESTIONS = "/api/suggestions/refresh"
ACCEPT_SUGGESTIONS = "/api/suggestions/accept"
REJECT_SUGGESTIONS = "/api/suggestions/reject"
ACTOR_HEADER = "X-Tagdesk-Actor"
# Each field of Capabilities: the operation that offers it, marked in the OpenAPI document.
# tag_logic: facets came with the filter's tag fields (docs/api.md, more filter fields).
EXTENSIONS = {
    "create_tag": ("POST", CREATE_TAG),
    "tag_logic": ("POST", FACETS),
    "saved_views": ("POST", VIEWS),
    "rules": ("POST", RULES),
    "rule_apply": ("POST", APPLY_RULE),
    "tag_editing": ("POST", UPDATE_TAG),
    "tag_merging": ("POST", MERGE_TAG),
    "tag_edits": ("PATCH", EDIT_TAGS),
    "query_versions": ("POST", QUERY_VERSIONS),
    "imports": ("POST", IMPORTS),
    "common_words": ("POST", WORDS),
    "suggestions": ("POST", SUGGESTION_STATUS),
}
# The request schema whose extension fields are Capabilities.filter_fields.
FILTER_SCHEMA = "QueryListRequest"

Listing = TypeVar("Listing", ProjectPage, QueryPage, TagPage)
Answer = TypeVar("Answer")


class Client:
    """HTTP client of the Query & Tag API for one organization key.

    `mode`: Mode.INTERACTIVE (default) waits at most about `interactive_budget` seconds per
    call and otherwise raises RateLimited/Unavailable with the wait; Mode.BACKGROUND paces
    itself to the rate limit and retries (429 after Retry-After; 503 after `unavailable_wait`
    seconds, doubling; connection and read errors with backoff), `retries` times each.
    `timeout`: (connect, read) seconds, on every request.
    """

    def __init__(self, base_url: str, api_key: str, mode: Mode | str = Mode.INTERACTIVE,
                 timeout: float | tuple[float, float] = (3.05, 30), *,
                 unavailable_wait: float = 30.0, retries: int = 6, backoff_factor: float = 0.5,
                 interactive_budget: float = 2.0, actor: str | None = None):
        parts = urlsplit(str(base_url))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"The base URL must start with http:// or https://: {base_url!r}")
        self._base_url = str(base_url).rstrip("/")
        self._key = api_key if isinstance(api_key, ApiKey) else ApiKey(api_key)
        self._mode = Mode(mode)
        self._timeout = (timeout, timeout) if isinstance(timeout, int | float) else tuple(timeout)
        self._options = dict(unavailable_wait=unavailable_wait, retries=retries,
                             backoff_factor=backoff_factor,
                             interactive_budget=interactive_budget)
        self._transport = Transport(self._base_url, self._key, self._mode, self._timeout,
                                    **self._options)
        self._capabilities: Capabilities | None = None
        self._capabilities_lock = threading.Lock()
        # Who makes the changes this client sends (an extension: the service records it with
        # the tags they add and in the organization's activity log), on every call that may
        # change something; percent-encoded, as headers carry Latin-1 only.
        self._actor = {ACTOR_HEADER: quote(actor.strip()[:100], safe="")} \
            if actor and actor.strip() else {}

    # -- the object itself -----------------------------------------------------------------

    def __repr__(self) -> str:
        return (f"Client(base_url={self._base_url!r}, key={self._key.masked!r}, "
                f"mode={self._mode})")

    @property
    def masked_key(self) -> str:
        return self._key.masked

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def mode(self) -> Mode:
        return self._mode

    @property
    def stats(self) -> ClientStats:
        return self._transport.stats.snapshot()

    def with_mode(self, mode: Mode | str) -> Client:
        """A new client for the same service and key, behaving as `mode` says."""
        client = Client(self._base_url, self._key, Mode(mode), self._timeout, **self._options)
        client._actor = self._actor
        return client

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _post(self, path: str, project_id: str, body: Any, read: Callable[[Any, str], Answer],
              *, idempotent: bool = True) -> Answer:
        """POST `body` to one of the project's calls (`project_id` as _project checked it);
        the answer as `read` makes it, naming the call ("POST <path>") in what it says."""
        payload = self._transport.call("POST", path, project_id=project_id, body=body,
                                       idempotent=idempotent, extra_headers=self._actor)
        return read(payload, f"POST {path}")

    # -- projects --------------------------------------------------------------------------

    def list_projects(self, page: int = 1, limit: int = 100) -> ProjectPage:
        payload = self._transport.call("GET", PROJECTS, params={"page": page, "limit": limit})
        return read_project_page(payload, f"GET {PROJECTS}", limit)

    def all_projects(self) -> list[Project]:
        return list(self._walk(lambda page, limit: self.list_projects(page, limit)))

    # -- queries ---------------------------------------------------------------------------

    def list_queries(self, project_id: str, filters: QueryFilters | None = None,
                     sort: list[tuple[str, str]] | None = None, page: int = 1,
                     limit: int = 50, include: Iterable[str] = ()) -> QueryPage:
        """A page of the matching queries. `include=["metrics"]` (an extension:
        `capabilities().numbers`) gives each its known numbers (`Query.metrics`)."""
        body = {**(filters.to_body() if filters else {}), "page": page, "limit": limit}
        if sort:
            body["sort"] = sort_body(sort)
        if include:
            body["include"] = _names(include, "include")
        return self._post(QUERIES, _project(project_id), body, read_query_page)

    def iter_queries(self, project_id: str, filters: QueryFilters | None = None,
                     sort: list[tuple[str, str]] | None = None,
                     include: Iterable[str] = ()) -> Iterator[Query]:
        """Every matching query, fetched a page at a time (the largest page the service
        allows) and yielded as it arrives. Sorted by id unless `sort` says otherwise."""
        include = tuple(include)
        return self._walk(lambda page, limit: self.list_queries(
            project_id, filters, sort or WALK_ORDER, page, limit, include))

    def set_tags(self, project_id: str, items: Iterable[TagAssignment]) -> list[Query]:
        """Give each matched query exactly the tags of its item; the updated records, in order.

        Long lists go in several calls of at most 1000 items and under the 1 MiB body limit.
        Each call is all-or-nothing on the service; if one fails, the earlier ones stay
        applied, and calling again with the same items is safe (see the module docstring).
        """
        return self._many(SET_TAGS, project_id, items, TagAssignment)

    def edit_tags(self, project_id: str, items: Iterable[TagEdit]) -> list[Query]:
        """Each matched query gains its item's `add` and loses its `remove`, its other tags
        kept (PATCH /api/queries/many/tags-edit, an extension: `capabilities().tag_edits`;
        a deployment without it answers NotFound). Batched and safe to repeat as set_tags."""
        return self._many(EDIT_TAGS, project_id, items, TagEdit)

    def _many(self, path: str, project_id: str, items: Iterable, kind: type) -> list[Query]:
        """PATCH `items` (each a `kind`) to `path` in batches; the updated records, in order."""
        items = list(items)
        _check_items(items, kind)
        project_id = _project(project_id)
        updated: list[Query] = []
        for batch in batches(items):
            payload = self._transport.call(
                "PATCH", path, project_id=project_id,
                body={"queries": [item.to_body() for item in batch]},
                extra_headers=self._actor)
            records = read_queries(payload, f"PATCH {path}")
            if len(records) != len(batch):
                raise ApiError(f"The service answered {len(batch)} items with "
                               f"{len(records)} records; it should be one for each.")
            updated.extend(records)
        return updated

    # -- tags ------------------------------------------------------------------------------

    def list_tags(self, project_id: str, name: str | None = None,
                  sort: list[tuple[str, str]] | None = None, page: int = 1,
                  limit: int = MAX_PAGE_SIZE) -> TagPage:
        body: dict[str, Any] = {"page": page, "limit": limit}
        if name:
            body["name"] = name
        if sort:
            body["sort"] = sort_body(sort)
        return self._post(TAGS, _project(project_id), body, read_tag_page)

    def iter_tags(self, project_id: str) -> Iterator[Tag]:
        return self._walk(lambda page, limit: self.list_tags(
            project_id, sort=WALK_ORDER, page=page, limit=limit))

    def create_tag(self, project_id: str, name: str, color: str | None = None) -> Tag:
        """A new tag in the project (POST /api/tags/create, an extension of the reference:
        ask `capabilities()` first). Without `color` the service picks one. A name the project
        has already, in any case, is a Conflict; a deployment without the extension answers
        NotFound. Not safe to repeat, so not repeated after an unknown outcome (see the
        module docstring): after a TransportError, list the tags to see whether it was made.
        """
        if not isinstance(name, str):
            raise InvalidRequest("A tag's name is text.")
        if color is not None and not isinstance(color, str):
            raise InvalidRequest("A tag's colour is text, such as #1f77b4.")
        body: dict[str, Any] = {"name": name}
        if color is not None:
            body["color"] = color
        return self._post(CREATE_TAG, _project(project_id), body, read_tag, idempotent=False)

    def update_tag(self, project_id: str, tag_id: int, *, name: str | None = None,
                   color: str | None = None, description: str | None = None,
                   clear_description: bool = False) -> Tag:
        """The tag with each field given changed (POST /api/tags/update, an extension:
        `capabilities().tag_editing`); fields left None are kept, `clear_description` takes
        the description away. A name another tag of the project has (as names compare) is a
        Conflict; a tag that is not the project's is NotFound. Safe to repeat."""
        body: dict[str, Any] = {"id": _tag_id(tag_id)}
        for field, value, what in (("name", name, "name"), ("color", color, "colour"),
                                   ("description", description, "description")):
            if value is not None:
                if not isinstance(value, str):
                    raise InvalidRequest(f"A tag's {what} is text.")
                body[field] = value
        if clear_description:
            body["description"] = None
        return self._post(UPDATE_TAG, _project(project_id), body, read_tag)

    def merge_tag(self, project_id: str, tag_id: int, into_id: int) -> TagMerge:
        """Merge the tag into another (POST /api/tags/merge, an extension:
        `capabilities().tag_merging`): its queries carry the other, it is gone, rules name the
        other. The answer's operation undoes it (unmerge_tag). Not sent again after an
        unknown outcome (a second merge of a tag that is gone is NotFound): list the tags to
        see whether it went."""
        body = {"id": _tag_id(tag_id), "intoId": _tag_id(into_id)}
        return self._post(MERGE_TAG, _project(project_id), body, read_tag_merge, idempotent=False)

    def unmerge_tag(self, project_id: str, operation: str) -> TagUnmerge:
        """Undo a merge: the tag back under its id with its links as they were. A merge
        undone already (or a week old, or another project's) is NotFound; a tag of the
        merged tag's name made since is a Conflict."""
        if not isinstance(operation, str):
            raise InvalidRequest("A merge's operation is text.")
        return self._post(UNMERGE_TAG, _project(project_id), {"operation": operation},
                          read_tag_unmerge, idempotent=False)

    # -- extensions: facets and saved views ------------------------------------------------

    def facets(self, project_id: str, filters: QueryFilters | None = None,
               sums: Iterable[str] = ()) -> Facets:
        """The counts of a filter, and beside each language, country and tag (POST
        /api/queries/facets, an extension: `capabilities().tag_logic`). `sums` names numbers
        (`capabilities().numbers`) whose figures come with each count (Facets.sums, …)."""
        body = filters.to_body() if filters else {}
        if sums:
            body["sums"] = _names(sums, "sums")
        return self._post(FACETS, _project(project_id), body, read_facets)

    def common_words(self, project_id: str, filters: QueryFilters | None = None,
                     limit: int = 20) -> CommonWords:
        """The `limit` words and the `limit` two-word phrases most of the filter's queries
        contain, each with its exact count (POST /api/queries/words, an extension:
        `capabilities().common_words`)."""
        body = filters.to_body() if filters else {}
        body["limit"] = limit
        return self._post(WORDS, _project(project_id), body, read_common_words)

    def query_versions(self, project_id: str, ids: Iterable[str]) -> dict[str, datetime]:
        """When each query of `ids` (at most 1000) last changed, by id; one the project no
        longer has is left out (POST /api/queries/versions, an extension:
        `capabilities().query_versions`)."""
        ids = list(ids)
        if len(ids) > MAX_PAGE_SIZE or not all(isinstance(i, str) for i in ids):
            raise InvalidRequest("Query versions take at most 1000 query ids, as text.")
        return self._post(QUERY_VERSIONS, _project(project_id), {"ids": ids},
                          read_query_versions)

    def list_imports(self, project_id: str, limit: int = 20) -> tuple[ImportRecord, ...]:
        """The project's imports made in the settings, newest first, at most `limit` (1–100;
        an extension: `capabilities().imports`)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise InvalidRequest("An import list's limit is a whole number from 1 to 100.")
        return self._post(IMPORTS, _project(project_id), {"limit": limit}, read_imports)

    def list_views(self, project_id: str) -> tuple[SavedView, ...]:
        """Every saved view of the project, by name, each with its live count (an extension:
        `capabilities().saved_views`)."""
        return self._post(VIEWS, _project(project_id), {}, read_saved_views)

    def create_view(self, project_id: str, name: str, filters: QueryFilters,
                    sort: list[tuple[str, str]] | None = None,
                    columns: Iterable[str] | None = None) -> SavedView:
        """A new saved view. A name the project has already (compared as tag names are) or a
        201st view is a Conflict. Not safe to repeat, so not repeated after an unknown outcome
        (as create_tag): after a TransportError, list the views to see whether it was made.
        `columns`: the numbers it shows (where the deployment keeps numbers; None: the
        default)."""
        if not isinstance(name, str):
            raise InvalidRequest("A saved view's name is text.")
        if not isinstance(filters, QueryFilters):
            raise InvalidRequest("A saved view's filters are QueryFilters.")
        body: dict[str, Any] = {"name": name, "filters": filters.to_body()}
        if sort:
            body["sort"] = sort_body(sort)
        if columns is not None:
            body["columns"] = list(dict.fromkeys(columns))
        return self._post(CREATE_VIEW, _project(project_id), body, read_saved_view,
                          idempotent=False)

    def rename_view(self, project_id: str, view_id: int, name: str) -> SavedView:
        """The view, renamed. A name another view of the project has is a Conflict; a view
        that is not the project's is NotFound."""
        if not isinstance(name, str):
            raise InvalidRequest("A saved view's name is text.")
        return self._post(UPDATE_VIEW, _project(project_id),
                          {"id": _view_id(view_id), "name": name}, read_saved_view)

    def delete_view(self, project_id: str, view_id: int) -> None:
        """Delete the view; NotFound when the project has no such view (also when a lost
        answer's first attempt deleted it)."""
        self._transport.call("POST", DELETE_VIEW, project_id=_project(project_id),
                             body={"id": _view_id(view_id)}, extra_headers=self._actor)

    # -- extensions: rules ----------------------------------------------------------------

    def list_rules(self, project_id: str) -> tuple[Rule, ...]:
        """Every rule of the project, by name, each with its live counts (an extension:
        `capabilities().rules`)."""
        return self._post(RULES, _project(project_id), {}, read_rules)

    def preview_rule(self, project_id: str, condition: QueryFilters,
                     tag_ids: Iterable[int]) -> RulePreview:
        """How many queries a rule of `condition` and `tag_ids` would match, how many of those
        lack one of the tags, and up to 20 of them. Only reads."""
        body = {"condition": _condition(condition), "tagIds": _tag_ids(tag_ids)}
        return self._post(PREVIEW_RULE, _project(project_id), body, read_rule_preview)

    def create_rule(self, project_id: str, name: str, condition: QueryFilters,
                    tag_ids: Iterable[int]) -> Rule:
        """A new rule: the queries that enter the project matching `condition` get `tag_ids`.
        The service only keeps it; tagging the queries that match it now is the caller's
        (queries/list and set-tags). A name the project has already (compared as tag names
        are) or a 101st rule is a Conflict; a tag that is not the project's is a BadRequest.
        Not safe to repeat, so not repeated after an unknown outcome (as create_tag): after a
        TransportError, list the rules to see whether it was made."""
        body = {"name": _rule_name(name), "condition": _condition(condition),
                "tagIds": _tag_ids(tag_ids)}
        return self._post(CREATE_RULE, _project(project_id), body, read_rule, idempotent=False)

    def update_rule(self, project_id: str, rule_id: int, *, name: str | None = None,
                    condition: QueryFilters | None = None,
                    tag_ids: Iterable[int] | None = None) -> Rule:
        """The rule with each field given replaced (those left None are kept). New tags
        resume a rule the service paused when its last tag was deleted."""
        body: dict[str, Any] = {"id": _rule_id(rule_id)}
        if name is not None:
            body["name"] = _rule_name(name)
        if condition is not None:
            body["condition"] = _condition(condition)
        if tag_ids is not None:
            body["tagIds"] = _tag_ids(tag_ids)
        return self._post(UPDATE_RULE, _project(project_id), body, read_rule)

    def pause_rule(self, project_id: str, rule_id: int, paused: bool) -> Rule:
        """The rule paused (True) or resumed (False): a paused rule tags no query that
        enters."""
        if not isinstance(paused, bool):
            raise InvalidRequest("paused is True or False.")
        return self._post(PAUSE_RULE, _project(project_id),
                          {"id": _rule_id(rule_id), "paused": paused}, read_rule)

    def delete_rule(self, project_id: str, rule_id: int) -> None:
        """Delete the rule (the tags it added stay); NotFound when the project has no such
        rule (also when a lost answer's first attempt deleted it)."""
        self._transport.call("POST", DELETE_RULE, project_id=_project(project_id),
                             body={"id": _rule_id(rule_id)}, extra_headers=self._actor)

    def apply_rule(self, project_id: str, rule_id: int, cursor: int = 0) -> RuleApplied:
        """The next part of the rule's current matches gets its tags (`capabilities().
        rule_apply`); call again with the answer's cursor until it is None. Safe to repeat."""
        if not isinstance(cursor, int) or isinstance(cursor, bool) or cursor < 0:
            raise InvalidRequest("cursor is 0 or the cursor of the previous part.")
        return self._post(APPLY_RULE, _project(project_id),
                          {"id": _rule_id(rule_id), "cursor": cursor}, read_rule_applied)

    def unapply_rule(self, project_id: str, rule_id: int, since: str | None = None,
                     operation: str | None = None) -> RuleUnapplied:
        """The next part of the tags the rule added (only those since `since`, a time as the
        API writes them, when given) is taken away and kept under the answer's operation;
        call again with it while `more`."""
        body: dict[str, Any] = {"id": _rule_id(rule_id)}
        if since is not None:
            body["since"] = since
        if operation is not None:
            body["operation"] = operation
        return self._post(UNAPPLY_RULE, _project(project_id), body, read_rule_unapplied)

    def restore_rule(self, project_id: str, operation: str) -> RuleUnapplied:
        """The next part of what an unapply took away is put back (`removed`: links put
        back); call again while `more`."""
        return self._post(RESTORE_RULE, _project(project_id), {"operation": operation},
                          partial(read_rule_unapplied, counted="restored"))

    # -- extensions: suggested tags --------------------------------------------------------

    def suggestion_status(self, project_id: str) -> SuggestionStatus:
        """The project's suggested tags: ready, learning or too few tags, and what they were
        learned from (`capabilities().suggestions`)."""
        return self._post(SUGGESTION_STATUS, _project(project_id), {}, read_suggestion_status)

    def refresh_suggestions(self, project_id: str) -> None:
        """Learn the project's suggestions again, in the background (202)."""
        self._transport.call("POST", REFRESH_SUGGESTIONS, project_id=_project(project_id),
                             body={}, extra_headers=self._actor)

    def accept_suggestions(self, project_id: str, tag_id: int, *,
                           query_ids: Iterable[str] | None = None,
                           filters: QueryFilters | None = None,
                           min_confidence: float | None = None,
                           cursor: int = 0) -> SuggestionsAccepted:
        """The next part of the queries suggested the tag (by id, or those the filter
        matches) gets it; call again with the answer's cursor until it is None. The answer's
        `queries` are tags-edit items that take the tag away again (Undo)."""
        if (query_ids is None) == (filters is None):
            raise InvalidRequest("Give query_ids or filters, one of the two.")
        if not isinstance(cursor, int) or isinstance(cursor, bool) or cursor < 0:
            raise InvalidRequest("cursor is 0 or the cursor of the previous part.")
        body: dict[str, Any] = {"tagId": _tag_id(tag_id), "cursor": cursor}
        if query_ids is not None:
            body["queryIds"] = _names(query_ids, "query_ids")
        else:
            body["filters"] = filters.to_body()
        if min_confidence is not None:
            body["minConfidence"] = min_confidence
        done = self._post(ACCEPT_SUGGESTIONS, _project(project_id), body,
                          read_suggestions_accepted)
        return replace(done, queries=tuple(replace(item, remove=(tag_id,))
                                           for item in done.queries))

    def reject_suggestions(self, project_id: str, tag_id: int,
                           query_ids: Iterable[str]) -> int:
        """The tag is never suggested to these queries again (until it is merged or
        deleted); how many were newly rejected."""
        payload = self._transport.call(
            "POST", REJECT_SUGGESTIONS, project_id=_project(project_id),
            body={"tagId": _tag_id(tag_id), "queryIds": _names(query_ids, "query_ids")},
            extra_headers=self._actor)
        return read_rejected(payload, f"POST {REJECT_SUGGESTIONS}")

    # -- what the deployment offers --------------------------------------------------------

    def capabilities(self) -> Capabilities:
        """The extensions this deployment offers, read once from its OpenAPI document
        (GET /api/openapi.json) and then remembered by this client. A deployment without the
        document (any 4xx but 429, or a document without the operation) offers none. A busy
        or unreachable service (RateLimited, Unavailable, TransportError, 5xx) raises, and
        nothing is remembered: the next call asks again."""
        with self._capabilities_lock:
            if self._capabilities is None:
                try:
                    document = self._transport.call("GET", OPENAPI)
                except (RateLimited, Unavailable, TransportError):
                    raise
                except ApiError as error:
                    if error.status is None or not 400 <= error.status < 500:
                        raise
                    document = None
                self._capabilities = read_capabilities(document, EXTENSIONS, FILTER_SCHEMA)
            return self._capabilities

    # -- paging ----------------------------------------------------------------------------

    def _walk(self, fetch: Callable[[int, int], Listing]) -> Iterator:
        """Yield every record, page by page. Asks for the largest page size and then uses the
        size the service says it used (`page.limit`), so the pages line up either way."""
        page: int | None = 1
        limit = MAX_PAGE_SIZE
        while page is not None:
            listing = fetch(page, limit)
            yield from listing.results
            if listing.page.limit > 0:
                limit = listing.page.limit
            page = listing.page.following(len(listing.results))


def sort_body(sort: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"field": field, "direction": direction.upper()} for field, direction in sort]


def batches(items: list[TagAssignment | TagEdit]) -> Iterator[list[TagAssignment | TagEdit]]:
    """Consecutive runs of at most MAX_BATCH items whose JSON body stays under MAX_BODY_BYTES."""
    batch: list[TagAssignment | TagEdit] = []
    size = len(encode({"queries": []}))
    for item in items:
        item_size = len(encode(item.to_body())) + 1  # and a comma
        if batch and (len(batch) == MAX_BATCH or size + item_size > MAX_BODY_BYTES):
            yield batch
            batch, size = [], len(encode({"queries": []}))
        batch.append(item)
        size += item_size
    if batch:
        yield batch


def _check_items(items: list, kind: type) -> None:
    """Refuse before sending what the service would refuse, so that no batch is half-done:
    an item that is not a `kind`, a repeated query, a tag both added and removed."""
    seen: dict[tuple[str, str, str], int] = {}
    repeats = []
    for position, item in enumerate(items):
        if not isinstance(item, kind):
            raise InvalidRequest(f"Item {position} is not a {kind.__name__}.")
        both = set(getattr(item, "add", ())) & set(getattr(item, "remove", ()))
        if both:
            raise InvalidRequest(f"Item {position} both adds and removes tag {min(both)}.")
        key = (item.query, item.language.casefold(), item.country.casefold())
        if key in seen:
            repeats.append(f'Item {position} repeats item {seen[key]} ("{item.query}", '
                           f"{item.language}, {item.country}).")
        seen.setdefault(key, position)
    if repeats:
        shown = repeats[:10] + ([f"… and {len(repeats) - 10} more."] if len(repeats) > 10 else [])
        raise InvalidRequest(" ".join(shown), details=shown)


def _tag_id(tag_id: int) -> int:
    if not isinstance(tag_id, int) or isinstance(tag_id, bool) or tag_id < 1:
        raise InvalidRequest("A tag's id is a whole number from 1.")
    return tag_id


def _view_id(view_id: int) -> int:
    if isinstance(view_id, bool) or not isinstance(view_id, int):
        raise InvalidRequest("A saved view's id is a whole number.")
    return view_id


def _rule_id(rule_id: int) -> int:
    if isinstance(rule_id, bool) or not isinstance(rule_id, int):
        raise InvalidRequest("A rule's id is a whole number.")
    return rule_id


def _rule_name(name: str) -> str:
    if not isinstance(name, str):
        raise InvalidRequest("A rule's name is text.")
    return name


def _condition(condition: QueryFilters) -> dict:
    if not isinstance(condition, QueryFilters):
        raise InvalidRequest("A rule's condition is QueryFilters.")
    return condition.to_body()


def _tag_ids(tag_ids: Iterable[int]) -> list[int]:
    if isinstance(tag_ids, str | bytes):
        raise InvalidRequest("A rule's tags are tag ids (whole numbers).")
    ids = list(tag_ids)
    if any(isinstance(tag_id, bool) or not isinstance(tag_id, int) for tag_id in ids):
        raise InvalidRequest("A rule's tags are tag ids (whole numbers).")
    if not ids:
        raise InvalidRequest("A rule adds at least one tag.")
    return ids


def _names(names: Iterable[str], what: str) -> list[str]:
    """A list of names such as include's or sums', each once."""
    if isinstance(names, str | bytes):
        names = [names]
    listed = list(dict.fromkeys(names))
    if not all(isinstance(name, str) and name for name in listed):
        raise InvalidRequest(f"{what} lists names, as text.")
    return listed


def _project(project_id: str) -> str:
    if not isinstance(project_id, str) or not project_id.strip() or not project_id.isprintable():
        raise InvalidRequest("A project id is needed: the project's UUID.")
    return project_id.strip()
