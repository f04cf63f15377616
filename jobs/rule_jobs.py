"""The jobs of a rule that the service applies itself (the API's rules/apply, unapply and
restore: `Capabilities.rule_apply`), a part at a time, with progress, Cancel between parts,
Resume where the last part stopped, and Undo:

- scope "rule": a saved rule's tags given to the queries it matches now (`edit.delta` adds
  them); its undo takes back what it added (unapply since its first part's time);
- scope "rule-removal": the tags a rule added taken away, and then (`deleteRule`) the rule
  deleted; its undo puts them back (restore).

`edit.scope_filter` holds the rule (`ruleId`, `ruleName`) and what the service answered
that the next part or the undo needs (`since`, `operation`); `edit.cursor_k` where an apply
carries on.
"""

from __future__ import annotations

from contextlib import suppress

from queryapi import Client, NotFound

from .edit import Edit
from .store import Store

RULE_SCOPES = ("rule", "rule-removal")


def _progress(client: Client, store: Store, edit: Edit, **values) -> None:
    store.update(edit.id, requests=edit.requests + client.stats.requests,
                 rate_limited=edit.rate_limited + client.stats.rate_limited, **values)


def apply(client: Client, store: Store, edit: Edit) -> str:
    spec = dict(edit.scope_filter or {})
    cursor, processed, changed = edit.cursor_k or 0, edit.processed, edit.changed
    while True:
        if store.cancel_requested(edit.id):
            return "cancelled"
        part = client.apply_rule(edit.project_id, spec["ruleId"], cursor)
        if "since" not in spec:
            spec["since"] = part.applied_at
            store.update(edit.id, scope_filter=spec)
        processed += part.checked
        changed += part.tagged
        cursor = part.cursor
        _progress(client, store, edit, processed=processed, changed=changed,
                  untouched=processed - changed, total=processed + part.remaining,
                  cursor_k=cursor or 0)
        if cursor is None:
            return "done"


def take_back(client: Client, store: Store, edit: Edit) -> str:
    """The rule's links taken away: all of them, or those since `since` (an apply's undo)."""
    spec = dict(edit.scope_filter or {})
    changed = edit.changed
    while True:
        if store.cancel_requested(edit.id):
            return "cancelled"
        part = client.unapply_rule(edit.project_id, spec["ruleId"], since=spec.get("since"),
                                   operation=spec.get("operation"))
        if spec.get("operation") is None:
            spec["operation"] = part.operation
            store.update(edit.id, scope_filter=spec)
        changed += part.queries
        _progress(client, store, edit, processed=changed, changed=changed,
                  total=max(edit.total, changed))
        if not part.more:
            break
    if spec.get("deleteRule"):
        with suppress(NotFound):  # deleted meanwhile: what was asked for is so
            client.delete_rule(edit.project_id, spec["ruleId"])
    return "done"


def put_back(client: Client, store: Store, edit: Edit) -> str:
    """What a take_back took away, put back (its operation)."""
    operation = (edit.scope_filter or {})["operation"]
    changed = edit.changed
    while True:
        if store.cancel_requested(edit.id):
            return "cancelled"
        part = client.restore_rule(edit.project_id, operation)
        changed += part.queries
        _progress(client, store, edit, processed=changed, changed=changed,
                  total=max(edit.total, changed))
        if not part.more:
            return "done"
