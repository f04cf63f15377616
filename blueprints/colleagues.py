"""Colleagues' edits on the queries page: which of the rows a page shows changed since it drew
them (another person's edit, a job, a rule, an import). The page (static/colleagues.js) sends
the id and `updatedAt` of each row it shows; one POST /api/queries/versions answers which of
them the service now holds otherwise (docs/decisions.md). Nothing on the page moves: the
answer is a sentence with Show, or nothing."""

from __future__ import annotations

from datetime import datetime

from flask import Blueprint, abort, current_app, render_template, request
from flask_login import login_required

from dashboard import apiclient
from dashboard.current_project import load_project
from dashboard.rows import time_attribute
from queryapi import ApiError, AuthError

bp = Blueprint("colleagues", __name__)

# The most rows a page shows (viewstate.PAGE_SIZES), and what the service takes in one call.
MAX_ROWS = 1000


def shown_rows(text: str) -> dict[str, datetime | None]:
    """The rows a page says it shows, "id@updatedAt,…", by id ("id@": a row it already knows
    is gone). Anything else (never sent by the page) is a 400, which the dashboard says in
    its own words."""
    rows: dict[str, datetime | None] = {}
    for item in filter(None, text.split(",")):
        query_id, _at, when = item.partition("@")
        try:
            rows[query_id] = datetime.fromisoformat(when) if when else None
        except ValueError:
            abort(400)
    if len(rows) > MAX_ROWS:
        abort(400)
    return rows


def changed_rows(project_id: str, shown: dict[str, datetime | None]) -> list[str]:
    """The rows shown that the service now holds with another `updatedAt`, as "id@updatedAt"
    ("id@" for one it no longer has). The page's own edits drew their rows again with their
    new time."""
    now = apiclient.client().query_versions(project_id, list(shown))
    return [f"{query_id}@{time_attribute(now[query_id]) if query_id in now else ''}"
            for query_id, when in shown.items() if now.get(query_id) != when]


@bp.app_context_processor
def poll_interval() -> dict:
    """`colleagues_poll()`: the seconds between a queries page's questions, or 0 where the
    API cannot answer them (the page then asks nothing and never says rows changed)."""

    def colleagues_poll() -> float:
        if not apiclient.capabilities().query_versions:
            return 0
        return float(current_app.config["COLLEAGUES_POLL_SECONDS"])

    return {"colleagues_poll": colleagues_poll}


@bp.post("/projects/<project_id>/queries/changed")
@login_required
def changed(project_id: str):
    """The sentence that says how many rows on the page changed, with Show; empty when none
    did, when the API cannot say (no versions extension), or when it cannot be asked now:
    the next poll asks again."""
    load_project(project_id)  # another organization's project is a missing one (404)
    shown = shown_rows(request.form.get("shown", ""))
    if not shown or not apiclient.capabilities().query_versions:
        return ""
    try:
        changed = changed_rows(project_id, shown)
    except AuthError:
        raise
    except ApiError:
        return ""
    return render_template("queries/_colleagues_notice.html", changed=changed)
