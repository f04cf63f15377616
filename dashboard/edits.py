"""The dashboard's record of edits and jobs, as pages use it: the jobs store and runner of
this app, who makes an edit, a job's panel, and the bulk-editing parts of the queries page."""

from __future__ import annotations

import math
import time

from flask import abort, current_app, render_template, session, url_for
from flask_login import current_user
from markupsafe import Markup

from jobs import suggestion_jobs
from jobs.deltas import Change, Delta
from jobs.edit import ACTIVE, Edit
from jobs.store import Store, process_owner
from queryapi import QueryFilters

from . import wording
from .current_project import Project, load_project
from .signin import SESSION_NAME
from .viewstate import QueryView


def jobs_store() -> Store:
    return current_app.extensions["tagdesk_jobs"]


def runner():
    return current_app.extensions["tagdesk_runner"]


def lock_wait() -> float:
    """How long an in-page edit or undo waits for the project's lease (BULK_LOCK_WAIT)."""
    return float(current_app.config.get("BULK_LOCK_WAIT", 10))


def who() -> dict:
    """Who makes an edit: the name given at sign-in, the masked key, and the session that
    holds the key (a background job reads the key from there; it is never stored with it)."""
    return {"actor": session.get(SESSION_NAME) or "", "masked_key": current_user.masked_key,
            "session_ref": getattr(session, "sid", None)}


def start_filter_edit(project, filters: QueryFilters, delta: Delta, tag_names: dict[str, str],
                      count: int, words: str) -> Edit:
    """An edit of every query of `filters` (a job, which keeps them as the API's body),
    queued and handed to the runner; `words` say which queries, for its panel and the
    activity log."""
    store = jobs_store()
    edit = store.create(
        project_id=project.id, kind="edit", scope="filter", scope_filter=filters.to_body(),
        scope_words=words, delta=delta.to_json(), tag_names=tag_names, state="queued",
        expected=count, total=count, owner=process_owner(), **who())
    runner().submit(edit.id)
    return store.get(edit.id)


def start_rule_job(project, scope: str, spec: dict, delta: Delta, tag_names: dict[str, str],
                   count: int, words: str) -> Edit:
    """A job the service does a part at a time (jobs/rule_jobs.py): `scope` "rule" applies
    the rule of `spec`, "rule-removal" takes back the tags it added."""
    store = jobs_store()
    edit = store.create(
        project_id=project.id, kind="edit", scope=scope, scope_filter=spec, scope_words=words,
        delta=delta.to_json(), tag_names=tag_names, state="queued", expected=count,
        total=count, owner=process_owner(), **who())
    runner().submit(edit.id)
    return store.get(edit.id)


def start_suggestions_job(project, tag, filters: QueryFilters, count: int) -> Edit:
    """Accept all: the view's queries suggested `tag` get it, a part at a time by the service
    (jobs/suggestion_jobs.py)."""
    store = jobs_store()
    edit = store.create(
        project_id=project.id, kind="edit", scope=suggestion_jobs.SCOPE,
        scope_filter={"tagId": tag.id, "tagName": tag.name, "filters": filters.to_body()},
        scope_words=f"suggested ‘{tag.name}’", delta=Delta(add=frozenset({tag.id})).to_json(),
        tag_names={str(tag.id): tag.name}, state="queued", expected=count, total=count,
        owner=process_owner(), **who())
    runner().submit(edit.id)
    return store.get(edit.id)


SUGGESTION = "suggestion"  # the scope of one query's suggested tags accepted


def record_accepted(project, query_id: str, item, tags: dict[int, str]) -> Edit:
    """One query's suggested tags accepted (`item`: the query as the service answered the
    accept, `tags`: those it tagged, by id): recorded as an edit of that row, so that
    Activity lists it and its Undo takes them away again, as a row's quick edit."""
    ids = tuple(sorted(tags))
    return jobs_store().record_finished(
        [Change(query_id, item.query, item.language, item.country, added=ids)],
        project_id=project.id, kind="edit", scope=SUGGESTION, scope_words=f"“{item.query}”",
        delta=Delta(add=frozenset(ids)).to_json(),
        tag_names={str(tag_id): name for tag_id, name in tags.items()}, expected=1, total=1,
        processed=1, changed=1, untouched=0, **who())


def project_and_edit(project_id: str, edit_id: str) -> tuple[Project, Edit]:
    """The project of the address (load_project) and its edit `edit_id`, or 404."""
    project = load_project(project_id)
    if len(edit_id) > 64:
        abort(404)
    edit = jobs_store().get(edit_id)
    if edit is None or edit.project_id != project.id:
        abort(404)
    return project, edit


def project_and_edit_now(project_id: str, edit_id: str) -> tuple[Project, Edit]:
    """project_and_edit, the edit as it is after the project's jobs whose process is gone are
    marked interrupted (what a page that follows a job shows)."""
    project, _edit = project_and_edit(project_id, edit_id)
    store = jobs_store()
    store.interrupt_dead(stale_seconds(), project.id)
    return project, store.get(edit_id)


def job_context(project, edit: Edit) -> dict:
    store = jobs_store()
    original = store.get(edit.undo_of) if edit.undo_of else None
    seconds_left = None
    if edit.state == "running" and edit.run_started_at:
        done_now = edit.processed - edit.run_processed_start
        elapsed = time.time() - edit.run_started_at
        if done_now > 0 and elapsed > 0:
            seconds_left = max(edit.total - edit.processed, 0) / (done_now / elapsed)
    return {
        "project": project,
        "edit": edit,
        "title": wording.task_title(edit, original),
        "summary": wording.summary(edit, original) if not edit.active else "",
        "time_left": wording.time_left(seconds_left) if edit.state == "running" else "",
        "percent": 0 if not edit.total else min(100, math.floor(100 * edit.processed
                                                                 / edit.total)),
        "status_url": url_for("bulk.job_status", project_id=project.id, edit_id=edit.id),
        "poll_every": poll_every(),
        "noun": "query" if edit.total == 1 else "queries",
    }


def job_panel(project, edit: Edit) -> Markup:
    """A job's panel (HTML, to be placed in other templates as is)."""
    # A rendered template is escaped HTML already.
    return Markup(render_template("bulk/_job.html", **job_context(project, edit)))  # noqa: S704


def poll_every() -> str:
    """How often a running job's panel asks for its progress, as htmx's `every` says it
    (JOBS_POLL_SECONDS: "1s")."""
    return f"{float(current_app.config.get('JOBS_POLL_SECONDS', 1.0)):g}s"


def stale_seconds() -> float:
    return float(current_app.config.get("JOBS_STALE_SECONDS", 30))


def unfinished_panels(project) -> list[Markup]:
    """The panels of the project's unfinished jobs (progress, Cancel, Resume)."""
    store = jobs_store()
    unfinished = store.unfinished(project.id)
    # Only a queued or running job can have been left by a stopped process: most pages have
    # none, and skip that second read.
    if any(edit.state in ACTIVE for edit in unfinished) \
            and store.interrupt_dead(stale_seconds(), project.id):
        unfinished = store.unfinished(project.id)
    return [job_panel(project, edit) for edit in unfinished]


def page_context(project, view: QueryView, total: int, with_jobs: bool = True) -> dict:
    """What the queries page needs for bulk editing (no API call)."""
    jobs = unfinished_panels(project) if with_jobs else []
    picker_url = url_for("bulk.picker", project_id=project.id)
    return {
        "picker_url": picker_url,
        "total": total,
        "total_text": f"{total:,}",
        "export_url": url_for("export.download", project_id=project.id) + view.query_string(),
        "export_start_url": url_for("export.start", project_id=project.id),
        "jobs": jobs,
    }
