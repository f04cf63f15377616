"""The four endpoints of the reference, the public OpenAPI document, and one extension of
the reference: creating a tag (marked `x-tagdesk-extension` in docs/openapi.yaml)."""

from __future__ import annotations

from flask import Blueprint, current_app, g, jsonify
from sqlalchemy import func, select

from . import search, tag_creation, tagging
from .auth import resolve_project
from .db import get_session
from .models import Project
from .openapi import openapi_document
from .records import page_object, project_record, query_record, tag_record
from .validation import (
    CreateTagBody,
    PageParams,
    QueryListBody,
    SetTagsBody,
    TagListBody,
    parse,
    parse_query_string,
    read_json,
)

bp = Blueprint("api", __name__, url_prefix="/api")


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
    return jsonify({
        "page": page_object(total, params.page, params.limit),
        "results": [project_record(row) for row in rows],
    })


@bp.post("/queries/list")
def list_queries():
    session = get_session()
    project_id = resolve_project(session, g.caller)
    body = parse(QueryListBody, read_json())
    total, rows, tags = search.list_queries(
        session, project_id, body, current_app.extensions["tagdesk_match_counts"])
    return jsonify({
        "page": page_object(total, body.page, body.limit),
        "results": [query_record(row, tags.get(row.pk, [])) for row in rows],
    })


@bp.patch("/queries/many/tags-only")
def set_tags_on_many():
    session = get_session()
    project_id = resolve_project(session, g.caller)
    body = parse(SetTagsBody, read_json())
    return jsonify(tagging.set_tags(session, project_id, body.queries))


@bp.post("/tags/list")
def list_tags():
    session = get_session()
    project_id = resolve_project(session, g.caller)
    body = parse(TagListBody, read_json())
    total, rows = search.list_tags(session, project_id, body)
    return jsonify({
        "page": page_object(total, body.page, body.limit),
        "results": [tag_record(row) for row in rows],
    })


@bp.post("/tags/create")
def create_tag():
    """An extension: a new tag in the project of x-project-id (201, the tag's record)."""
    session = get_session()
    project_id = resolve_project(session, g.caller)
    body = parse(CreateTagBody, read_json())
    response = jsonify(tag_record(tag_creation.create_tag(session, project_id, body)))
    response.status_code = 201
    return response
