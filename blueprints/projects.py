"""The organization's projects; the start page goes where work happens."""

from __future__ import annotations

from dataclasses import astuple

from flask import Blueprint, redirect, render_template, url_for
from flask_login import login_required

from dashboard import apiclient, wording
from dashboard.counts import counts_response
from dashboard.current_project import last_project_id
from dashboard.facets import Progress, project_progress

bp = Blueprint("projects", __name__)

@bp.get("/")
@login_required
def home():
    """A single project, or the last one used: straight to its queries. Otherwise the list."""
    projects = apiclient.projects()
    ids = {project.id for project in projects}
    if len(projects) == 1:
        return redirect(url_for("queries.index", project_id=projects[0].id))
    last = last_project_id()
    if last in ids:
        return redirect(url_for("queries.index", project_id=last))
    return redirect(url_for("projects.index"))


@bp.get("/projects")
@login_required
def index():
    projects = apiclient.projects()
    if len(projects) == 1:
        return redirect(url_for("queries.index", project_id=projects[0].id))
    return render_template("projects/index.html", projects=projects,
                           last_project_id=last_project_id(), section="projects")


@bp.get("/projects/counts")
@login_required
def counts():
    """Each project's number of queries, one more per request (dashboard/counts.py)."""
    client = apiclient.client()
    if apiclient.capabilities().tag_logic:
        # With facets, one call says how many queries there are and how many lack a tag.
        wanted = [(f"p-{project.id}", lambda project=project: list(astuple(
            project_progress(project.id)))) for project in apiclient.projects()]
        return counts_response(wanted, url_for("projects.counts"), describe=progress_of)
    wanted = [(f"p-{project.id}",
               lambda project=project: client.list_queries(project.id, limit=1)
               .page.total_records) for project in apiclient.projects()]
    return counts_response(wanted, url_for("projects.counts"))


def progress_of(numbers) -> Progress | str:
    """A card's progress (drawn by partials/counts.html), or a plain count when it was
    counted before this session learned of facets."""
    if isinstance(numbers, int):
        return wording.count(numbers)
    return Progress(*numbers)
