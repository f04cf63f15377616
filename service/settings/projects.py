"""Organization settings → Projects: the organization's projects with their numbers of
queries; a new project; a project's page with its name (rename) and its tags, each with the
number of queries that carry it; a new tag, a tag's edit, and its deletion after a
confirmation that says how many queries carry it.

Another organization's project or tag is 404, whatever the id. After a change the page
redirects (303) with the id of its activity-log record in the address, and shows it as a
notice only to the person who made it; names travel only in that record, never in the URL.
The changes themselves, and their rules, are in project_changes.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import abort, g, make_response, redirect, render_template, request, url_for

from weblib.colors import colour_code, colour_field

from ..store.db import get_session
from ..store.models import OrgEvent, Project
from . import project_changes as changes
from .forms import ConfirmForm
from .project_forms import EditTagForm, ProjectForm, TagForm
from .views import bp, signin_required

SECTION = "projects"
T = TypeVar("T")

NOTICES = {
    "project.created": "The project “{subject}” is created. You can add its tags below.",
    "project.renamed": "The project is renamed “{subject}”.",
    "tag.created": "The tag “{subject}” is created.",
    "tag.edited": "The tag “{subject}” is saved.",
    "tag.deleted": "The tag “{subject}” is deleted. {detail}",
    "tag.merged": "The tag “{subject}” is merged. {detail}",
    "tag.unmerged": "The merge of “{subject}” is undone: it is back. {detail}",
}


def _notice() -> str | None:
    done = request.args.get("done", "")
    event_id = int(done) if done.isascii() and done.isdigit() and len(done) < 12 else None
    event = changes.own_event(get_session(), g.user.org_id, g.user.id, event_id)
    if event is None or event.action not in NOTICES:
        return None
    return NOTICES[event.action].format(subject=event.subject, detail=event.detail).strip()


def signed_in_project(project_id: str) -> Project:
    """A project of the signed-in person's organization; any other id is 404."""
    project = changes.org_project(get_session(), g.user.org_id, project_id)
    if project is None:
        abort(404)
    return project


def _tag(project: Project, tag_id: int):
    tag = changes.project_tag(get_session(), project, tag_id)
    if tag is None:
        abort(404)
    return tag


def _change(form, change: Callable[[], T], again: Callable[[object], tuple]) -> T:
    """A change asked for by a posted `form`: what `change()` (a project_changes function)
    returns. An invalid form, or a change refused (its sentence under the name field), answers
    `again(form)` instead: the page with the form, as the database has it now (400). A project
    or tag gone meanwhile is 404."""
    if form.validate():
        try:
            return change()
        except LookupError:
            abort(404)
        except changes.Refused as refusal:
            form.name.errors = [str(refusal)]
    abort(make_response(again(form)))


# --- the organization's projects ----------------------------------------------------------------


def _projects_page(form: ProjectForm, status: int = 200):
    rows = changes.projects_with_counts(get_session(), g.user.org_id)
    return render_template("settings/projects.html", section=SECTION, rows=rows, form=form), \
        status


@bp.get("/projects")
@signin_required
def projects():
    return _projects_page(ProjectForm(formdata=None))


@bp.post("/projects")
@signin_required
def create_project():
    form = ProjectForm()
    project_id, event = _change(form, lambda: changes.create_project(
        get_session(), g.user.org_id, g.user.id, *form.values()),
        lambda form: _projects_page(form, 400))
    return redirect(url_for("settings.project", project_id=project_id, done=event.id), 303)


# --- one project: its name and its tags -----------------------------------------------------


def _project_page(project: Project, rename_form: ProjectForm | None = None,
                  tag_form: TagForm | None = None, status: int = 200, notice=None,
                  undo: str | None = None, error: str | None = None):
    db = get_session()
    if rename_form is None:
        rename_form = ProjectForm(formdata=None, data={"name": project.name})
    if tag_form is None:
        tag_form = TagForm(formdata=None,
                           data={"name": "", "color": changes.suggested_colour(db, project)})
    return render_template(
        "settings/project.html", section=SECTION, project=project,
        tags=changes.project_tags(db, project), query_count=changes.query_count(db, project),
        rename_form=rename_form, tag_form=tag_form,
        colour=colour_field(tag_form.color.data), notice=notice, undo=undo, error=error), status


@bp.get("/projects/<project_id>")
@signin_required
def project(project_id: str):
    project = signed_in_project(project_id)
    operation = request.args.get("undo", "")
    undo = operation if changes.pending_merge(get_session(), project, operation) else None
    return _project_page(project, notice=_notice(), undo=undo)


def _posted_on_project_page(project_id: str, form: ProjectForm | TagForm, form_name: str,
                            change: Callable[..., OrgEvent | None], anchor=None):
    """A change posted by a form of the project's page (`form_name`: its argument of
    _project_page): `change` (a function of project_changes) made with the form's values,
    then back to the page with the change's notice."""
    project = signed_in_project(project_id)
    event = _change(form, lambda: change(get_session(), g.user.org_id, project.id, g.user.id,
                                         *form.values()),
                    lambda form: _project_page(signed_in_project(project_id), status=400,
                                               **{form_name: form}))
    return redirect(url_for("settings.project", project_id=project.id,
                            done=event.id if event else None, _anchor=anchor), 303)


@bp.post("/projects/<project_id>/rename")
@signin_required
def rename_project(project_id: str):
    return _posted_on_project_page(project_id, ProjectForm(), "rename_form",
                                   changes.rename_project)


@bp.post("/projects/<project_id>/tags")
@signin_required
def create_tag(project_id: str):
    return _posted_on_project_page(project_id, TagForm(), "tag_form", changes.create_tag,
                                   anchor="tags")


# --- one tag: edit, delete --------------------------------------------------------------------


def _edit_page(project: Project, tag, form: TagForm, status: int = 200):
    return render_template("settings/tag_edit.html", section=SECTION, project=project,
                           tag=tag, form=form, colour=colour_field(form.color.data),
                           carriers=changes.carriers(get_session(), project, tag)), status


def _edit_again(project_id: str, tag_id: int, form: TagForm):
    project = signed_in_project(project_id)
    return _edit_page(project, _tag(project, tag_id), form, 400)


@bp.route("/projects/<project_id>/tags/<id:tag_id>/edit", methods=["GET", "POST"])
@signin_required
def edit_tag(project_id: str, tag_id: int):
    project = signed_in_project(project_id)
    tag = _tag(project, tag_id)
    if request.method == "GET":
        form = EditTagForm(formdata=None, data={"name": tag.name, "color": tag.color.lower(),
                                                "description": tag.description or ""})
        return _edit_page(project, tag, form)
    form = EditTagForm()
    event = _change(form, lambda: changes.edit_tag(
        get_session(), g.user.org_id, project.id, tag.id, g.user.id, *form.values()),
        lambda form: _edit_again(project_id, tag_id, form))
    return redirect(url_for("settings.project", project_id=project.id,
                            done=event.id if event else None, _anchor="tags"), 303)


@bp.route("/projects/<project_id>/tags/<id:tag_id>/delete", methods=["GET", "POST"])
@signin_required
def delete_tag(project_id: str, tag_id: int):
    project = signed_in_project(project_id)
    tag = _tag(project, tag_id)
    form = ConfirmForm()
    if request.method == "GET":
        return render_template("settings/tag_delete.html", section=SECTION, project=project,
                               tag=tag, form=form,
                               carriers=changes.carriers(get_session(), project, tag))
    try:
        event = changes.delete_tag(get_session(), g.user.org_id, project.id, tag.id,
                                   g.user.id)
    except changes.Busy as busy:
        project = signed_in_project(project_id)
        tag = _tag(project, tag_id)
        return render_template("settings/tag_delete.html", section=SECTION, project=project,
                               tag=tag, form=form, error=str(busy),
                               carriers=changes.carriers(get_session(), project, tag)), 409
    if event is None:  # deleted by someone else in the meantime
        abort(404)
    return redirect(url_for("settings.project", project_id=project.id, done=event.id,
                            _anchor="tags"), 303)


@bp.route("/projects/<project_id>/tags/<id:tag_id>/merge", methods=["GET", "POST"])
@signin_required
def merge_tag(project_id: str, tag_id: int):
    project = signed_in_project(project_id)
    tag = _tag(project, tag_id)
    others = [row for row in changes.project_tags(get_session(), project) if row.id != tag.id]
    error = None
    if request.method == "POST":
        chosen = request.form.get("into", "")
        into = next((row for row in others if str(row.id) == chosen), None)
        if into is None:
            error = "Choose the tag to merge it into."
        else:
            try:
                event, operation = changes.merge_tag(get_session(), g.user.org_id, project.id,
                                                     tag.id, into.id, g.user.id)
            except changes.Busy as busy:
                error = str(busy)
            except LookupError:
                abort(404)
            else:
                return redirect(url_for("settings.project", project_id=project.id,
                                        done=event.id, undo=operation, _anchor="tags"), 303)
        project = signed_in_project(project_id)
        tag = _tag(project, tag_id)
    return render_template("settings/tag_merge.html", section=SECTION, project=project,
                           tag=tag, others=others, error=error,
                           carriers=changes.carriers(get_session(), project, tag)), \
        400 if error else 200


@bp.post("/projects/<project_id>/tags/unmerge")
@signin_required
def unmerge_tag(project_id: str):
    project = signed_in_project(project_id)
    try:
        event = changes.unmerge_tag(get_session(), g.user.org_id, project.id,
                                    request.form.get("operation", ""), g.user.id)
    except LookupError:
        abort(404)
    except changes.Refused as refused:
        return _project_page(signed_in_project(project_id), status=409, notice=None,
                             undo=None, error=str(refused))
    return redirect(url_for("settings.project", project_id=project.id, done=event.id,
                            _anchor="tags"), 303)


@bp.app_template_filter("queries")
def queries(count: int) -> str:
    """“1 query”, “1,234 queries”."""
    return "1 query" if count == 1 else f"{count:,} queries"


@bp.app_template_filter("colour")
def colour(value) -> str | None:
    """A tag's colour as #rrggbb, or None: only a valid colour reaches the page's chips."""
    return colour_code(value)
