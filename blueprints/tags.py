"""A project's tags as coloured chips, each leading to the queries that have it.

One `tags/list` call per view (every tag, so the name filter works on the full list and the
session's tag cache is refreshed with it on the way).
"""

from __future__ import annotations

from flask import Blueprint, make_response, render_template, request, url_for
from flask_login import login_required

from dashboard import apiclient
from dashboard.counts import counts_response, every_count
from dashboard.current_project import load_project
from dashboard.htmx import wants_partial
from dashboard.rows import chip_html
from dashboard.viewstate import QueryView, TagView
from queryapi import QueryFilters
from weblib.tag_names import fold_tag_name

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
    tags = [{
        "id": tag.id,
        "name": tag.name,
        "link": chip_html(tag.name, tag.color,
                          href=queries_url + QueryView(tags=(tag.name,)).query_string()),
    } for tag in shown]
    title = (f"“{view.name}” – " if view.name else "") + f"Tags · {project.name} · Tagdesk"
    context = {
        "project": project,
        "section": "tags",
        "view": view,
        "tags": tags,
        "count_text": count_text(len(shown), len(every), bool(needle)),
        "counts_url": url_for("tags.counts", project_id=project.id) + view.query_string(),
        "page_title": title,
    }
    if wants_partial():
        response = make_response(render_template("tags/partial.html", **context))
        response.headers["HX-Push-Url"] = (url_for("tags.index", project_id=project.id)
                                           + view.query_string())
        return response
    return render_template("tags/index.html", **context)


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
