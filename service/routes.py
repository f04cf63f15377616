"""The four endpoints of the reference, the public OpenAPI document, and the extensions of
the reference (marked `x-tagdesk-extension` in docs/openapi.yaml): creating a tag, the
facets of a filter (and the filter's own extensions, service/validation.py), saved views,
rules (service/rules.py) and the tag sources of query records."""

from __future__ import annotations

from typing import TypeVar

from flask import Blueprint, Response, g, jsonify
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from . import engine, rules, saved_views, search, tag_changes, tag_creation
from .auth import resolve_project
from .db import get_session
from .engine import entry_rules, listing, tagging
from .models import Project
from .openapi import openapi_document
from .protocol import json_response
from .records import page_object, project_record, query_records, tag_record
from .validation import (
    CreateTagBody,
    CreateViewBody,
    MergeTagBody,
    Paged,
    PageParams,
    QueryFilterBody,
    QueryListBody,
    SetTagsBody,
    Strict,
    TagListBody,
    UnmergeTagBody,
    UpdateTagBody,
    UpdateViewBody,
    ViewIdBody,
    ViewListBody,
    parse,
    parse_query_string,
    read_actor,
    read_json,
)

bp = Blueprint("api", __name__, url_prefix="/api")

Body = TypeVar("Body", bound=Strict)


def project_call(body_model: type[Body]) -> tuple[Session, str, Body]:
    """What an endpoint of one project starts from: the database session, the caller's
    project (x-project-id) and the JSON body, parsed as `body_model`."""
    session = get_session()
    return session, resolve_project(session, g.caller), parse(body_model, read_json())


def page_of(total: int, params: PageParams | Paged, results: list[dict]) -> Response:
    """The answer of a list endpoint: its page of `results` and where the page stands."""
    return json_response({"page": page_object(total, params.page, params.limit),
                          "results": results})


@bp.get("/openapi.json")
def openapi():
    return jsonify(openapi_document())


@bp.get("/projects/list")
def list_projects():
    params = parse_query_string(PageParams)
    session = get_session()
    where = [Project.org_id == g.caller.org_id]
    if g.caller.project_scope is not None:
        where.append(Project.id == g.caller.project_scope)
    total = session.scalar(select(func.count()).select_from(Project).where(*where))
    rows = session.scalars(
        select(Project).where(*where).order_by(Project.name, Project.id)
        .limit(params.limit).offset((params.page - 1) * params.limit)
    ).all()
    return page_of(total, params, [project_record(row) for row in rows])


@bp.post("/queries/list")
def list_queries():
    session, project_id, body = project_call(QueryListBody)
    total, rows, tags = listing.list_queries(session, project_id, body, engine.held())
    records = query_records(rows, tags)
    # An extension: which rule added a link on entry, only where one did (docs/api.md).
    sources = entry_rules.sources(session.connection(), [row.pk for row in rows])
    for row, record in zip(rows, records, strict=True):
        if row.pk in sources:
            record["tagSources"] = {str(tag_id): source
                                    for tag_id, source in sorted(sources[row.pk].items())}
    return page_of(total, body, records)


@bp.post("/queries/facets")
def facets():
    """An extension: how many queries the filter matches, and how many it would match with
    each language, country or tag chosen instead (docs/api.md)."""
    session, project_id, body = project_call(QueryFilterBody)
    return json_response(listing.facets(session, project_id, body, engine.held()))


@bp.patch("/queries/many/tags-only")
def set_tags_on_many():
    session, project_id, body = project_call(SetTagsBody)
    return json_response(tagging.set_tags(session, project_id, body.queries, read_actor()))


@bp.post("/tags/list")
def list_tags():
    session, project_id, body = project_call(TagListBody)
    total, rows = search.list_tags(session, project_id, body)
    return page_of(total, body, [tag_record(row) for row in rows])


@bp.post("/tags/create")
def create_tag():
    """An extension: a new tag in the project of x-project-id (201, the tag's record)."""
    session, project_id, body = project_call(CreateTagBody)
    response = jsonify(tag_record(tag_creation.create_tag(session, project_id, body)))
    response.status_code = 201
    return response


@bp.post("/tags/update")
def update_tag():
    """An extension: a tag renamed, recoloured or described (its record)."""
    session, project_id, body = project_call(UpdateTagBody)
    return json_response(tag_changes.update_tag(session, project_id, body))


@bp.post("/tags/merge")
def merge_tag():
    """An extension: a tag merged into another, in one step (undone by tags/unmerge)."""
    session, project_id, body = project_call(MergeTagBody)
    return json_response(tag_changes.merge_tag(session, project_id, body))


@bp.post("/tags/unmerge")
def unmerge_tag():
    """An extension: a merge undone: the tag back with its id and its links."""
    session, project_id, body = project_call(UnmergeTagBody)
    return json_response(tag_changes.unmerge_tag(session, project_id, body))


def created(record: dict) -> Response:
    response = json_response(record)
    response.status_code = 201
    return response


@bp.post("/views/list")
def list_views():
    """An extension: every saved view of the project, by name, each with its live count."""
    session, project_id, _body = project_call(ViewListBody)
    return json_response({"results": saved_views.list_views(session, project_id,
                                                            engine.held())})


@bp.post("/views/create")
def create_view():
    """An extension: a new saved view (201, its record)."""
    session, project_id, body = project_call(CreateViewBody)
    return created(saved_views.create_view(session, project_id, body, engine.held()))


@bp.post("/views/update")
def update_view():
    """An extension: a view renamed, or given another filter or sort (its record)."""
    session, project_id, body = project_call(UpdateViewBody)
    return json_response(saved_views.update_view(session, project_id, body, engine.held()))


@bp.post("/views/delete")
def delete_view():
    """An extension: a view deleted (200, {"deleted": id})."""
    session, project_id, body = project_call(ViewIdBody)
    return json_response(saved_views.delete_view(session, project_id, body))


@bp.post("/rules/list")
def list_rules():
    """An extension: every rule of the project, by name, each with its live counts."""
    session, project_id, _body = project_call(rules.RuleListBody)
    return json_response({"results": rules.list_rules(session, project_id, engine.held())})


@bp.post("/rules/preview")
def preview_rule():
    """An extension: what a rule would match, and a sample of what lacks its tags."""
    session, project_id, body = project_call(rules.RulePreviewBody)
    return json_response(rules.preview(session, project_id, body, engine.held()))


@bp.post("/rules/create")
def create_rule():
    """An extension: a new rule (201, its record)."""
    session, project_id, body = project_call(rules.CreateRuleBody)
    return created(rules.create_rule(session, project_id, body, engine.held()))


@bp.post("/rules/update")
def update_rule():
    """An extension: a rule renamed, or given another condition or tags (its record)."""
    session, project_id, body = project_call(rules.UpdateRuleBody)
    return json_response(rules.update_rule(session, project_id, body, engine.held()))


@bp.post("/rules/pause")
def pause_rule():
    """An extension: a rule paused or resumed (its record)."""
    session, project_id, body = project_call(rules.PauseRuleBody)
    return json_response(rules.pause_rule(session, project_id, body, engine.held()))


@bp.post("/rules/apply")
def apply_rule():
    """An extension: the next part of a rule's current matches gets its tags."""
    session, project_id, body = project_call(rules.ApplyRuleBody)
    return json_response(rules.apply_rule(session, project_id, body, engine.held()))


@bp.post("/rules/unapply")
def unapply_rule():
    """An extension: the next part of the tags a rule added is taken away (kept to restore)."""
    session, project_id, body = project_call(rules.UnapplyRuleBody)
    return json_response(rules.unapply_rule(session, project_id, body))


@bp.post("/rules/restore")
def restore_rule():
    """An extension: the next part of the tags an unapply took away is put back."""
    session, project_id, body = project_call(rules.RestoreRuleBody)
    return json_response(rules.restore_rule(session, project_id, body))


@bp.post("/rules/delete")
def delete_rule():
    """An extension: a rule deleted (200, {"deleted": id})."""
    session, project_id, body = project_call(rules.RuleIdBody)
    return json_response(rules.delete_rule(session, project_id, body))
