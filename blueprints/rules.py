"""Rules: tags that apply themselves — to every query that matches when the rule is saved (a
job, with progress, Cancel and Undo, as bulk edits), and to every query that enters the
project (the service, on import). Reached through the API's rules extension; without it
there is no Rules page.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from flask_login import login_required
from werkzeug.datastructures import MultiDict

from dashboard import apiclient, wording
from dashboard.current_project import load_project
from dashboard.edits import start_filter_edit, start_rule_job, unfinished_panels
from dashboard.filter_fields import by_ids
from dashboard.htmx import htmx_response, wants_partial
from dashboard.refusals import is_about, refusal
from dashboard.rows import chip_html, rows_for
from dashboard.rules import (
    MAX_PATTERN,
    condition_words,
    read_form,
    rule_words,
    view_of_condition,
)
from dashboard.viewstate import QueryView
from jobs.deltas import Delta
from queryapi import Conflict, InvalidRequest, NotFound, Project, QueryFilters, Rule

bp = Blueprint("rules", __name__)


@bp.app_context_processor
def rules_tab() -> dict:
    """Whether a project's pages link to its Rules (asked only where a project is shown)."""
    return {"offers_rules": lambda: apiclient.capabilities().rules}


def _project(project_id: str) -> Project:
    """The project, where the API offers rules (else 404: none of these pages exist)."""
    project = load_project(project_id)
    if not apiclient.capabilities().rules:
        abort(404)
    return project


def _view_of(form) -> QueryView:
    query_string = (form.get("view") or "").lstrip("?")[:4000]
    return QueryView.from_args(MultiDict(parse_qs(query_string)))


def _rule(project_id: str, rule_id: int) -> Rule:
    rule = next((r for r in apiclient.client().list_rules(project_id) if r.id == rule_id), None)
    if rule is None:
        abort(404)
    return rule


def _apply(project, rule: Rule, tags, count: int):
    """The rule's tags given to every query it matches now that lacks them: a job, which the
    service runs a part at a time where it can (rules/apply), else a bulk edit of the rule's
    view."""
    by_id = {tag.id: tag for tag in tags}
    delta = Delta(add=frozenset(rule.tag_ids))
    names = {str(i): by_id[i].name for i in rule.tag_ids if i in by_id}
    words = f"matching rule “{rule.name}”"
    if apiclient.capabilities().rule_apply:
        return start_rule_job(project, "rule", {"ruleId": rule.id, "ruleName": rule.name},
                              delta, names, count, words)
    return start_filter_edit(project, rule.condition, delta, names, count, words)


# --- the list --------------------------------------------------------------------------------


@bp.get("/projects/<project_id>/rules")
@login_required
def index(project_id: str):
    project = _project(project_id)
    tags = apiclient.tags(project.id)
    by_id = {tag.id: tag for tag in tags}
    rules = [{
        "rule": rule,
        "words": rule_words(rule, tags),
        "chips": [chip_html(by_id[i].name, by_id[i].color) for i in rule.tag_ids if i in by_id],
        "matching": wording.count(rule.matching),
        "carrying": f"{rule.carrying:,}",
    } for rule in apiclient.client().list_rules(project.id)]
    return render_template("rules/index.html", project=project, section="rules", rules=rules,
                           jobs=unfinished_panels(project),
                           removes_tags=apiclient.capabilities().rule_apply,
                           new_url=url_for("rules.new", project_id=project.id),
                           page_title=f"Rules · {project.name} · Tagdesk")


# --- a new rule, or a changed one: form, preview, save ----------------------------------------


def _form_page(project, view: QueryView, rule: Rule | None = None, form=None, preview=None,
               problems=(), status: int = 200, pattern_problem: str = ""):
    """The form; `pattern_problem`: the sentence (among `problems`) about the pattern, said
    under the field too, which is marked invalid."""
    tags = apiclient.tags(project.id)
    chosen = set(rule.tag_ids) if rule and form is None else {
        tag.id for tag in tags if form is not None and tag.name in form.getlist("add")}
    context = {
        "project": project, "section": "rules", "rule": rule, "view": view,
        "condition": condition_words(by_ids(view.filters, tags), tags),
        "name": (form.get("name") if form is not None else (rule.name if rule else "")) or "",
        "pattern": (form.get("pattern") if form is not None
                    else (rule.condition.pattern if rule else "")) or "",
        "tag_options": [(tag, chip_html(tag.name, tag.color, description=tag.description),
                         tag.id in chosen) for tag in tags],
        "preview": preview, "problems": problems, "pattern_problem": pattern_problem,
        "page_title": (f"Edit {rule.name}" if rule else "New rule")
        + f" · {project.name} · Tagdesk",
    }
    if wants_partial() and request.method == "POST":
        return htmx_response(render_template("rules/_form_body.html", **context),
                             retarget="#rule-form-body", reswap="outerHTML")
    return render_template("rules/form.html", **context), status


@bp.get("/projects/<project_id>/rules/new")
@login_required
def new(project_id: str):
    """Make a rule from a queries view (its address's parameters)."""
    project = _project(project_id)
    return _form_page(project, QueryView.from_args(request.args))


@bp.get("/projects/<project_id>/rules/<int:rule_id>/edit")
@login_required
def edit(project_id: str, rule_id: int):
    project = _project(project_id)
    rule = _rule(project.id, rule_id)
    return _form_page(project, view_of_condition(rule.condition, apiclient.tags(project.id)),
                      rule)


def _preview(project, condition: QueryFilters, tag_ids, tags, rule: Rule | None):
    found = apiclient.client().preview_rule(project.id, condition, tag_ids)
    by_id = {tag.id: tag for tag in tags}
    lack = "lacks" if found.lacking == 1 else "lack"
    sentence = (f"This rule matches {wording.count(found.matching)}; "
                f"{found.lacking:,} of them {lack} its tags.")
    if rule is not None:
        sentence = (f"Now it matches {wording.count(rule.matching)}; changed, it would match "
                    f"{wording.count(found.matching)}, and {found.lacking:,} of them {lack} "
                    "its tags.")
    return {"sentence": sentence, "rows": rows_for(tuple(found.sample), by_id),
            "lacking": found.lacking}


def _submitted(project, rule: Rule | None):
    tags = apiclient.tags(project.id)
    view = _view_of(request.form)
    form = read_form(request.form, view, tags)
    if form.problems:
        too_long = next((p for p in form.problems if len(form.pattern) > MAX_PATTERN
                         and p.startswith("A pattern ")), "")
        return _form_page(project, view, rule, request.form, problems=form.problems,
                          status=422, pattern_problem=too_long)
    condition = form.condition(tags)
    try:
        if request.form.get("step") == "preview":
            return _form_page(project, view, rule, request.form,
                              preview=_preview(project, condition, form.tag_ids, tags, rule))
        preview = apiclient.client().preview_rule(project.id, condition, form.tag_ids)
        client = apiclient.client()
        if rule is None:
            saved = client.create_rule(project.id, form.name, condition, form.tag_ids)
        else:
            saved = client.update_rule(project.id, rule.id, name=form.name,
                                       condition=condition, tag_ids=form.tag_ids)
    except (InvalidRequest, Conflict) as error:
        sentence = refusal(error)
        # The API names the field it refuses: the pattern's sentence goes under the pattern.
        about_pattern = is_about(error, "pattern")
        return _form_page(project, view, rule, request.form, problems=(sentence,),
                          status=422, pattern_problem=sentence if about_pattern else "")
    except NotFound:
        abort(404)
    message = f"Saved the rule “{saved.name}”."
    if preview.lacking:
        _apply(project, saved, tags, preview.lacking)
        lack = "lacks" if preview.lacking == 1 else "lack"
        message += (f" Adding its tags to the {wording.count(preview.lacking)} that {lack} "
                    "them: while that runs its progress shows here, and the activity log "
                    "keeps it, with Undo.")
    else:
        message += " Every query it matches has its tags already."
    flash(message, "success")
    target = url_for("rules.index", project_id=project.id)
    return htmx_response("", redirect=target) if wants_partial() else redirect(target)


@bp.post("/projects/<project_id>/rules")
@login_required
def create(project_id: str):
    project = _project(project_id)
    return _submitted(project, None)


@bp.post("/projects/<project_id>/rules/<int:rule_id>")
@login_required
def update(project_id: str, rule_id: int):
    project = _project(project_id)
    return _submitted(project, _rule(project.id, rule_id))


# --- pause, resume, delete --------------------------------------------------------------------


@bp.post("/projects/<project_id>/rules/<int:rule_id>/pause")
@login_required
def pause(project_id: str, rule_id: int):
    project = _project(project_id)
    rule = _rule(project.id, rule_id)
    paused = request.form.get("paused") != "0"
    apiclient.client().pause_rule(project.id, rule.id, paused)
    flash(f"Paused the rule “{rule.name}”: it adds nothing until it is resumed." if paused
          else f"Resumed the rule “{rule.name}”: it tags the queries that enter from now on.",
          "success")
    return redirect(url_for("rules.index", project_id=project.id))


@bp.post("/projects/<project_id>/rules/<int:rule_id>/delete")
@login_required
def delete(project_id: str, rule_id: int):
    project = _project(project_id)
    rule = _rule(project.id, rule_id)
    if request.form.get("remove_tags") == "1" and apiclient.capabilities().rule_apply:
        tags = {tag.id: tag for tag in apiclient.tags(project.id)}
        names = {str(i): tags[i].name for i in rule.tag_ids if i in tags}
        start_rule_job(project, "rule-removal", {"ruleId": rule.id, "ruleName": rule.name,
                                                 "deleteRule": True},
                       Delta(remove=frozenset(rule.tag_ids)), names, rule.carrying,
                       f"that the rule “{rule.name}” added")
        flash(f"Removing the tags the rule “{rule.name}” added, then deleting it: while that "
              "runs its progress shows here, and the activity log keeps it, with Undo.",
              "success")
        return redirect(url_for("rules.index", project_id=project.id))
    apiclient.client().delete_rule(project.id, rule.id)
    flash(f"Deleted the rule “{rule.name}”. The tags it added stay.", "success")
    return redirect(url_for("rules.index", project_id=project.id))
