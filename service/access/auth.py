"""Who is calling: the organization behind `x-api-key`, and the project in `x-project-id`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from flask import current_app, request
from sqlalchemy import bindparam, exists, select, update
from sqlalchemy.orm import Session

from ..bodies.errors import BadRequest, NotFound, Unauthorized
from ..org import keys
from ..store.db import begin_write
from ..store.models import ApiKey, Organization, Project, is_uuid, utcnow

MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class Caller:
    org_id: str
    key_id: int
    project_scope: str | None  # a project-scoped key's project, else None
    limits: tuple[int, int, int]
    # The x-project-id read with the key, and whether the organization owns it: the routes
    # that need a project then ask nothing more of the database.
    checked_project: str | None = None
    owns_checked_project: bool = False


_keys, _orgs, _projects = ApiKey.__table__, Organization.__table__, Project.__table__

# One Core statement, built once: the key, its organization's limits and, when a project is
# named, whether that organization owns it. Never cached across requests: a revoked key is
# refused by the very next request, in every process.
CALLER_STATEMENT = (
    select(
        _keys.c.id, _keys.c.org_id, _keys.c.project_id, _keys.c.key_hash, _keys.c.last_used_at,
        _orgs.c.limit_per_second, _orgs.c.limit_per_minute, _orgs.c.limit_per_hour,
        exists().where(_projects.c.id == bindparam("project_id"),
                       _projects.c.org_id == _keys.c.org_id).label("owns_project"),
    )
    .join(_orgs, _orgs.c.id == _keys.c.org_id)
    .where(_keys.c.key_hash == bindparam("digest"), _keys.c.revoked_at.is_(None))
)


def authenticate(session: Session) -> Caller:
    presented = request.headers.get("x-api-key", "").strip()
    if not presented:
        raise Unauthorized("Missing x-api-key header.")
    if len(presented) > MAX_KEY_LENGTH:
        raise Unauthorized("Invalid API key.")
    project_id = _project_id_or_none()
    row = session.connection().execute(
        CALLER_STATEMENT, {"digest": keys.digest(presented), "project_id": project_id}
    ).first()
    if row is None or not keys.matches(row.key_hash, presented):
        raise Unauthorized("Invalid API key.")
    _record_use(session, row.id, row.last_used_at)
    defaults = current_app.config["DEFAULT_LIMITS"]
    return Caller(
        row.org_id,
        row.id,
        row.project_id,
        (row.limit_per_second or defaults[0], row.limit_per_minute or defaults[1],
         row.limit_per_hour or defaults[2]),
        project_id,
        bool(row.owns_project) and project_id is not None,
    )


def _record_use(session: Session, key_id: int, last_used_at) -> None:
    now = utcnow()
    precision = timedelta(seconds=current_app.config["LAST_USED_PRECISION"])
    if last_used_at is None or now - last_used_at >= precision:
        begin_write(session)
        session.execute(update(ApiKey).where(ApiKey.id == key_id).values(last_used_at=now))
        session.commit()


def _project_id_or_none() -> str | None:
    try:
        return project_id_header()
    except BadRequest:
        return None  # reported by the route that needs a project, after the rate limit


def project_id_header() -> str:
    value = request.headers.get("x-project-id", "").strip()
    if not value:
        raise BadRequest(["Missing x-project-id header."])
    value = value.lower()
    if not is_uuid(value):
        raise BadRequest(["x-project-id must be a project UUID."])
    return value


def resolve_project(session: Session, caller: Caller) -> str:
    project_id = project_id_header()
    if caller.project_scope is not None and caller.project_scope != project_id:
        raise NotFound("Project not found.")
    if caller.checked_project == project_id:
        found = caller.owns_checked_project
    else:
        found = session.scalar(select(Project.id).where(
            Project.id == project_id, Project.org_id == caller.org_id)) is not None
    if not found:
        raise NotFound("Project not found.")
    return project_id
