"""The four endpoints of the reference, the public OpenAPI document, and the extensions of
the reference (marked `x-tagdesk-extension` in docs/openapi.yaml): creating a tag, the
facets of a filter (and the filter's own extensions, service/bodies/validation.py), saved views,
rules (service/api/rules.py), the tag sources of query records and adding and removing tags on
many queries (service/api/tag_edits.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import Blueprint, Response, current_app, g, jsonify, request
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .. import engine
from ..access.auth import project_id_header, resolve_project
from ..bodies.records import (
    add_numbers,
    page_object,
    project_record,
    query_records,
    tag_record,
    tagged_records,
    timestamp,
)
from ..bodies.validation import (
    CreateTagBody,
    CreateViewBody,
    FacetsBody,
    MergeTagBody,
    Paged,
    PageParams,
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
from ..engine import entry_rules, tagging
from ..learning.learner import of_app
from ..store.db import get_session
from ..store.models import Project
from . import (
    import_listing,
    query_filters,
    query_versions,
    rules,
    saved_views,
    search,
    suggestions,
    tag_changes,
    tag_creation,
    tag_edits,
    words,
)
from .openapi import openapi_document
from .protocol import json_response

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


def extension(path: str, body_model: type[Strict], action: Callable[..., dict], *,
              held: bool = False, status: int = 200, name: str | None = None) -> None:
    """POST /api`path`, an extension of one project that answers with a record: its body
    parsed as `body_model`, its answer `action(session, project_id, body)` (with
    `engine.held()` after them where `held`) as JSON, with `status`. The endpoint is named
    `name`, or as the action."""

    def view() -> Response:
        session, project_id, body = project_call(body_model)
        response = json_response(action(session, project_id, body,
                                        *((engine.held(),) if held else ())))
        response.status_code = status
        return response

    bp.add_url_rule(path, name or action.__name__, view, methods=["POST"])


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


def _source_record(source: dict) -> dict:
    """Where a link came from (entry_rules.sources), its time as the API writes times."""
    if "addedAt" in source:
        return {**source, "addedAt": timestamp(source["addedAt"])}
    return source


@bp.post("/queries/list")
def list_queries():
    session, project_id, body = project_call(QueryListBody)
    total, rows, tags = query_filters.list_queries(session, project_id, body, engine.held())
    records = query_records(rows, tags)
    if "metrics" in body.include:
        add_numbers(rows, records)
    # An extension: which rule added a link on entry, only where one did (docs/api.md).
    sources = entry_rules.sources(session.connection(), [row.pk for row in rows])
    if "suggestions" in body.include:  # an extension: each query's suggested tags
        suggested = suggestions.suggestions_of(session, project_id, [row.pk for row in rows],
                                               body.minConfidence)
        for row, record in zip(rows, records, strict=True):
            record["suggestions"] = suggested.get(row.pk, [])
    for row, record in zip(rows, records, strict=True):
        if row.pk in sources:
            record["tagSources"] = {str(tag_id): _source_record(source)
                                    for tag_id, source in sorted(sources[row.pk].items())}
    return page_of(total, body, records)


# How many queries the filter matches, and how many it would match with each language,
# country or tag chosen instead (docs/api.md).
extension("/queries/facets", FacetsBody, query_filters.facets, held=True)


# The words and two-word phrases most of a filter's queries contain, with their counts.
extension("/queries/words", words.WordsBody, words.words, held=True, name="common_words")


# When each of some queries, named by id, was last changed: what a page polls to learn
# whether the rows it shows changed under it.
extension("/queries/versions", query_versions.QueryVersionsBody,
          query_versions.query_versions)


# A project's imports, newest first (read-only).
extension("/imports/list", import_listing.ImportListBody, import_listing.list_imports)


@bp.patch("/queries/many/tags-only")
def set_tags_on_many():
    session, project_id, body = project_call(SetTagsBody)
    return json_response(tagged_records(
        tagging.set_tags(session, project_id, body.queries, read_actor())))


@bp.patch("/queries/many/tags-edit")
def edit_tags_on_many():
    """An extension: tags added to and removed from many queries, the others they carry
    kept (set-tags' items, answer and rules otherwise)."""
    session, project_id, body = project_call(tag_edits.EditTagsBody)
    return json_response(tag_edits.edit_tags(session, project_id, body.queries,
                                             read_actor()))


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


# A tag renamed, recoloured or described (its record).
extension("/tags/update", UpdateTagBody, tag_changes.update_tag)


# A tag merged into another, in one step (undone by tags/unmerge).
extension("/tags/merge", MergeTagBody, tag_changes.merge_tag)


# A merge undone: the tag back with its id and its links.
extension("/tags/unmerge", UnmergeTagBody, tag_changes.unmerge_tag)


@bp.post("/views/list")
def list_views():
    """An extension: every saved view of the project, by name, each with its live count."""
    session, project_id, _body = project_call(ViewListBody)
    return json_response({"results": saved_views.list_views(session, project_id,
                                                            engine.held())})


# A new saved view (201, its record).
extension("/views/create", CreateViewBody, saved_views.create_view, held=True, status=201)


# A view renamed, or given another filter or sort (its record).
extension("/views/update", UpdateViewBody, saved_views.update_view, held=True)


# A view deleted (200, {"deleted": id}).
extension("/views/delete", ViewIdBody, saved_views.delete_view)


@bp.post("/rules/list")
def list_rules():
    """An extension: every rule of the project, by name, each with its live counts."""
    session, project_id, _body = project_call(rules.RuleListBody)
    return json_response({"results": rules.list_rules(session, project_id, engine.held())})


# What a rule would match, and a sample of what lacks its tags.
extension("/rules/preview", rules.RulePreviewBody, rules.preview, held=True,
          name="preview_rule")


# A new rule (201, its record).
extension("/rules/create", rules.CreateRuleBody, rules.create_rule, held=True, status=201)


# A rule renamed, or given another condition or tags (its record).
extension("/rules/update", rules.UpdateRuleBody, rules.update_rule, held=True)


# A rule paused or resumed (its record).
extension("/rules/pause", rules.PauseRuleBody, rules.pause_rule, held=True)


# The next part of a rule's current matches gets its tags.
extension("/rules/apply", rules.ApplyRuleBody, rules.apply_rule, held=True)


# The next part of the tags a rule added is taken away (kept to restore).
extension("/rules/unapply", rules.UnapplyRuleBody, rules.unapply_rule)


# The next part of the tags an unapply took away is put back.
extension("/rules/restore", rules.RestoreRuleBody, rules.restore_rule)


# A rule deleted (200, {"deleted": id}).
extension("/rules/delete", rules.RuleIdBody, rules.delete_rule)


# Suggested tags: their status, Refresh (202: learning starts in the background), accepting
# (a part at a time) and rejecting (service/api/suggestions.py).
extension("/suggestions/status", suggestions.StatusBody, suggestions.status, held=True,
          name="suggestions_status")
extension("/suggestions/refresh", suggestions.RefreshBody, suggestions.refresh, status=202,
          name="suggestions_refresh")
extension("/suggestions/accept", suggestions.AcceptBody, suggestions.accept, held=True,
          name="suggestions_accept")
extension("/suggestions/reject", suggestions.RejectBody, suggestions.reject,
          name="suggestions_reject")

# The writes of links after which suggestions may be learned again (the learner decides).
LINK_WRITES = {"edit_tags_on_many", "set_tags_on_many", "apply_rule", "unapply_rule",
               "restore_rule", "merge_tag", "unmerge_tag"}


@bp.after_request
def learn_when_due(response: Response) -> Response:
    endpoint = (request.endpoint or "").rpartition(".")[2]
    if endpoint in LINK_WRITES and request.method in ("POST", "PATCH") \
            and response.status_code < 300:
        of_app(current_app).after_write(project_id_header())
    return response
