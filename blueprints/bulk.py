"""Bulk tag editing: the tag picker, in-page edits with Undo, select-all jobs with a confirm
step, progress, Cancel, Resume — all as deltas applied to fresh state.

In-page (the selected rows of the visible page, or one row's quick edit): the request itself
reads the rows' tags afresh (the view re-run: one queries/list call; a row that moved away is
looked up by its exact text, language and country), computes each row's new set, writes the
changed ones in one call (jobs/rewrite.py: what changes, or whole sets under the project's
lease against a service without tags-edit), records the edit, and answers with the changed
rows re-rendered in place (htmx out-of-band swaps) and a sentence with Undo.

Select-all ("all N matching"): the filter — not a list of ids — is confirmed with its real
count and its words, then stored as a job; the job re-runs the filter when it executes
(jobs/walk.py). Its panel polls for progress.

The picker of Add, Replace and Edit also creates tags, when the API offers it (an extension
of the reference, learned once per session): a name no tag has offers "Create tag “…”", which
creates it through the client and draws the picker again with the new tag ticked. A name the
project has already, as names compare (weblib.tag_names: "Brand ", "brand", "Bra\u200bnd" are
"Brand"), creates nothing: the picker says so and offers that tag (**Use “Brand”**).

An edit that would take every tag off the selected rows (Replace with nothing ticked, or Remove
with every tag of the project ticked) is never applied straight away: Apply answers with the
question ("Remove every tag from 3 queries?") and a Confirm that sends the same edit again with a
signed token naming the rows and the change; only a request carrying that token changes them.

Every POST carries the CSRF token (htmx sends it as X-CSRFToken) and re-checks the chosen tags
against the project's own tags.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import (
    Blueprint,
    current_app,
    make_response,
    render_template,
    request,
    url_for,
)
from flask_login import login_required
from itsdangerous import BadSignature, URLSafeTimedSerializer
from markupsafe import Markup

from dashboard import apiclient, wording
from dashboard.activity_log import undo_answer
from dashboard.current_project import load_project
from dashboard.edits import (
    SUGGESTION,
    job_panel,
    jobs_store,
    lock_wait,
    project_and_edit,
    project_and_edit_now,
    runner,
    start_filter_edit,
    who,
)
from dashboard.htmx import htmx_response
from dashboard.refusals import refusal
from dashboard.rows import chip_html, rows_for
from dashboard.undo import UndoRefused, undo_edit
from dashboard.viewstate import QueryView
from jobs.deltas import ADD, EDIT, REMOVE, REPLACE, Delta, RowKey
from jobs.edit import Edit
from jobs.fresh import TooManyMoved, find_rows
from jobs.rewrite import held_for_write, rewrite, write
from jobs.store import LockBusy, new_id, process_owner
from queryapi import (
    Conflict,
    InvalidRequest,
    NotFound,
    QueryFilters,
    RateLimited,
    Tag,
    TransportError,
    Unavailable,
)
from weblib.tag_names import fold_tag_name
from weblib.text_rules import has_forbidden_character

bp = Blueprint("bulk", __name__)

MAX_SELECTED = 1000          # rows of one in-page edit (a page has at most 200)
PLAN_SALT = "tagdesk-bulk-plan"
CLEAR_SALT = "tagdesk-bulk-clear"
PLAN_MAX_AGE = 3600
VERBS = {ADD: "Add tags", REMOVE: "Remove tags", REPLACE: "Replace tags", EDIT: "Edit tags"}
# The pickers that offer to create a tag (a tag made to be removed would make no sense).
CREATING = {ADD, REPLACE, EDIT}
# A new tag's name, as the extension takes it (docs/api.md, "Create a tag").
MAX_TAG_NAME = 200


class Refusal(Exception):
    """A sentence for the person; nothing was changed."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def refused(error: Refusal | UndoRefused):
    """A refusal is a sentence where the person is looking (the picker's message area, or
    the panel or notice whose button was pressed)."""
    return make_response(render_template("bulk/_feedback.html", message=error.message),
                         error.status)


def tag_ids_from(values: list[str]) -> list[int]:
    ids = []
    for value in values:
        value = value.strip()
        if not value.isascii() or not value.isdigit() or len(value) > 12:
            raise Refusal("One of the chosen tags is not a tag of this project, so nothing "
                          "was changed.")
        ids.append(int(value))
    return sorted(set(ids))


def project_tags(project_id: str, wanted: list[int]) -> dict[int, Tag]:
    """The project's tags, checked to include every wanted id (read afresh once if not)."""
    tags = {tag.id: tag for tag in apiclient.tags_covering(project_id, wanted)}
    if any(tag_id not in tags for tag_id in wanted):
        tags = {tag.id: tag for tag in apiclient.tags(project_id, refresh=True)}
    unknown = [tag_id for tag_id in wanted if tag_id not in tags]
    if unknown:
        raise Refusal("One of the chosen tags is not a tag of this project (it may belong to "
                      "another project), so nothing was changed.")
    return tags


def delta_from_form(action: str, chosen: list[int], had: list[int]) -> Delta:
    if action == ADD:
        if not chosen:
            raise Refusal("Choose at least one tag to add.")
        return Delta(add=chosen)
    if action == REMOVE:
        if not chosen:
            raise Refusal("Choose at least one tag to remove.")
        return Delta(remove=chosen)
    if action == REPLACE:
        return Delta(replace=chosen)
    if action == EDIT:
        return Delta(add=set(chosen) - set(had), remove=set(had) - set(chosen))
    raise Refusal("That is not something the tag picker can do.")


def names_of(delta: Delta, tags: dict[int, Tag]) -> dict[str, str]:
    return {str(tag_id): tags[tag_id].name for tag_id in sorted(delta.tag_ids)
            if tag_id in tags}


def selected_keys(values: list[str]) -> list[RowKey]:
    keys: dict[str, RowKey] = {}
    for value in values:
        key = RowKey.parse(value)
        if key is not None:
            keys.setdefault(key.id, key)
    return list(keys.values())


def shown_ids() -> set[str]:
    """Ids of the rows the page shows (undo.js sends them with Undo), so that only rows that
    are there are swapped in."""
    raw = request.form.get("shown", "")
    return {part for part in raw.split(",") if 0 < len(part) <= 255} if raw else set()


def _busy() -> Refusal:
    return Refusal("Someone else is saving changes to this project right now. Nothing was "
                   "changed; please try again in a moment.", 409)


def _moved() -> Refusal:
    return Refusal("Many of the selected queries changed since this page was loaded and moved "
                   "elsewhere. Nothing was changed; please reload the page and try again.",
                   409)


def _plan_serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt=PLAN_SALT)


# --- the tag picker ------------------------------------------------------------------------


@bp.get("/projects/<project_id>/bulk/picker")
@login_required
def picker(project_id: str):
    project = load_project(project_id)
    action = request.args.get("action", "")
    if action not in VERBS:
        raise Refusal("That is not something the tag picker can do.")
    row = None
    had: set[int] = set()
    if action == EDIT:
        row = RowKey.parse(request.args.get("row", ""))
        if row is None:
            raise Refusal("That row could not be found. Please reload the page.")
        try:
            had = set(tag_ids_from(request.args.getlist("had")))
        except Refusal:
            had = set()
    return render_picker(project, action, apiclient.tags(project.id), row,
                         request.args.get("row", "") if row else "", had, ticked=had)


def render_picker(project, action: str, tags: list[Tag], row: RowKey | None, row_json: str,
                  had: set[int], ticked: set[int], find: str = "",
                  notice: tuple[str, str] | None = None, use: Tag | None = None) -> str:
    """The picker's form: a checkbox per tag (`ticked` ticked), the finder (holding `find`),
    "Create tag “…”" where the API offers it, and `notice` (kind, sentence) in its message
    area, with a button that ticks `use` (an existing tag offered instead of a new one)."""
    options = [{"id": tag.id, "name": tag.name, "description": tag.description,
                "chip": chip_html(tag.name, tag.color, description=tag.description),
                "checked": tag.id in ticked} for tag in tags]
    creating = action in CREATING and apiclient.offers_tag_creation()
    return render_template(
        "bulk/_picker.html", project=project, action=action, title=VERBS[action],
        options=options, row=row, row_json=row_json, had=sorted(had), find=find,
        notice=notice, use=use, apply_url=url_for("bulk.apply", project_id=project.id),
        create_url=url_for("bulk.create_tag", project_id=project.id) if creating else None)


# --- a new tag from the picker ---------------------------------------------------------------


def new_tag_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise Refusal("Type the new tag's name in “Find a tag” first.")
    if len(name) > MAX_TAG_NAME:
        raise Refusal(f"A tag's name can have at most {MAX_TAG_NAME} characters; this one has "
                      f"{len(name):,}. Nothing was created.")
    if has_forbidden_character(name):
        raise Refusal("A tag's name cannot contain tabs, line breaks or other control "
                      "characters. Nothing was created.")
    return name


def named(tags: list[Tag], name: str) -> Tag | None:
    """The tag of that name, compared as the API compares names (case, look-alikes)."""
    folded = fold_tag_name(name)
    return next((tag for tag in tags if fold_tag_name(tag.name) == folded), None)


@contextmanager
def sentences_in_the_picker() -> Iterator[None]:
    """A busy or unreachable service is a sentence in the picker's message area, where the
    person is looking (not the page's notice area, which would close the picker)."""
    try:
        yield
    except RateLimited as error:
        wait = max(1, round(error.retry_after))
        raise Refusal("Your organization has made a lot of requests in a short time, so the "
                      "tag was not created. Please try again in "
                      f"{wait} second{'' if wait == 1 else 's'}.", 429) from None
    except Unavailable:
        raise Refusal("The Tagdesk service is temporarily unavailable, so the tag was not "
                      "created. Please try again in a moment.", 503) from None
    except TransportError:
        raise Refusal("The Tagdesk service could not be reached, so the tag may not have been "
                      "created. Please close the picker, open it again and look for it.",
                      502) from None


@bp.post("/projects/<project_id>/bulk/tags")
@login_required
def create_tag(project_id: str):
    """Create the tag named in the finder (the API picks its colour), then draw the picker
    again — tags read afresh, the new one ticked with whatever was ticked before. A name the
    project has already is not created again: a sentence says so, with a button that ticks
    that tag."""
    project = load_project(project_id)
    form = request.form
    action = form.get("action", "")
    if action not in CREATING:
        raise Refusal("That is not something the tag picker can do.")
    row = None
    had: set[int] = set()
    if action == EDIT:
        row = RowKey.parse(form.get("row", ""))
        if row is None:
            raise Refusal("That row could not be found. Please reload the page.")
        had = set(tag_ids_from(form.getlist("had")))
    ticked = set(tag_ids_from(form.getlist("apply_tag")))
    name = new_tag_name(form.get("name", ""))
    with sentences_in_the_picker():
        if not apiclient.offers_tag_creation():
            raise Refusal("This Tagdesk service cannot create tags, so nothing was created.",
                          404)
        existing = named(apiclient.tags(project.id), name)
        if existing is None:
            try:
                created = apiclient.client().create_tag(project.id, name)
            except Conflict:
                existing = named(apiclient.tags(project.id, refresh=True), name)
                if existing is None:
                    raise Refusal(f"A tag named “{name}” already exists in this project, so "
                                  "it was not created again.", 409) from None
            except InvalidRequest as error:
                raise Refusal(f"The service did not accept that name: {refusal(error)} "
                              "Nothing was created.") from None
            except NotFound:
                raise Refusal("The service could not create a tag in this project. Please "
                              "reload the page.", 404) from None
        if existing is None:
            # A new tag of the project is a change made in Tagdesk: the activity log says
            # who made it and when (no query changed, nothing to undo).
            jobs_store().record_finished(
                [], project_id=project.id, kind="tag", scope="project",
                tag_names={str(created.id): created.name}, **who())
            tags = apiclient.tag_created(project.id, created)
            html = render_picker(project, action, tags, row, form.get("row", "") if row else "",
                                 had, ticked | {created.id}, find=created.name,
                                 notice=("success", f"Created the tag “{created.name}”. It is "
                                                    "ticked, ready to apply."))
        else:
            # The name is one the project has, as names compare (case, spaces, invisible
            # characters: weblib.tag_names): that tag is offered instead of a look-alike.
            html = render_picker(project, action, apiclient.tags(project.id), row,
                                 form.get("row", "") if row else "", had, ticked,
                                 find=existing.name, notice=(
                                     "warning", f"This project already has a tag named "
                                                f"“{existing.name}” (names are compared as "
                                                "they read: capital letters, spaces and "
                                                "invisible characters make no difference), so "
                                                "no new one was created."),
                                 use=existing)
    return htmx_response(html, retarget="[data-bulk-dialog-body]", reswap="innerHTML")


# --- Apply ---------------------------------------------------------------------------------


@bp.post("/projects/<project_id>/bulk")
@login_required
def apply(project_id: str):
    project = load_project(project_id)
    form = request.form
    action = form.get("action", "")
    if action not in VERBS:
        raise Refusal("That is not something the tag picker can do.")
    chosen = tag_ids_from(form.getlist("apply_tag"))
    had = tag_ids_from(form.getlist("had")) if action == EDIT else []
    tags = project_tags(project.id, sorted(set(chosen) | set(had)))
    delta = delta_from_form(action, chosen, had)
    view = QueryView.from_args(form)

    if action == EDIT:
        key = RowKey.parse(form.get("row", ""))
        if key is None:
            raise Refusal("That row could not be found. Please reload the page and try again.")
        if delta.empty:
            raise Refusal("Nothing to change: tick or untick a tag first.", 422)
        return edit_rows(project, [key], delta, tags, view, scope="row",
                         words=f"“{key.query}”")

    if form.get("scope") == "all":
        return confirm_step(project, delta, tags, view)

    keys = selected_keys(form.getlist("selected"))
    if not keys:
        raise Refusal("No queries are selected. Tick the box at the start of each row you "
                      "want to change (or “Select all on this page”), then try again.")
    if len(keys) > MAX_SELECTED:
        raise Refusal(f"At most {MAX_SELECTED:,} rows can be changed at once this way; use "
                      "“Select all matching” for more.")
    if removes_every_tag(project.id, delta) and not clearing_confirmed(
            form.get("confirmed", ""), project.id, keys, delta):
        return confirm_clearing(project, keys, delta, view)
    return edit_rows(project, keys, delta, tags, view, scope="rows", words="")


# --- removing every tag from selected rows: asked first -----------------------------------


def removes_every_tag(project_id: str, delta: Delta) -> bool:
    """Whether the edit leaves the rows without any tag: a replacement by nothing, or a
    removal of every tag the project has (its tags as the session knows them)."""
    if delta.replace is not None:
        return not delta.replace
    if delta.add or not delta.remove:
        return False
    return {tag.id for tag in apiclient.tags(project_id)} <= delta.remove


def _clearing_token(project_id: str, keys: list[RowKey], delta: Delta) -> dict:
    return {"project": project_id, "rows": sorted(key.id for key in keys),
            "delta": delta.to_json()}


def clearing_confirmed(token: str, project_id: str, keys: list[RowKey], delta: Delta) -> bool:
    if not token:
        return False
    serializer = URLSafeTimedSerializer(current_app.secret_key, salt=CLEAR_SALT)
    try:
        signed = serializer.loads(token, max_age=PLAN_MAX_AGE)
    except BadSignature:
        return False
    return signed == _clearing_token(project_id, keys, delta)


def confirm_clearing(project, keys: list[RowKey], delta: Delta, view: QueryView):
    """The question, in the dialog: Confirm posts the same edit with a token signed over the
    rows and the change, so what is confirmed is exactly what was asked."""
    serializer = URLSafeTimedSerializer(current_app.secret_key, salt=CLEAR_SALT)
    fields = [("action", REMOVE if delta.replace is None else REPLACE)]
    fields += [("apply_tag", str(tag_id)) for tag_id in sorted(delta.remove)]
    fields += [("selected", value) for value in request.form.getlist("selected")]
    fields += view.params()
    fields.append(("confirmed", serializer.dumps(_clearing_token(project.id, keys, delta))))
    html = render_template(
        "bulk/_confirm.html", project=project, fields=fields,
        sentence=f"Remove every tag from {wording.count(len(keys))}",
        confirm_url=url_for("bulk.apply", project_id=project.id))
    return htmx_response(html, retarget="[data-bulk-dialog-body]", reswap="innerHTML")


def edit_rows(project, keys: list[RowKey], delta: Delta, tags: dict[int, Tag],
              view: QueryView, scope: str, words: str):
    """An in-page edit: fresh read, delta, one write, recorded; rows re-rendered in place."""
    client = apiclient.client()
    store = jobs_store()
    holder = new_id()
    try:
        with held_for_write(store, client, project.id, holder, lock_wait()):
            first = client.list_queries(project.id, view.filters, sort=view.api_sort(),
                                        page=view.page, limit=view.size)
            found, _gone = find_rows(client, project.id, keys, first)
            step = rewrite((found[key.id] for key in keys if key.id in found),
                           lambda record: delta.apply(record.tags))
            updated = write(client, project.id, step)
    except LockBusy:
        raise _busy() from None
    except TooManyMoved:
        raise _moved() from None

    edit = store.record_finished(
        step.changes, project_id=project.id, kind="edit", scope=scope, scope_words=words,
        delta=delta.to_json(), tag_names=names_of(delta, tags), expected=len(keys),
        total=len(found), processed=len(found), changed=len(step.changes),
        untouched=step.untouched, **who())
    records = [updated.get(key.id) or found[key.id] for key in keys if key.id in found]
    count = results_count(project)
    response = rows_response(project, edit, records, checked=(scope == "rows"), count=count)
    apiclient.invalidate(project.id)
    return response


def results_count(project) -> str:
    """The list's count drawn again (an out-of-band swap) after an in-page edit or its undo,
    when the request says what the page shows (its view and how many rows: the count's hidden
    fields): its total read again from the API, one query asked for, so it is exact. Empty
    without those fields."""
    form = request.form
    try:
        rows = int(form.get("view_shown", ""))
    except ValueError:
        return ""
    if not 0 <= rows <= MAX_SELECTED:
        return ""
    view = QueryView.from_args(form)
    total = apiclient.client().list_queries(project.id, filters=view.filters,
                                            limit=1).page.total_records
    return render_template("queries/_count.html", count_text=wording.range_text(
        view, total, rows), count_shown=rows, count_oob=True)


def rows_response(project, edit: Edit, records, checked: bool, count: str = ""):
    """Out-of-band rows and the list's count, the sentence (with Undo) in the notice area,
    the dialog closed."""
    tags = apiclient.tags_covering(project.id, {t for r in records for t in r.tags})
    rows = rows_for(tuple(records), {tag.id: tag for tag in tags})
    html = render_template("bulk/_edit_done.html", project=project, edit=edit, rows=rows,
                           checked=checked, summary=wording.what_it_did(edit)) + count
    # An in-page edit keeps the selection, a row's quick edit included (selection.js keeps each
    # row's tick as it was when the row is drawn again).
    return htmx_response(html, trigger={"tagdesk:bulkDone": {"keepSelection": True}})


# --- select all matching: confirm, then a job ----------------------------------------------


def confirm_step(project, delta: Delta, tags: dict[int, Tag], view: QueryView):
    filters = view.filters
    client = apiclient.client()
    count = client.list_queries(project.id, filters, page=1, limit=1).page.total_records
    if count == 0:
        raise Refusal("No queries match these filters, so there is nothing to change.")
    tag_names = {tag_id: tags[tag_id].name for tag_id in delta.tag_ids}
    plan = _plan_serializer().dumps({
        "project": project.id, "delta": delta.to_json(), "filters": filters.to_body(),
        "count": count, "names": {str(k): v for k, v in tag_names.items()},
    })
    sentence = wording.plan_sentence(delta, tag_names, count, filters)
    if removes_every_tag(project.id, delta):
        sentence = f"Remove every tag from {wording.count(count)} {wording.matching(filters)}"
    html = render_template("bulk/_confirm.html", project=project, sentence=sentence,
                           plan=plan, count=count,
                           confirm_url=url_for("bulk.confirm", project_id=project.id))
    return htmx_response(html, retarget="[data-bulk-dialog-body]", reswap="innerHTML")


@bp.post("/projects/<project_id>/bulk/confirm")
@login_required
def confirm(project_id: str):
    project = load_project(project_id)
    try:
        plan = _plan_serializer().loads(request.form.get("plan", ""), max_age=PLAN_MAX_AGE)
    except BadSignature:
        raise Refusal("This confirmation is too old or not valid any more. Nothing was "
                      "changed; please choose the tags again.") from None
    if plan.get("project") != project.id:
        raise Refusal("This confirmation belongs to another project. Nothing was changed.")
    delta = Delta.from_json(plan["delta"])
    tags = project_tags(project.id, sorted(delta.tag_ids))
    filters = QueryFilters.from_body(plan["filters"])
    edit = start_filter_edit(project, filters, delta, names_of(delta, tags), int(plan["count"]),
                             wording.matching(filters))
    html = render_template("bulk/_job_started.html", panel=job_panel(project, edit))
    return htmx_response(html, trigger={"tagdesk:bulkDone": {"keepSelection": False}})


# --- job panels: progress, cancel, resume -----------------------------------------------


@bp.get("/projects/<project_id>/jobs/<edit_id>")
@login_required
def job_status(project_id: str, edit_id: str):
    project, edit = project_and_edit_now(project_id, edit_id)
    trigger = None
    if request.args.get("poll") and not edit.active:
        # The job ended since the last look: the list of queries is out of date.
        apiclient.invalidate(project.id)
        trigger = {"tagdesk:resultsStale": True}
    return htmx_response(job_panel(project, edit), trigger=trigger)


@bp.post("/projects/<project_id>/jobs/<edit_id>/cancel")
@login_required
def cancel(project_id: str, edit_id: str):
    project, edit = project_and_edit(project_id, edit_id)
    if edit.active or edit.state == "interrupted":
        edit = jobs_store().request_cancel(edit.id)
    return job_panel(project, edit)


@bp.post("/projects/<project_id>/jobs/<edit_id>/resume")
@login_required
def resume(project_id: str, edit_id: str):
    project, edit = project_and_edit(project_id, edit_id)
    store = jobs_store()
    if not edit.resumable:
        raise Refusal("This can no longer be resumed.", 409)
    if store.requeue(edit.id, process_owner(), session_ref=who()["session_ref"]):
        runner().submit(edit.id)
    return job_panel(project, store.get(edit.id))


# --- Undo ----------------------------------------------------------------------------------


@bp.post("/projects/<project_id>/edits/<edit_id>/undo")
@login_required
def undo(project_id: str, edit_id: str):
    project, edit = project_and_edit(project_id, edit_id)
    context = request.form.get("context", "panel")
    try:
        undone = undo_edit(project, edit)
    except LockBusy:
        raise _busy() from None
    if undone.records is None:
        if context == "activity":
            return undo_answer(project, edit, undone.edit)
        panel = job_panel(project, undone.edit)
        if context == "notice":
            return render_template("bulk/_job_started.html", panel=panel, notice=(
                "Undoing in the background: its progress is shown above the list."))
        return panel
    shown = shown_ids()
    count = results_count(project) if context != "activity" else ""
    apiclient.invalidate(project.id)
    if context == "activity":
        return undo_answer(project, edit, undone.edit)
    records = [record for record in undone.records if record.id in shown]
    if context == "notice":
        main = Markup(render_template(  # noqa: S704 (rendered, so escaped)
            "bulk/_undo_notice.html", summary=wording.what_undo_did(undone.edit, edit)))
        # As after the edit: the page's counts and progress are read again (counts.js), and
        # the selection stays. An accepted suggestion's Undo gives the suggestion back, which
        # the rows drawn from the undo's answer do not show: the list is read again, as after
        # the accept.
        trigger = {"tagdesk:resultsStale": True} if edit.scope == SUGGESTION else \
            {"tagdesk:bulkDone": {"keepSelection": True}}
    else:
        main = job_panel(project, undone.edit)
        # A job's panel: the list is loaded again, with its counts (htmx, then counts.js).
        trigger = {"tagdesk:resultsStale": True}
    return rows_response_undo(project, records, main, count, trigger)


def rows_response_undo(project, records, main_html: str, count: str = "",
                       trigger: dict | None = None):
    tags = apiclient.tags_covering(project.id, {t for r in records for t in r.tags})
    rows = rows_for(tuple(records), {tag.id: tag for tag in tags})
    html = render_template("bulk/_undo_done.html", project=project, rows=rows,
                           main_html=main_html) + count
    return htmx_response(html, trigger=trigger)


def register(app) -> None:
    app.register_blueprint(bp)
    app.register_error_handler(Refusal, refused)
    app.register_error_handler(UndoRefused, refused)
