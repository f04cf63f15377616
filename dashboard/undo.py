"""Undo of an edit, as the dashboard runs it: whether it may be undone, whether the undo runs
within the request or as a job, and the records it reads and writes. Pages draw the outcome.

Within the request (at most INLINE_UNDO_LIMIT changes, not a rule's job): the changed rows'
tags are read afresh (a covering read, most recent first, and lookups for the few not in it),
each change reversed, one write, the undo recorded. Otherwise — or when the rows cannot be
found cheaply — the undo is a job (a filter every changed row still matches, or the service's
own undo of a rule's job)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from jobs.deltas import Change, Delta, RowKey, undo_filters
from jobs.edit import Edit
from jobs.fresh import TooManyMoved, by_recency, find_rows
from jobs.rewrite import held_for_write, rewrite, write
from jobs.rule_jobs import RULE_SCOPES
from jobs.store import new_id, process_owner
from jobs.suggestion_jobs import SCOPE as SUGGESTIONS
from jobs.work import job_filters
from queryapi import Query, QueryFilters

from . import apiclient
from .edits import jobs_store, lock_wait, runner, who

INLINE_UNDO_LIMIT = 1000     # changes an undo makes within its request; more: a job


class UndoRefused(Exception):
    """A sentence for the person: this edit cannot be undone now; nothing was changed."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Undone:
    """What Undo started: the undo's record, and the rows as it left them when it ran within
    the request (None: it runs as a job)."""

    edit: Edit
    records: list[Query] | None = None


def undo_edit(project, edit: Edit) -> Undone:
    """Undo `edit`, within the request when it is small enough and its rows are found
    cheaply, else as a job. UndoRefused when it cannot be undone (any more); LockBusy when
    another edit holds the project's lease too long (nothing changed, the edit stays
    undoable)."""
    if not edit.undoable:
        raise UndoRefused("This edit cannot be undone (it was undone already, or it is still "
                          "running).")
    store = jobs_store()
    undo_id = new_id()
    if not store.mark_undone(edit.id, undo_id):
        raise UndoRefused("This edit is being undone already.")
    try:
        done = undo_in_request(project, edit, undo_id) if runs_in_request(edit) else None
    except BaseException:
        store.release_undo(edit.id, undo_id)
        raise
    return done or Undone(start_undo_job(project, edit, undo_id))


def runs_in_request(edit: Edit) -> bool:
    """Whether the undo of `edit` is tried within the request (a rule's job is undone by the
    service, a part at a time)."""
    return edit.changed <= INLINE_UNDO_LIMIT and edit.scope not in (*RULE_SCOPES, SUGGESTIONS)


def covering_filters(edit: Edit, changes: list[Change]) -> QueryFilters:
    """A filter every query the edit changed still matches, if undoing it matters."""
    languages = sorted({change.language for change in changes})
    countries = sorted({change.country for change in changes})
    base = job_filters(edit) if edit.scope == "filter" else QueryFilters()
    base = replace(base, languages=tuple(languages) if len(languages) <= 50 else base.languages,
                   countries=tuple(countries) if len(countries) <= 50 else base.countries)
    return undo_filters(base, Delta.from_json(edit.delta or {}))


def undo_in_request(project, edit: Edit, undo_id: str) -> Undone | None:
    """Undo within the request: fresh tags of the changed rows, the reverse of each change,
    one write, recorded. None when the rows cannot be found cheaply (nothing written)."""
    store = jobs_store()
    changes = list(store.changes(edit.id).values())
    keys = [RowKey(c.query_id, c.query, c.language, c.country) for c in changes]
    by_id = {change.query_id: change for change in changes}
    client = apiclient.client()
    covering = covering_filters(edit, changes)
    try:
        with held_for_write(store, client, project.id, undo_id, lock_wait()):
            first = by_recency(client, project.id, covering)
            found, _gone = find_rows(client, project.id, keys, first, first_covers=True)
            step = rewrite(found.values(), lambda record: by_id[record.id].undo(record.tags))
            updated = write(client, project.id, step)
    except TooManyMoved:
        return None
    undone = store.record_finished(
        step.changes, id=undo_id, project_id=project.id, kind="undo", scope=edit.scope,
        scope_words=edit.scope_words, delta=edit.delta, tag_names=edit.tag_names,
        undo_of=edit.id, expected=edit.changed, total=len(found), processed=len(found),
        changed=len(step.changes), untouched=step.untouched, **who())
    records = [updated.get(query_id) or record for query_id, record in found.items()]
    return Undone(undone, records)


def start_undo_job(project, edit: Edit, undo_id: str) -> Edit:
    """The undo as a job, queued and handed to the runner."""
    store = jobs_store()
    if edit.scope in RULE_SCOPES:  # undone by the service (jobs/rule_jobs.py)
        scope = edit.scope
        scope_filter = {name: value for name, value in (edit.scope_filter or {}).items()
                        if name in ("ruleId", "ruleName", "since", "operation")}
    elif edit.scope == SUGGESTIONS:  # the tag taken away from what it tagged (suggestion_jobs)
        scope = edit.scope
        scope_filter = {name: value for name, value in (edit.scope_filter or {}).items()
                        if name in ("tagId", "tagName")}
    elif edit.scope == "filter":
        scope = "filter"
        scope_filter = undo_filters(job_filters(edit),
                                    Delta.from_json(edit.delta or {})).to_body()
    else:
        scope = "filter"
        scope_filter = covering_filters(edit, list(store.changes(edit.id).values())).to_body()
    undone = store.create(
        id=undo_id, project_id=project.id, kind="undo", scope=scope,
        scope_filter=scope_filter, scope_words=edit.scope_words, delta=edit.delta,
        tag_names=edit.tag_names, undo_of=edit.id, state="queued", expected=edit.changed,
        total=edit.changed, owner=process_owner(), **who())
    runner().submit(undone.id)
    return store.get(undone.id)
