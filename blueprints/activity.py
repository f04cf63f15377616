"""A project's activity: every edit, undo and export, newest first — when, who, what, how many
queries it changed, and Undo while it is still possible — the dashboard's own record (jobs
database). Above them, on the first page, the project's imports made in the settings, read
through the API where the deployment offers it (POST /api/imports/list). Its rows:
dashboard/activity_log.py."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, render_template, request
from flask_login import login_required

from dashboard import apiclient
from dashboard.activity_log import activity_row, entry_of, import_entry
from dashboard.current_project import load_project
from dashboard.edits import jobs_store, project_and_edit_now, stale_seconds
from queryapi import RateLimited, TransportError, Unavailable

bp = Blueprint("activity", __name__)

PER_PAGE = 50
IMPORTS_SHOWN = 20


def imports_section(project_id: str, now: datetime) -> dict:
    """The Imports section's context: none where the deployment lists no imports; a sentence
    instead of the rows when they cannot be read just now (the edits are shown all the
    same)."""
    if not apiclient.capabilities().imports:
        return {"imports_offered": False}
    try:
        records = apiclient.client().list_imports(project_id, IMPORTS_SHOWN)
    except (RateLimited, Unavailable, TransportError):
        return {"imports_offered": True, "imports": [], "imports_error":
                "The imports could not be read just now: reload the page in a moment."}
    return {"imports_offered": True, "imports": [import_entry(r, now) for r in records]}


@bp.get("/projects/<project_id>/activity")
@login_required
def index(project_id: str):
    project = load_project(project_id)
    store = jobs_store()
    store.interrupt_dead(stale_seconds(), project.id)
    try:
        page = max(1, min(int(request.args.get("page", "1")), 100_000))
    except ValueError:
        page = 1
    total = store.count_for_project(project.id)
    edits = store.for_project(project.id, PER_PAGE, (page - 1) * PER_PAGE)
    originals = {e.undo_of: store.get(e.undo_of) for e in edits if e.undo_of}
    now = datetime.now(UTC)
    entries = [entry_of(project, edit, now, originals.get(edit.undo_of)) for edit in edits]
    pages = max(1, -(-total // PER_PAGE))
    return render_template("activity/index.html", project=project, section="activity",
                           entries=entries, page=page, pages=pages, total=total,
                           **(imports_section(project.id, now) if page == 1
                              else {"imports_offered": False}),
                           page_title=f"Activity · {project.name} · Tagdesk")


@bp.get("/projects/<project_id>/activity/<edit_id>")
@login_required
def row(project_id: str, edit_id: str):
    """One row, drawn again (its job, or the job undoing it, has ended)."""
    return activity_row(*project_and_edit_now(project_id, edit_id))
