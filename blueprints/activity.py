"""A project's activity: every edit, undo and export, newest first — when, who, what, how many
queries it changed, and Undo while it is still possible. No API call: it is the dashboard's
own record (jobs database)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, render_template, request, url_for
from flask_login import login_required

from dashboard import wording
from dashboard.current_project import load_project
from dashboard.edits import job_panel, jobs_store, stale_seconds
from dashboard.rows import relative_time

bp = Blueprint("activity", __name__)

PER_PAGE = 50
STATES = {"queued": "Waiting", "running": "Running", "done": "Done", "cancelled": "Cancelled",
          "interrupted": "Interrupted", "failed": "Stopped"}


def _moment(timestamp: float, now: datetime) -> dict:
    moment = datetime.fromtimestamp(timestamp, UTC)
    return {"iso": moment.isoformat(timespec="seconds").replace("+00:00", "Z"),
            "relative": relative_time(moment, now),
            "exact": f"{moment.day} {moment:%b %Y, %H:%M:%S} UTC"}


def who_of(edit) -> dict:
    """The person (the name given at sign-in) with the key's ending as a detail; without a
    name, the key's ending stands for the person. The whole masked key is the detail's
    tooltip."""
    masked = edit.masked_key or ""
    ending = f"key …{masked[-4:]}" if len(masked) >= 4 else "an unknown key"
    if edit.actor:
        return {"who": edit.actor, "key": ending, "masked": masked}
    return {"who": ending[0].upper() + ending[1:], "key": "", "masked": masked}


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
    entries = []
    for edit in edits:
        original = originals.get(edit.undo_of)
        undone = store.get(edit.undone_by) if edit.undone_by else None
        entries.append({
            "edit": edit,
            "when": _moment(edit.created_at, now),
            **who_of(edit),
            "title": wording.task_title(edit, original),
            "summary": "" if edit.active else wording.summary(edit, original),
            "panel": job_panel(project, edit) if edit.active or edit.state == "interrupted"
            else None,
            "state": "Undone" if undone is not None and undone.state == "done"
            else STATES.get(edit.state, edit.state),
            "undo_url": url_for("bulk.undo", project_id=project.id, edit_id=edit.id),
            "download_url": url_for("export.job_file", project_id=project.id,
                                    edit_id=edit.id)
            if edit.kind == "export" and edit.state == "done" and edit.file else None,
        })
    pages = max(1, -(-total // PER_PAGE))
    return render_template("activity/index.html", project=project, section="activity",
                           entries=entries, page=page, pages=pages, total=total,
                           page_title=f"Activity · {project.name} · Tagdesk")
