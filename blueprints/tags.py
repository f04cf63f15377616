"""A project's tags as coloured chips, each leading to the queries that have it; where the
API offers it (extensions, learned once per session), each tag's **Edit** (name, colour,
description) and **Merge** (into another tag, with Undo).

One `tags/list` call per view (every tag, so the name filter works on the full list and the
session's tag cache is refreshed with it on the way).
"""

from __future__ import annotations

from flask import (
    Blueprint,
    abort,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import login_required

from dashboard import apiclient, wording
from dashboard.counts import counts_response, every_count
from dashboard.current_project import load_project
from dashboard.edits import jobs_store, who
from dashboard.htmx import wants_partial
from dashboard.refusals import refusal
from dashboard.rows import chip_html
from dashboard.viewstate import QueryView, TagView
from queryapi import (
    ApiError,
    AuthError,
    Conflict,
    InvalidRequest,
    NotFound,
    QueryFilters,
    Tag,
)
from weblib.colors import colour_code, colour_field
from weblib.tag_names import fold_tag_name
from weblib.text_rules import has_forbidden_character

bp = Blueprint("tags", __name__)


def count_text(shown: int, total: int, filtered: bool) -> str:
    noun = "tag" if total == 1 else "tags"
    if filtered:
        return f"{shown:,} of {total:,} {noun}"
    return f"{total:,} {noun}"


@bp.get("/projects/<project_id>/tags")
@login_required
def index(project_id: str):
    project = load_project(project_id)
    view = TagView.from_args(request.args)
    every = apiclient.store_tags(project.id, list(apiclient.client().iter_tags(project.id)))
    needle = fold_tag_name(view.name)
    shown = [tag for tag in every if needle in fold_tag_name(tag.name)] if needle else every
    queries_url = url_for("queries.index", project_id=project.id)
    counted = _counts_now(project.id) if shown else None
    tags = [{
        "id": tag.id,
        "name": tag.name,
        "description": tag.description,
        "link": chip_html(tag.name, tag.color, description=tag.description,
                          href=queries_url + QueryView(QueryFilters(tag_names=(tag.name,)))
                          .query_string()),
        "count": None if counted is None else wording.count(counted.get(tag.id, 0)),
    } for tag in shown]
    offered = apiclient.capabilities()
    title = (f"“{view.name}” – " if view.name else "") + f"Tags · {project.name} · Tagdesk"
    context = {
        "project": project,
        "section": "tags",
        "view": view,
        "tags": tags,
        "count_text": count_text(len(shown), len(every), bool(needle)),
        # Without counts drawn with the page, they load after it.
        "counts_url": None if counted is not None
        else url_for("tags.counts", project_id=project.id) + view.query_string(),
        "page_title": title,
        "editing": offered.tag_editing,
        "merging": offered.tag_merging and len(every) > 1,
        "merged": session.pop(_merged_key(project.id), None),
    }
    if wants_partial():
        response = make_response(render_template("tags/partial.html", **context))
        response.headers["HX-Push-Url"] = (url_for("tags.index", project_id=project.id)
                                           + view.query_string())
        return response
    return render_template("tags/index.html", **context)


def _counts_now(project_id: str) -> dict[int, int] | None:
    """Every tag's number of queries, drawn with the page where one facets call counts them
    all, so that nothing in the list moves when they come; None without facets, or when the
    service could not say just now (they load after the page then, one call a tag)."""
    if not apiclient.capabilities().tag_logic:
        return None
    try:
        return dict(apiclient.client().facets(project_id, QueryFilters()).tags)
    except AuthError:
        raise
    except ApiError:
        return None


@bp.get("/projects/<project_id>/tags/counts")
@login_required
def counts(project_id: str):
    """Each shown tag's number of queries, one more per request (dashboard/counts.py); the
    tags from the session's cache (no call for them)."""
    project = load_project(project_id)
    view = TagView.from_args(request.args)
    needle = fold_tag_name(view.name)
    client = apiclient.client()
    shown = [tag for tag in apiclient.tags(project.id) if needle in fold_tag_name(tag.name)]
    if apiclient.capabilities().tag_logic:
        # The facets of the whole project count every tag in one call.
        counted = dict(client.facets(project.id, QueryFilters()).tags)
        return every_count([(f"t-{tag.id}", counted.get(tag.id, 0)) for tag in shown])
    wanted = [(f"t-{tag.id}",
               lambda tag=tag: client.list_queries(project.id, QueryFilters(tag_ids=(tag.id,)),
                                                   limit=1).page.total_records)
              for tag in shown]
    return counts_response(wanted, url_for("tags.counts", project_id=project.id)
                           + view.query_string())


# --- edit and merge (extensions) ---------------------------------------------------------------

MAX_NAME = 200
MAX_DESCRIPTION = 300


def _merged_key(project_id: str) -> str:
    """Where the session keeps a merge just made, for the Tags page to offer its Undo once."""
    return f"tag-merged:{project_id}"


def _offered_tag(project_id: str, tag_id: int, extension: str):
    """(the project, its tag `tag_id`) for a page of an extension (`extension`, a field of
    `Capabilities`): 404 where the deployment does not offer it or the tag is not there."""
    project = load_project(project_id)
    if not getattr(apiclient.capabilities(), extension):
        abort(404)
    tag = next((t for t in apiclient.tags(project.id, refresh=True) if t.id == tag_id), None)
    if tag is None:
        abort(404)
    return project, tag


def _tags_page(project_id: str):
    return redirect(url_for("tags.index", project_id=project_id))


def read_tag_form(form) -> tuple[dict, dict[str, str]]:
    """The edit form's name, colour and description, and what is wrong with each field
    ("name", "color", "description"), in sentences (the API's own rules, checked here first
    so the person reads them at once)."""
    name = form.get("name", "").strip()
    colour = form.get("color", "").strip()
    description = form.get("description", "").strip()
    problems = {}
    if not name:
        problems["name"] = "Give the tag a name."
    elif len(name) > MAX_NAME:
        problems["name"] = (f"A tag's name can have at most {MAX_NAME} characters; this one "
                            f"has {len(name):,}.")
    if colour_code(colour) is None:
        problems["color"] = ("The colour is # followed by six hexadecimal digits, such as "
                             "#1f77b4.")
    if len(description) > MAX_DESCRIPTION:
        problems["description"] = (f"A description can have at most {MAX_DESCRIPTION} "
                                   f"characters; this one has {len(description):,}.")
    for what, value in (("name", name), ("description", description)):
        if has_forbidden_character(value) and what not in problems:
            problems[what] = (f"The {what} cannot contain tabs, line breaks or other control "
                              "characters.")
    return {"name": name, "color": colour_code(colour) or colour, "description": description}, \
        problems


def _edit_page(project, tag: Tag, values: dict, problems: dict[str, str], status: int = 200,
               twin: Tag | None = None):
    """The edit form; `problems`: what is wrong, by field ("name", "color", "description"; ""
    for the form as a whole), said above the form and under each field; `twin`: the tag
    whose name was typed, offered to merge this one into."""
    page = render_template("tags/edit.html", project=project, tag=tag, values=values,
                           colour=colour_field(values["color"]), invalid=problems,
                           problems=list(problems.values()), section="tags", twin=twin,
                           merging=twin is not None and apiclient.capabilities().tag_merging,
                           page_title=f"Edit {tag.name} · Tags · {project.name} · Tagdesk")
    return page, status


@bp.route("/projects/<project_id>/tags/<int:tag_id>/edit", methods=["GET", "POST"])
@login_required
def edit(project_id: str, tag_id: int):
    """Edit a tag's name, colour and description (tags/update)."""
    project, tag = _offered_tag(project_id, tag_id, "tag_editing")
    if request.method == "GET":
        return _edit_page(project, tag, {"name": tag.name, "color": tag.color,
                                         "description": tag.description or ""}, {})
    values, problems = read_tag_form(request.form)
    if problems:
        return _edit_page(project, tag, values, problems, 422)
    try:
        saved = apiclient.client().update_tag(
            project.id, tag.id, name=values["name"], color=values["color"],
            description=values["description"] or None,
            clear_description=not values["description"])
    except Conflict:
        existing = next((t for t in apiclient.tags(project.id, refresh=True)
                         if fold_tag_name(t.name) == fold_tag_name(values["name"])), tag)
        return _edit_page(project, tag, values, {"name": (
            f"This project already has a tag named “{existing.name}” (names are compared as "
            "they read: capital letters and invisible characters make no difference). Choose "
            "another name, or merge this tag into it.")}, 409,
            twin=existing if existing.id != tag.id else None)
    except InvalidRequest as error:
        return _edit_page(project, tag, values, {"": f"The service did not accept it: "
                                                     f"{refusal(error)}"}, 422)
    except NotFound:
        abort(404)
    apiclient.invalidate(project.id)
    if (saved.name, saved.color, saved.description) != (tag.name, tag.color, tag.description):
        jobs_store().record_finished(
            [], project_id=project.id, kind="tag-edit", scope="project",
            scope_words=(f"renamed from “{tag.name}”" if saved.name != tag.name else ""),
            tag_names={str(saved.id): saved.name}, **who())
    flash(f"Saved the tag “{saved.name}”.", "success")
    return _tags_page(project.id)


@bp.route("/projects/<project_id>/tags/<int:tag_id>/merge", methods=["GET", "POST"])
@login_required
def merge(project_id: str, tag_id: int):
    """Merge a tag into another (tags/merge): one step, with Undo on the Tags page after."""
    project, tag = _offered_tag(project_id, tag_id, "tag_merging")
    others = [t for t in apiclient.tags(project.id) if t.id != tag.id]
    problems: list[str] = []
    chosen = request.values.get("into", "")
    if request.method == "POST":
        into = next((t for t in others if str(t.id) == request.form.get("into", "")), None)
        if into is None:
            problems.append("Choose the tag to merge it into.")
        else:
            try:
                done = apiclient.client().merge_tag(project.id, tag.id, into.id)
            except (InvalidRequest, Conflict) as error:
                problems.append(f"The service did not merge it: {refusal(error)}")
            except NotFound:
                problems.append("One of the two tags is gone (someone changed the tags "
                                "meanwhile). Please go back to the tags and try again.")
            else:
                apiclient.invalidate(project.id)
                record = jobs_store().record_finished(
                    [], project_id=project.id, kind="tag-merge", scope="project",
                    delta={"operation": done.operation, "merged": tag.id, "into": into.id},
                    tag_names={str(tag.id): tag.name, str(into.id): into.name},
                    changed=done.queries, processed=done.queries, total=done.queries,
                    **who())
                session[_merged_key(project.id)] = {
                    "edit": record.id, "name": tag.name, "into": into.name,
                    "queries": done.queries}
                return _tags_page(project.id)
    options = [{"tag": t, "chip": chip_html(t.name, t.color, description=t.description)}
               for t in others]
    page = render_template("tags/merge.html", project=project, tag=tag, options=options,
                           problems=problems, section="tags",
                           chosen=chosen,
                           page_title=f"Merge {tag.name} · Tags · {project.name} · Tagdesk")
    return page, 422 if problems else 200


@bp.post("/projects/<project_id>/tags/unmerge")
@login_required
def unmerge(project_id: str):
    """Undo a merge made in Tagdesk: the tag back with its id and its queries as they were."""
    project = load_project(project_id)
    record = jobs_store().get(request.form.get("edit", ""))
    if (record is None or record.project_id != project.id or record.kind != "tag-merge"
            or not isinstance(record.delta, dict)):
        abort(404)
    names = record.tag_names or {}
    name = names.get(str(record.delta.get("merged")), "the tag")
    if record.undone_by:
        flash(f"That merge of “{name}” was undone already.", "info")
        return _tags_page(project.id)
    try:
        done = apiclient.client().unmerge_tag(project.id, str(record.delta.get("operation")))
    except Conflict as error:
        flash(f"The merge of “{name}” was not undone: {error.message}", "error")
        return _tags_page(project.id)
    except NotFound:
        flash(f"The merge of “{name}” can no longer be undone: it was undone already or is "
              "more than a week old.", "error")
        return _tags_page(project.id)
    apiclient.invalidate(project.id)
    undo = jobs_store().record_finished(
        [], project_id=project.id, kind="tag-unmerge", scope="project", undo_of=record.id,
        delta=record.delta, tag_names=names, changed=done.queries, processed=done.queries,
        total=done.queries, **who())
    jobs_store().update(record.id, undone_by=undo.id)
    queries = "1 query" if done.queries == 1 else f"{done.queries:,} queries"
    flash(f"Undone: “{done.restored.name}” is back with its queries as they were ({queries} "
          "changed).", "success")
    return _tags_page(project.id)
