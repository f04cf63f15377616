"""Accept all: every query of a view suggested a tag gets it, a part at a time (the API's
suggestions/accept with a cursor: `Capabilities.suggestions`), with progress, Cancel between
parts, Resume where the last part stopped, and Undo, which takes the tag away again from
exactly the queries its parts tagged (tags-edit).

`edit.scope_filter` holds `tagId`, `tagName` and the view's `filters` (the API's body);
`edit.cursor_k` where it carries on; each part's queries are the edit's changes, keyed by
their (query, language, country), which is how tags-edit names them.
"""

from __future__ import annotations

import hashlib

from queryapi import Client, QueryFilters, TagEdit

from .deltas import Change
from .edit import Edit
from .store import Store

SCOPE = "suggestions"
UNDONE_AT_ONCE = 1000


def _key(query: str, language: str, country: str) -> str:
    return hashlib.sha256("\0".join((query, language, country)).encode()).hexdigest()


def _progress(client: Client, store: Store, edit: Edit) -> dict:
    return {"requests": edit.requests + client.stats.requests,
            "rate_limited": edit.rate_limited + client.stats.rate_limited}


def accept(client: Client, store: Store, edit: Edit) -> str:
    spec = edit.scope_filter or {}
    tag_id = int(spec["tagId"])
    filters = QueryFilters.from_body(spec.get("filters") or {})
    cursor, processed, changed = edit.cursor_k or 0, edit.processed, edit.changed
    batch = edit.batches or 0
    while True:
        if store.cancel_requested(edit.id):
            return "cancelled"
        part = client.accept_suggestions(edit.project_id, tag_id, filters=filters,
                                         cursor=cursor)
        batch += 1
        store.begin_batch(edit.id, batch, [
            Change(_key(item.query, item.language, item.country), item.query, item.language,
                   item.country, added=(tag_id,)) for item in part.queries])
        processed += part.checked
        changed += part.tagged
        cursor = part.cursor
        store.commit_batch(edit.id, batch, {
            "processed": processed, "changed": changed, "untouched": processed - changed,
            "total": processed + part.remaining, "cursor_k": cursor or 0,
            **_progress(client, store, edit)})
        if cursor is None:
            return "done"


def take_back(client: Client, store: Store, edit: Edit) -> str:
    """The tag taken away from the queries the original job tagged."""
    tag_id = int((edit.scope_filter or {})["tagId"])
    changes = sorted(store.changes(edit.undo_of).values(), key=lambda change: change.query_id)
    done = edit.processed
    store.update(edit.id, total=len(changes))
    for start in range(done, len(changes), UNDONE_AT_ONCE):
        if store.cancel_requested(edit.id):
            return "cancelled"
        part = changes[start:start + UNDONE_AT_ONCE]
        client.edit_tags(edit.project_id, [
            TagEdit(change.query, change.language, change.country, remove=(tag_id,))
            for change in part])
        done = start + len(part)
        store.update(edit.id, processed=done, changed=done, **_progress(client, store, edit))
    return "done"
