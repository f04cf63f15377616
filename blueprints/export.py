"""Export the current view as CSV: query, language, country, tag names, updated.

Small views (up to EXPORT_STREAM_LIMIT rows) download at once: the response is streamed, page
by page, from a BACKGROUND client (paced to the rate limits), so memory stays flat. Larger
ones run as an export job with a progress bar; its file (instance/exports/, readable by the
dashboard only) is downloaded when it is done. Without JavaScript the Export link always
streams.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    render_template,
    request,
    send_file,
    stream_with_context,
    url_for,
)
from flask_login import login_required

from dashboard import apiclient, wording
from dashboard.current_project import load_project
from dashboard.edits import job_panel, jobs_store, project_and_edit, runner, who
from dashboard.htmx import htmx_response
from dashboard.viewstate import QueryView
from jobs.export import csv_pages, export_sort
from jobs.store import process_owner
from queryapi import Mode

bp = Blueprint("export", __name__)

SLUG = re.compile(r"[^A-Za-z0-9]+")


def export_folder() -> Path:
    return Path(current_app.instance_path) / "exports"


def filename(project, suffix: str = "") -> str:
    slug = SLUG.sub("-", project.name).strip("-").lower()[:60] or "project"
    return f"{slug}-queries-{datetime.now(UTC):%Y-%m-%d}{suffix}.csv"


@bp.get("/projects/<project_id>/export.csv")
@login_required
def download(project_id: str):
    """The view as CSV, streamed as it is read."""
    project = load_project(project_id)
    view = QueryView.from_args(request.args)
    numbers = apiclient.capabilities().numbers  # a column each
    client = apiclient.client().with_mode(Mode.BACKGROUND)
    try:
        names = {tag.id: tag.name for tag in client.iter_tags(project.id)}
    except BaseException:
        client.close()
        raise

    def generate():
        try:
            yield from csv_pages(client, project.id, view.filters,
                                 export_sort(view.api_sort()), names, numbers=numbers)
        finally:
            client.close()

    return Response(stream_with_context(generate()), mimetype="text/csv",
                    headers={"Content-Disposition":
                             f'attachment; filename="{filename(project)}"'})


@bp.post("/projects/<project_id>/export")
@login_required
def start(project_id: str):
    """With JavaScript: small views download at once; large ones become a job with progress."""
    project = load_project(project_id)
    view = QueryView.from_args(request.form)
    total = apiclient.client().list_queries(project.id, view.filters, page=1,
                                            limit=1).page.total_records
    if total <= int(current_app.config.get("EXPORT_STREAM_LIMIT", 5000)):
        return htmx_response("", redirect=url_for("export.download", project_id=project.id)
                             + view.query_string())
    store = jobs_store()
    edit = store.create(
        project_id=project.id, kind="export", scope="filter", scope_filter=view.filters.to_body(),
        scope_words=wording.matching(view.filters), sort=[list(item) for item in
                                                  export_sort(view.api_sort())],
        state="queued", expected=total, total=total, owner=process_owner(), **who())
    runner().submit(edit.id)
    return render_template("bulk/_job_started.html", panel=job_panel(project, store.get(edit.id)),
                           notice=f"Exporting {wording.count(total)} in the background: "
                                  "the download appears above the list when it is ready.")


@bp.get("/projects/<project_id>/jobs/<edit_id>/download")
@login_required
def job_file(project_id: str, edit_id: str):
    project, edit = project_and_edit(project_id, edit_id)
    if edit.kind != "export" or edit.state != "done" or not edit.file:
        abort(404)
    path = export_folder() / Path(edit.file).name
    if not path.is_file():
        abort(404)
    return send_file(path, mimetype="text/csv", as_attachment=True,
                     download_name=filename(project), max_age=0)
