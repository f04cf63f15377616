"""A project's queries: search, filters, sort, pages — the whole view in the URL.

One `queries/list` call per view. The project (for the header) and its tags (for chip colours
and the tag picker) come from the per-session cache. The same results template is rendered
inside the page and, for htmx requests, alone.
"""

from __future__ import annotations

from dataclasses import replace

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import login_required

from dashboard import (
    apiclient,
    edits,
    facets,
    filter_fields,
    number_columns,
    saved_views,
    suggestions,
    wording,
)
from dashboard.current_project import load_project, remember_project
from dashboard.figures import LABELS
from dashboard.htmx import htmx_response, hx_redirect, wants_partial
from dashboard.number_columns import ProjectNumbers
from dashboard.rows import rows_for
from dashboard.viewstate import (
    DEFAULT_PAGE_SIZE,
    DEFAULT_SORT,
    PAGE_SIZES,
    SORT_COLUMNS,
    Ignored,
    QueryView,
    ignored_sentence,
    quoted,
)
from jobs.export import export_sort
from queryapi import (
    NUMBER_NAMES,
    ApiError,
    AuthError,
    Project,
    RateLimited,
    Tag,
    TransportError,
    Unavailable,
)
from weblib.tag_names import fold_tag_name

bp = Blueprint("queries", __name__)
# The words and phrases the Common words panel lists of each.
COMMON_WORDS = 20

COLUMNS = (("query", "Query", True), ("language", "Language", True),
           ("country", "Country", True), ("tags", "Tags", False), ("updated", "Updated", True))
SORT_WORDS = {
    "query": ("Query, A to Z", "Query, Z to A"),
    "language": ("Language code, A to Z", "Language code, Z to A"),
    "country": ("Country code, A to Z", "Country code, Z to A"),
    "updated": ("Updated, oldest first", "Updated, newest first"),
}


# --- the view's links and texts -------------------------------------------------------------


def sort_words(sort: list[tuple[str, str]]) -> str:
    """'sorted by Query, A to Z' for the API's sort; by a number, 'biggest clicks first'."""
    column = next(key for key, field in SORT_COLUMNS.items() if field == sort[0][0])
    if column in NUMBER_NAMES:
        return number_columns.sort_words(column, sort[0][1] == "DESC")
    return "sorted by " + SORT_WORDS[column][1 if sort[0][1] == "DESC" else 0]


def export_order(view: QueryView) -> str:
    """How the CSV is sorted when that is not how the view is (a view by "updated" exports by
    query text, jobs/export.py), else ''."""
    sort = export_sort(view.api_sort())
    return "" if sort == view.api_sort() else sort_words(sort)


def columns_for(view: QueryView, numbers: tuple[str, ...] = ()) -> list[dict]:
    """The table's columns: the numbers shown (right-aligned, each a sort) before Updated."""
    listed = [*COLUMNS[:-1], *((name, LABELS[name], True) for name in numbers), COLUMNS[-1]]
    return [{
        "key": key,
        "label": label,
        "sortable": sortable,
        "number": key in NUMBER_NAMES,
        "sort_state": view.sort_state(key) if sortable else "none",
        "sort_qs": view.sorted_by(key).query_string() if sortable else "",
    } for key, label, sortable in listed]


def pager_for(view: QueryView, total_pages: int) -> dict:
    last = max(total_pages, 1)
    return {
        "first_qs": view.at_page(1).query_string(),
        "prev_qs": view.at_page(min(view.page - 1, last)).query_string()
        if view.page > 1 else None,
        "next_qs": view.at_page(view.page + 1).query_string() if view.page < last else None,
        "last_qs": view.at_page(last).query_string(),
    }


def title_for(view: QueryView, project: Project) -> str:
    parts = []
    if view.filters.text:
        parts.append(f"“{view.filters.text}”")
    if view.page > 1:
        parts.append(f"page {view.page:,}")
    prefix = " · ".join(parts)
    return (prefix + " – " if prefix else "") + f"Queries · {project.name} · Tagdesk"


# --- values of the address the project does not know ---------------------------------------


def known_values(project: Project, view: QueryView) -> tuple[QueryView, list[Ignored]]:
    """The view without the values the project cannot match (each field's), named."""
    filters, ignored = filter_fields.known(project.id, view.filters)
    return view.narrowed(filters), ignored


def rule_names(project_id: str, results) -> dict[int, str] | None:
    """The names of the rules that added tags on this page (the rules list, cached as the
    tags are): {} when no rule did, None when no row's tags say where they came from."""
    if not any(query.tag_sources for query in results):
        return None
    if not any(source.rule_id is not None for query in results
               for source in query.tag_sources):
        return {}
    rules = apiclient.cached_read("rules", project_id,
                                  lambda: apiclient.client().list_rules(project_id))
    return {rule.id: rule.name for rule in rules}


def saved_views_context(project, view: QueryView, tags: list[Tag]) -> dict:
    """The Saved views section's context, where the API keeps saved views (one call; should
    it fail, the page says so and shows its rows all the same)."""
    if not apiclient.capabilities().saved_views:
        return {"saved_views_offered": False}
    try:
        return {"saved_views_offered": True,
                **saved_views.section_context(project, view.query_string(), tags=tags)}
    except (RateLimited, Unavailable, TransportError):
        return {"saved_views_offered": True, "saved_views": [], "current_qs":
                view.query_string(), "views_error": "The saved views could not be read just "
                "now: reload the page in a moment."}


def offered_view(view: QueryView) -> tuple[QueryView, list[Ignored]]:
    """The view as this deployment can show it: without the filters of extensions it does
    not offer, those values named, and without a sort by or columns of numbers it does not
    keep."""
    offered = apiclient.capabilities()
    view, ignored = view.offered(offered.filter_fields)
    if view.sort_column in NUMBER_NAMES and view.sort_column not in offered.numbers:
        ignored.append(Ignored(f"sort {quoted(view.sort)}",
                               "this service keeps no numbers per query"))
        view = view.replace(sort=DEFAULT_SORT)
    if view.columns is not None and not offered.numbers:
        view = view.showing(None)
    return view, ignored


def _capitalized(text: str) -> str:
    """'Biggest CPC first' (str.capitalize would lower the rest)."""
    return text[:1].upper() + text[1:]


def numbers_context(view: QueryView, numbers: ProjectNumbers,
                    columns: tuple[str, ...]) -> dict:
    """The Columns choice, and the order in words where the view is sorted by a number."""
    sorted_by_number = view.sort_column in NUMBER_NAMES
    return {
        "column_choices": number_columns.column_choices(view, numbers, columns),
        "order_words": _capitalized(sort_words(view.api_sort())) if sorted_by_number else "",
        "default_order_qs": view.replace(sort=DEFAULT_SORT).query_string(),
    }


# --- the view ----------------------------------------------------------------------------------


@bp.get("/projects/<project_id>/queries")
@login_required
def index(project_id: str):
    project = load_project(project_id)
    view, ignored = QueryView.parse(request.args)
    view, unknown = offered_view(view)
    ignored += unknown
    view, unknown = known_values(project, view)
    ignored += unknown
    numbers = number_columns.project_numbers(project.id)
    view = number_columns.canonical(view, numbers)
    shown_numbers = number_columns.shown_columns(view, numbers)
    include = (("metrics",) if shown_numbers else ()) + (
        ("suggestions",) if suggestions.offered() else ())
    result = apiclient.client().list_queries(project.id, filters=view.filters,
                                             sort=view.api_sort(), page=view.page,
                                             limit=view.size, include=include)
    tags = apiclient.tags_covering(project.id, {t for q in result.results for t in q.tags})
    tags_by_id = {tag.id: tag for tag in tags}
    tags_by_name = {fold_tag_name(tag.name): tag for tag in tags}
    filter_fields.saw(project.id, result.results)

    page = result.page
    if not result.results and view.page > page.total_pages >= 1:
        # A page past the end (an old link, a hand-typed number): the last page instead.
        flash(f"There is no page {view.page:,} of this view: here is its last page, "
              f"{page.total_pages:,}.", "info")
        if ignored:
            flash(ignored_sentence(ignored), "warning")
        last = url_for("queries.index", project_id=project.id) \
            + view.at_page(page.total_pages).query_string()
        return hx_redirect(last) if wants_partial() else redirect(last)
    context = {
        "project": project,
        "section": "queries",
        "view": view,
        "page": page,
        "rows": rows_for(result.results, tags_by_id, rule_names(project.id, result.results),
                         shown_numbers, numbers.currency),
        "range_text": wording.range_text(view, page.total_records, len(result.results)),
        "shown": len(result.results),
        "active_chips": view.chips(tags_by_name),
        "clear_qs": view.cleared().query_string(),
        "columns": columns_for(view, shown_numbers),
        **numbers_context(view, numbers, shown_numbers),
        "sort_caption": sort_words(view.api_sort()),
        # Small views download with a plain link (nothing stays busy once the file comes);
        # larger ones start an export job.
        "export_streams": page.total_records <= int(current_app.config["EXPORT_STREAM_LIMIT"]),
        "export_order": export_order(view),
        "pager": pager_for(view, page.total_pages),
        "ignored_text": ignored_sentence(ignored),
        "page_title": title_for(view, project),
        "bulk": edits.page_context(project, view, page.total_records,
                                  with_jobs=not wants_partial()),
        "accept_all": _accept_all(view, tags, page.total_records),
    }
    canonical = url_for("queries.index", project_id=project.id) + view.query_string()
    if wants_partial():
        # A refresh (after a job, an accepted suggestion, or Show) shows the same view again:
        # no new history entry, and the notice area keeps its sentence (and its Undo).
        refresh = request.headers.get("X-Tagdesk-Refresh") == "1"
        response = make_response(render_template("queries/partial.html", keep_notices=refresh,
                                                 **context))
        response.headers["HX-Push-Url"] = "false" if refresh else canonical
    else:
        capabilities = apiclient.capabilities()
        picking = filter_fields.PickerPage(project.id, view.filters, tags, numbers.names,
                                           capabilities)
        response = make_response(render_template("queries/index.html", **{
            **filter_fields.picker_context(picking),
            "pickers": filter_fields.picker_templates(),
            "tag_logic": capabilities.tag_logic,  # the progress and the counts (facets)
            "progress_now": _progress_now(project, view) if capabilities.tag_logic else None,
            **saved_views_context(project, view, tags),
            "suggestion_status": _status_line(project.id),
            "page_sizes": PAGE_SIZES,
            "default_size": DEFAULT_PAGE_SIZE,
            "default_sort": DEFAULT_SORT,
            **context,
        }))
    return remember_project(response, project.id)


@bp.get("/projects/<project_id>/queries/counts")
@login_required
def counts(project_id: str):
    """The view's counts for its pickers and the project's progress, as JSON (counts.js paints
    them after the rows); 204 where the API offers no facets."""
    project = load_project(project_id)
    if not apiclient.capabilities().tag_logic:
        return "", 204
    view, _ignored = offered_view(QueryView.from_args(request.args))
    view, _unknown = known_values(project, view)
    fresh = request.headers.get("X-Tagdesk-Refresh") == "1"
    found = facets.view_counts(project.id, view, apiclient.tags(project.id),
                               _progress_link(project, view),
                               lambda number: _biggest_link(project, view, number), fresh=fresh)
    response = jsonify(found)
    response.headers["Cache-Control"] = "no-store"
    return response



def _progress_now(project, view: QueryView) -> dict | None:
    """The project's progress drawn with the page (from the session's cache, filled by the
    projects page, else one facets call), so that nothing below it moves when the counts
    paint it again; None when the service could not say (the counts draw it then)."""
    try:
        progress = facets.project_progress(project.id)
    except AuthError:
        raise
    except ApiError:
        return None
    return {"progress": progress, "link": _progress_link(project, view),
            "biggest_link": progress.biggest and _biggest_link(project, view, progress.biggest)}


def _progress_link(project, view: QueryView) -> str:
    return url_for("queries.index", project_id=project.id) \
        + facets.progress_view(view).query_string()


def _biggest_link(project, view: QueryView, number: str) -> str:
    return url_for("queries.index", project_id=project.id) \
        + facets.biggest_view(view, number).query_string()


@bp.app_context_processor
def common_words_offered() -> dict:
    """Whether the results offer the Common words panel (asked only where they are shown)."""
    return {"offers_common_words": lambda: apiclient.capabilities().common_words}


@bp.get("/projects/<project_id>/queries/words")
@login_required
def words(project_id: str):
    """The view's common words, each a link to the view searching for it: the panel's body
    (htmx, when the panel is opened), or a page of its own. 404 where the API has none."""
    project = load_project(project_id)
    if not apiclient.capabilities().common_words:
        abort(404)
    view, _ignored = offered_view(QueryView.from_args(request.args))
    view, _unknown = known_values(project, view)
    found = apiclient.client().common_words(project.id, view.filters, limit=COMMON_WORDS)
    here = url_for("queries.index", project_id=project.id)

    def linked(items):
        return [{"text": text, "count": count,
                 "href": here + view.filtered(replace(view.filters, text=text)).query_string()}
                for text, count in items]

    context = {"project": project, "section": "queries", "view": view, "found": found,
               "words": linked(found.words), "phrases": linked(found.phrases),
               "back": here + view.query_string()}
    if wants_partial():
        return render_template("queries/_words.html", **context)
    return render_template("queries/words.html", **context)


# --- suggested tags ------------------------------------------------------------------------


def _status_line(project_id: str, refresh: bool = False) -> str:
    """The suggestions' status in a sentence, or '' where the API suggests no tags."""
    found = suggestions.status(project_id, refresh=refresh)
    return suggestions.status_sentence(found) if found is not None else ""


def _suggestion_project(project_id: str) -> Project:
    project = load_project(project_id)
    if not suggestions.offered():
        abort(404)
    return project


def _said(sentence: str):
    """A sentence in the notice area; the results drawn again (the row's chips changed)."""
    html = render_template("queries/_suggestion_done.html", sentence=sentence)
    return htmx_response(html, trigger={"tagdesk:resultsStale": True})


def _accept_all(view: QueryView, tags: list[Tag], total: int) -> dict | None:
    """Accept all: offered on a view filtered by one suggested tag, with queries."""
    chosen = filter_fields.one_suggested(view.filters)
    if chosen is None or not total or not suggestions.offered():
        return None
    tag = next((tag for tag in tags if tag.id == chosen), None)
    return None if tag is None else {"tag_id": tag.id, "name": tag.name, "count": total}


def _numbers_of(value: str) -> list[int]:
    return [int(part) for part in value.split(",") if part.strip().isdigit()][:50]


@bp.post("/projects/<project_id>/queries/suggestions/accept")
@login_required
def accept_suggestion(project_id: str):
    """One query's suggested tag (or several, comma-separated: Accept all) accepted."""
    project = _suggestion_project(project_id)
    query_id = (request.form.get("query_id") or "").strip()
    chosen = _numbers_of(request.form.get("tag_id") or "")
    if not query_id or not chosen:
        abort(400)
    client = apiclient.client()
    names = {tag.id: tag.name for tag in apiclient.tags(project.id)}
    accepted, item = {}, None
    for tag_id in chosen:
        done = client.accept_suggestions(project.id, tag_id, query_ids=[query_id])
        if done.tagged and done.queries:
            accepted[tag_id], item = names.get(tag_id, f"tag {tag_id}"), done.queries[0]
    apiclient.invalidate(project.id)
    if item is None:
        return _said("Nothing to accept: that suggestion is gone (the query has the tag, or "
                     "it was rejected).")
    edit = edits.record_accepted(project, query_id, item, accepted)
    html = render_template("queries/_suggestion_accepted.html", project=project, edit=edit,
                           summary=wording.what_it_did(edit))
    return htmx_response(html, trigger={"tagdesk:resultsStale": True})


@bp.post("/projects/<project_id>/queries/suggestions/reject")
@login_required
def reject_suggestion(project_id: str):
    """One query's suggested tag rejected: never suggested to it again."""
    project = _suggestion_project(project_id)
    query_id = (request.form.get("query_id") or "").strip()
    chosen = _numbers_of(request.form.get("tag_id") or "")
    if not query_id or len(chosen) != 1:
        abort(400)
    apiclient.client().reject_suggestions(project.id, chosen[0], [query_id])
    apiclient.invalidate(project.id)
    name = next((tag.name for tag in apiclient.tags(project.id) if tag.id == chosen[0]),
                f"tag {chosen[0]}")
    return _said(f"Rejected ‘{name}’: it will not be suggested for that query again.")


@bp.post("/projects/<project_id>/queries/suggestions/refresh")
@login_required
def refresh_suggestions(project_id: str):
    """Learn the suggestions again now; the status line as it is then."""
    project = _suggestion_project(project_id)
    apiclient.client().refresh_suggestions(project.id)
    return render_template("queries/_suggestion_status.html", project=project,
                           suggestion_status=_status_line(project.id, refresh=True))


@bp.post("/projects/<project_id>/queries/suggestions/accept-all")
@login_required
def accept_all_suggestions(project_id: str):
    """Every query of the view (its parameters, sent as the page's view state) suggested the
    tag gets it: a job with progress, Cancel and Undo."""
    project = _suggestion_project(project_id)
    view, _unknown = known_values(project, QueryView.from_args(request.form))
    chosen = _numbers_of(request.form.get("tag_id") or "")
    tag = next((tag for tag in apiclient.tags(project.id) if tag.id in chosen[:1]), None)
    if tag is None or filter_fields.one_suggested(view.filters) != tag.id:
        abort(400)
    total = apiclient.client().list_queries(project.id, filters=view.filters,
                                            limit=1).page.total_records
    edit = edits.start_suggestions_job(project, tag, view.filters, total)
    html = render_template("bulk/_job_started.html", panel=edits.job_panel(project, edit))
    return htmx_response(html)
