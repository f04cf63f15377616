"""Saved views of a project: save the queries view under a name, open, rename, delete.

Kept by the service (an API extension, feature-detected: without it the queries page has no
Saved views section). Every form works without JavaScript (it answers with the queries page
again); with htmx, the section alone is drawn again, with a sentence of what happened.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import login_required
from werkzeug.datastructures import MultiDict

from dashboard import apiclient
from dashboard.current_project import load_project
from dashboard.htmx import wants_partial
from dashboard.refusals import refusal
from dashboard.saved_views import (
    filters_of,
    name_problem,
    read_views,
    section_context,
    shown,
    view_of,
)
from dashboard.viewstate import QueryView, clean_text
from queryapi import Conflict, NotFound, Project
from weblib.tag_names import fold_tag_name

bp = Blueprint("views", __name__)


def _offered() -> None:
    """Without the API's saved views, none of these pages exist."""
    if not apiclient.capabilities().saved_views:
        abort(404)


def _current(form) -> tuple[str, QueryView]:
    """The queries view the form was sent from (its address's query string)."""
    query_string = (form.get("view") or "").lstrip("?")[:4000]
    view = QueryView.from_args(MultiDict(parse_qs(query_string)))
    return view.query_string(), view


def _opened(project_id: str, values) -> tuple[Project, str, QueryView]:
    """The project (views offered, else 404) and the queries view `values` were sent from."""
    project = load_project(project_id)
    _offered()
    current_qs, view = _current(values)
    return project, current_qs, view


def _posted_name() -> tuple[str, str]:
    """The name the form sent, and what is wrong with it ("" when nothing)."""
    name = clean_text(request.form.get("name") or "", 1000)
    return name, name_problem(name)


def _refused(project, name: str, error: Conflict) -> str:
    """The service's refusal of `name`, in the dashboard's words: a name another view has (as
    tag names compare) names that view in the quotes of every other sentence; any other
    refusal (a project with as many views as it may have) as the service says it."""
    folded = fold_tag_name(name)
    taken = next((item for item in apiclient.client().list_views(project.id)
                  if fold_tag_name(item.name) == folded), None)
    if taken is None:
        return refusal(error)
    return f"A saved view named “{taken.name}” already exists in this project."


def _answer(project, current_qs: str, message: str = "", error: str = "", name: str = "",
            undo: dict | None = None):
    context = section_context(project, current_qs, message, error, name, undo)
    if wants_partial():
        return render_template("queries/_saved_views.html", project=project, **context)
    flash(error or message, "error" if error else "success")
    return redirect(url_for("queries.index", project_id=project.id) + current_qs)


@bp.get("/projects/<project_id>/views")
@login_required
def section(project_id: str):
    """The section again (after an edit changed the counts); opened as a page of its own, the
    queries view it belongs to."""
    project, current_qs, _view = _opened(project_id, request.args)
    if not wants_partial():
        return redirect(url_for("queries.index", project_id=project.id) + current_qs, 303)
    return render_template("queries/_saved_views.html", project=project,
                           **section_context(project, current_qs))


@bp.get("/projects/<project_id>/views/counts")
@login_required
def counts(project_id: str):
    """Each view's count read again (after an edit, a job or an Undo), swapped into its place
    on the page; the rest of the section, a name being typed included, stays as it is."""
    project = load_project(project_id)
    _offered()
    if not wants_partial():
        return redirect(url_for("queries.index", project_id=project.id), 303)
    views = shown(read_views(project.id), apiclient.tags(project.id))
    return render_template("queries/_saved_view_counts.html", saved_views=views)


@bp.post("/projects/<project_id>/views")
@login_required
def create(project_id: str):
    project, current_qs, view = _opened(project_id, request.form)
    name, problem = _posted_name()
    if problem:
        return _answer(project, current_qs, error=problem, name=name)
    try:
        apiclient.client().create_view(project.id, name,
                                       filters_of(view, apiclient.tags(project.id)),
                                       sort=view.api_sort(), columns=_kept_columns(view))
    except Conflict as error:
        return _answer(project, current_qs, error=_refused(project, name, error), name=name)
    return _answer(project, current_qs, message=f"Saved the view “{name}”.")


def _kept_columns(view) -> tuple[str, ...] | None:
    """The view's number columns, where the service keeps numbers (else it has no place for
    them, and the view keeps its filter and order only)."""
    if view.columns is None or not apiclient.capabilities().numbers:
        return None
    return view.columns


@bp.post("/projects/<project_id>/views/<int:view_id>/rename")
@login_required
def rename(project_id: str, view_id: int):
    project, current_qs, _view = _opened(project_id, request.form)
    name, problem = _posted_name()
    if problem:
        return _answer(project, current_qs, error=problem)
    try:
        apiclient.client().rename_view(project.id, view_id, name)
    except NotFound:
        abort(404)
    except Conflict as error:
        return _answer(project, current_qs, error=_refused(project, name, error))
    return _answer(project, current_qs, message=f"Renamed the view to “{name}”.")


@bp.post("/projects/<project_id>/views/<int:view_id>/delete")
@login_required
def delete(project_id: str, view_id: int):
    """Delete a view; the sentence that says so offers Undo (saving it again as it was)."""
    project, current_qs, _view = _opened(project_id, request.form)
    client = apiclient.client()
    gone = next((item for item in client.list_views(project.id) if item.id == view_id), None)
    if gone is None:
        abort(404)
    client.delete_view(project.id, view_id)
    undo = {"name": gone.name,
            "view": view_of(gone, apiclient.tags(project.id)).query_string()}
    return _answer(project, current_qs, message=f"Deleted the view “{gone.name}”.", undo=undo)
