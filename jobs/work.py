"""`run_job(job_id, app_config)`: a background job, from start (or resume) to its end.

A plain function of the configuration the app hands over (app.py's `job_config`), so any
runner can call it — a thread of a web worker (`ThreadRunner`) or an RQ worker over Redis
(`flask --app app worker`). It needs no request: the job (from the jobs database), the org
key (from the server-side session store, through the session id the job recorded and the
app's own session interface: `app_config["SESSIONS"]`, jobs/sessions.py) and the API's
address (in `app_config`) are all it uses.

The API client is in BACKGROUND mode: it paces itself to the organization's rate limits and
waits out 429s (Retry-After) and 503s (30 s, doubling), so a job under tight limits is slow,
not broken. Any other failure of the API leaves the job *interrupted* with a sentence and with
exactly what was done recorded; Resume carries on from there.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from queryapi import ApiError, AuthError, Client, Mode, QueryFilters
from weblib.job_lifecycle import Heartbeat
from weblib.processes import process_owner

from . import rule_jobs, suggestion_jobs
from .deltas import Delta
from .edit import Edit
from .export import csv_pages, numbers_offered
from .store import HEARTBEAT_SECONDS, Store
from .walk import SAME, SKIP, WRITE, Walk, stable_membership

log = logging.getLogger(__name__)

SIGNED_OUT = ("It stopped because nobody who started or resumed it is signed in any more. "
              "Resume it to carry on.")
KEY_REJECTED = ("It stopped because the API key was no longer accepted (it may have been "
                "revoked). Sign in again and resume it.")
UNEXPECTED = "It stopped because something went wrong on our side. It has been noted."


def heartbeat(store: Store, edit: Edit, owner: str, interval: float) -> Heartbeat:
    """While a job runs: its heartbeat (so every worker knows it is alive) and, where its
    walk holds one, the lease on its project's lock, renewed every few seconds."""
    def beat() -> bool:
        if not store.heartbeat(edit.id, owner):
            return False  # no longer this process's to run: nothing left to keep alive
        store.renew_lock(edit.project_id, edit.id)
        return True

    return Heartbeat(beat, interval, f"tagdesk-heartbeat-{edit.id[:8]}")


def run_job(job_id: str, app_config: dict) -> str | None:
    """Run (or resume) a queued job to its end; returns its final state, or None when it was
    not queued (another runner took it, or it was cancelled before it started)."""
    store = Store.for_url(app_config["JOBS_DATABASE_URL"])
    owner = process_owner()
    edit = store.claim(job_id, owner)
    if edit is None:
        return None
    interval = float(app_config.get("JOBS_HEARTBEAT_SECONDS") or HEARTBEAT_SECONDS)
    with heartbeat(store, edit, owner, interval):
        key = app_config["SESSIONS"](edit.session_ref)
        if key is None:
            store.finish(job_id, "interrupted", SIGNED_OUT)
            return "interrupted"
        try:
            with Client(app_config["API_URL"], key, Mode.BACKGROUND,
                        timeout=tuple(app_config.get("API_TIMEOUT") or (3.05, 30)),
                        retries=int(app_config.get("API_RETRIES", 6)),
                        actor=edit.actor or None) as client:
                if edit.kind == "export":
                    state = _export(client, store, edit, app_config)
                elif edit.kind == "undo":
                    state = _undo(client, store, edit, app_config)
                else:
                    state = _edit(client, store, edit, app_config)
        except AuthError:
            store.finish(job_id, "interrupted", KEY_REJECTED)
            return "interrupted"
        except ApiError as error:
            log.info("job %s interrupted: %s", job_id, error.message)
            store.finish(job_id, "interrupted", f"It stopped: {error.message} Resume it to "
                                                "carry on.")
            return "interrupted"
        except Exception:
            log.exception("job %s failed", job_id)
            store.finish(job_id, "failed", UNEXPECTED)
            return "failed"
    store.finish(job_id, state)
    return state


def _batch_size(app_config: dict) -> int:
    return int(app_config.get("BULK_BATCH_SIZE") or 1000)


def _walk_options(app_config: dict, client: Client, edit: Edit, filters: QueryFilters,
                  delta: Delta) -> dict:
    stable = stable_membership(filters, delta, _tags_named(client, edit, filters))
    return {"batch_size": _batch_size(app_config), "stable": stable,
            "pipelined": bool(app_config.get("BULK_PIPELINE")) and stable}


def _tags_named(client: Client, edit: Edit, filters: QueryFilters) -> frozenset[int] | None:
    """The ids of the tags the filter names (names match case-insensitively; the project's
    tags are read only when it names some)."""
    ids: dict[str, int] = {}
    if filters.tag_names or filters.exclude_tag_names:
        ids = {tag.name.casefold(): tag.id for tag in client.iter_tags(edit.project_id)}
    return filters.tags_named(lambda name: ids.get(name.casefold()))


def job_filters(edit: Edit) -> QueryFilters:
    """The filter a job walks, kept as the API's body."""
    return QueryFilters.from_body(edit.scope_filter or {})


def _edit(client: Client, store: Store, edit: Edit, app_config: dict) -> str:
    if edit.scope == suggestion_jobs.SCOPE:
        return suggestion_jobs.accept(client, store, edit)
    if edit.scope == "rule":
        return rule_jobs.apply(client, store, edit)
    if edit.scope == "rule-removal":
        return rule_jobs.take_back(client, store, edit)
    filters = job_filters(edit)
    delta = Delta.from_json(edit.delta or {})

    def plan(rows):
        steps = []
        for row in rows:
            new = delta.apply(row.tags)
            steps.append((WRITE, new) if set(new) != set(row.tags) else (SAME, None))
        return steps

    return Walk(client, store, edit, filters, plan,
                **_walk_options(app_config, client, edit, filters, delta)).run()


def _undo(client: Client, store: Store, edit: Edit, app_config: dict) -> str:
    """Walk a filter covering the original edit's changes; each query the edit changed gets
    the reverse of exactly that change, on the tags it has now. A rule's job is undone by
    the service (jobs/rule_jobs.py)."""
    if edit.scope == suggestion_jobs.SCOPE:
        return suggestion_jobs.take_back(client, store, edit)
    if edit.scope == "rule":
        return rule_jobs.take_back(client, store, edit)
    if edit.scope == "rule-removal":
        return rule_jobs.put_back(client, store, edit)
    filters = job_filters(edit)
    original = edit.undo_of
    done = Delta.from_json(edit.delta or {})
    # Undoing puts back what was removed and takes away what was added.
    reverse = Delta(replace=()) if done.replace is not None or (done.add and done.remove) \
        else Delta(add=done.remove, remove=done.add)

    def plan(rows):
        changes = store.changes(original, [row.id for row in rows])
        steps = []
        for row in rows:
            change = changes.get(row.id)
            if change is None:
                steps.append((SKIP, None))
                continue
            new = change.undo(row.tags)
            steps.append((WRITE, new) if set(new) != set(row.tags) else (SAME, None))
        return steps

    return Walk(client, store, edit, filters, plan,
                **_walk_options(app_config, client, edit, filters, reverse)).run()


def export_path(app_config: dict, edit_id: str) -> Path:
    return Path(app_config["EXPORT_FOLDER"]) / f"{edit_id}.csv"


def _export(client: Client, store: Store, edit: Edit, app_config: dict) -> str:
    """Write the CSV to a file of the instance folder (only the owner may read it). An export
    that is resumed starts again from its first row."""
    filters = job_filters(edit)
    sort = [tuple(item) for item in (edit.sort or [("query", "ASC")])]
    names = {tag.id: tag.name for tag in client.iter_tags(edit.project_id)}
    path = export_path(app_config, edit.id)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".part")
    store.update(edit.id, processed=0, file=None)
    cancelled = False

    def progress(done: int, total: int) -> None:
        store.update(edit.id, processed=done, total=total,
                     requests=edit.requests + client.stats.requests,
                     rate_limited=edit.rate_limited + client.stats.rate_limited)

    def should_stop() -> bool:
        nonlocal cancelled
        cancelled = store.cancel_requested(edit.id)
        return cancelled

    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            for chunk in csv_pages(client, edit.project_id, filters, sort, names,
                                   progress, should_stop, numbers_offered(client)):
                handle.write(chunk)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if cancelled:
        temporary.unlink(missing_ok=True)
        return "cancelled"
    os.replace(temporary, path)
    store.update(edit.id, file=path.name)
    return "done"

