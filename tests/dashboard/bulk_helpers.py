"""Helpers of the bulk-editing route tests: the API as ground truth, and posting like htmx."""

from __future__ import annotations

import html as html_module
import re

from werkzeug.datastructures import MultiDict

from jobs.deltas import row_key_json
from jobs.store import Store
from queryapi import Client, QueryFilters
from tests.support.dashboard import csrf_token, project_url
from tests.support.waiting import wait_for_job

ROW_KEY = re.compile(r'name="selected" value="([^"]+)" aria-label="Select ([^"]*)"')


def api_of(app, world) -> Client:
    """The API itself, as the dashboard's service answers it (embedded or at API_URL)."""
    embedded = app.extensions.get("tagdesk_embedded")
    return Client(embedded.internal_url() if embedded else app.config["API_URL"], world.key)


def tag_names_by_query(app, world, project_id=None) -> dict[tuple[str, str, str], set[str]]:
    project_id = project_id or world.project_id
    with api_of(app, world) as api:
        names = {tag.id: tag.name for tag in api.iter_tags(project_id)}
        return {(q.query, q.language, q.country): {names[t] for t in q.tags}
                for q in api.iter_queries(project_id)}


def tags_of(app, world, text: str, project_id=None) -> set[str]:
    matches = [tags for key, tags in tag_names_by_query(app, world, project_id).items()
               if key[0] == text]
    assert len(matches) == 1, text
    return matches[0]


def record(app, world, text: str, project_id=None):
    with api_of(app, world) as api:
        found = [q for q in api.iter_queries(project_id or world.project_id,
                                             QueryFilters(text=text)) if q.query == text]
    assert len(found) == 1, text
    return found[0]


def key(app, world, text: str, project_id=None) -> str:
    return row_key_json(record(app, world, text, project_id))


def keys_in(html: str) -> dict[str, str]:
    """{query text: the checkbox's value} of the rows of a page."""
    return {html_module.unescape(text): html_module.unescape(value)
            for value, text in ROW_KEY.findall(html)}


def page(client, world, query: str = "", project_id=None) -> str:
    url = (f"/projects/{project_id}/queries" + (f"?{query}" if query else "")
           if project_id else project_url(world, query=query))
    response = client.get(url)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return response.get_data(as_text=True)


def post(client, url: str, data, html: str | None = None, token: str | None = None,
         htmx: bool = True):
    """POST as htmx does: form fields, the CSRF token in X-CSRFToken."""
    headers = {}
    if htmx:
        headers["HX-Request"] = "true"
    if token is None and html is not None:
        token = csrf_token(html)
    if token:
        headers["X-CSRFToken"] = token
    pairs = MultiDict()
    for name, value in (data.items(multi=True) if isinstance(data, MultiDict) else (
            data.items() if isinstance(data, dict) else data)):
        if isinstance(value, list | tuple):
            for item in value:
                pairs.add(name, item)
        else:
            pairs.add(name, value)
    return client.post(url, data=pairs, headers=headers)


def bulk_url(world, project_id=None) -> str:
    return f"/projects/{project_id or world.project_id}/bulk"


def store_of(app) -> Store:
    return app.extensions["tagdesk_jobs"]


def wait_for(app, edit_id: str, states=("done", "cancelled", "interrupted", "failed"),
             timeout: float = 30.0):
    """The edit's record once it has ended (or reached `states`)."""
    return wait_for_job(store_of(app), edit_id, states, timeout)


def latest(app, world, project_id=None):
    edits = store_of(app).for_project(project_id or world.project_id, limit=1)
    return edits[0] if edits else None


PLAN = re.compile(r'name="plan" value="([^"]+)"')


def plan_of(html: str) -> str:
    match = PLAN.search(html)
    assert match, html[:500]
    return html_module.unescape(match.group(1))


def text_of(html: str) -> str:
    """The visible text, roughly: tags dropped, entities decoded, spaces squeezed."""
    return re.sub(r"\s+", " ", html_module.unescape(re.sub(r"<[^>]+>", " ", html))).strip()
