"""The activity log's rows: when, who, what, how many queries, the status, and Undo while
possible (the jobs database only, no API call). The activity page draws them all; a row is
also drawn alone, where it changed (an Undo pressed on the page, a job of the row ending).
Beside them, the rows of the project's imports made in the settings (`import_entry`, from
records the page reads through the API)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import render_template, url_for
from markupsafe import Markup

from queryapi import ImportRecord

from . import wording
from .edits import job_panel, jobs_store
from .rows import relative_time

STATES = {"queued": "Waiting", "running": "Running", "done": "Done", "cancelled": "Cancelled",
          "interrupted": "Interrupted", "failed": "Stopped"}
IMPORT_STATES = {"queued": "Waiting", "running": "Running", "finished": "Done",
                 "failed": "Nothing imported", "interrupted": "Interrupted"}


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


def entry_of(project, edit, now: datetime, original=None) -> dict:
    """What the row of `edit` shows (`original`: the edit it undid, if any)."""
    store = jobs_store()
    if edit.undo_of and original is None:
        original = store.get(edit.undo_of)
    undone = store.get(edit.undone_by) if edit.undone_by else None
    return {
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
        "row_url": url_for("activity.row", project_id=project.id, edit_id=edit.id),
        # Its job, or the job undoing it, still runs: the row draws itself again when a job
        # ends.
        "refresh": edit.active or (undone is not None and undone.active),
        "download_url": url_for("export.job_file", project_id=project.id, edit_id=edit.id)
        if edit.kind == "export" and edit.state == "done" and edit.file else None,
    }


def import_entry(record: ImportRecord, now: datetime) -> dict:
    """What the row of an import shows: when, who started it, the file, its counts in words,
    its state."""
    counts = (f"{record.added:,} added, {record.present:,} already present, "
              f"{record.rejected:,} rejected")
    if record.tagged_by_rules:
        counts += f"; rules tagged {record.tagged_by_rules:,}"
    return {"record": record, "when": _moment(record.created_at.timestamp(), now),
            "who": record.by or "A removed administrator", "counts": counts,
            "state": IMPORT_STATES.get(record.state, record.state)}


def activity_row(project, edit, focus: bool = False, oob: bool = False) -> Markup:
    """The row of `edit` alone (HTML); `focus`: its status takes the focus once swapped in;
    `oob`: it replaces the row with its id (an out-of-band swap)."""
    entry = entry_of(project, edit, datetime.now(UTC))
    return Markup(render_template(  # noqa: S704 (rendered, so escaped)
        "activity/_row.html", project=project, entry=entry, focus=focus, oob=oob))


def undo_answer(project, original, undone) -> str:
    """After Undo on the activity page: the undo's row first in the list, the undone edit's
    row drawn again (no Undo any more), and the sentence for the notice area; the new row's
    status takes the focus (the pressed button is gone). A row whose job runs draws itself
    again when the job ends."""
    return render_template(
        "activity/_undone.html", project=project,
        new_row=activity_row(project, undone, focus=True),
        old_row=activity_row(project, jobs_store().get(original.id), oob=True),
        sentence=wording.what_undo_did(undone, original) if not undone.active
        else "Undoing in the background: its progress is shown in the list")
