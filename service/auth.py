"""Who is calling: the organization behind `x-api-key`, and the project in `x-project-id`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app, request
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from . import keys
from .db import begin_write
from .errors import BadRequest, NotFound, Unauthorized
from .models import ApiKey, Organization, Project, utcnow

UUID_PATTERN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
MAX_KEY_LENGTH = 200


@dataclass(frozen=True)
class Caller:
    org_id: str
    key_id: int
    project_scope: str | None  # a project-scoped key's project, else None
    limits: tuple[int, int, int]


def organization_limits(org: Organization, defaults: tuple[int, int, int]):
    return (
        org.limit_per_second or defaults[0],
        org.limit_per_minute or defaults[1],
        org.limit_per_hour or defaults[2],
    )


def authenticate(session: Session) -> Caller:
    presented = request.headers.get("x-api-key", "").strip()
    if not presented:
        raise Unauthorized("Missing x-api-key header.")
    if len(presented) > MAX_KEY_LENGTH:
        raise Unauthorized("Invalid API key.")
    digest = keys.digest(presented)
    api_key = session.scalar(
        select(ApiKey).where(ApiKey.key_hash == digest, ApiKey.revoked_at.is_(None))
    )
    if api_key is None or not keys.matches(api_key.key_hash, presented):
        raise Unauthorized("Invalid API key.")
    _record_use(session, api_key)
    return Caller(
        api_key.org_id,
        api_key.id,
        api_key.project_id,
        organization_limits(api_key.organization, current_app.config["DEFAULT_LIMITS"]),
    )


def _record_use(session: Session, api_key: ApiKey) -> None:
    now = utcnow()
    precision = timedelta(seconds=current_app.config["LAST_USED_PRECISION"])
    if api_key.last_used_at is None or now - api_key.last_used_at >= precision:
        begin_write(session)
        session.execute(update(ApiKey).where(ApiKey.id == api_key.id).values(last_used_at=now))
        session.commit()


def project_id_header() -> str:
    value = request.headers.get("x-project-id", "").strip()
    if not value:
        raise BadRequest(["Missing x-project-id header."])
    value = value.lower()
    if not UUID_PATTERN.fullmatch(value):
        raise BadRequest(["x-project-id must be a project UUID."])
    return value


def resolve_project(session: Session, caller: Caller) -> str:
    project_id = project_id_header()
    if caller.project_scope is not None and caller.project_scope != project_id:
        raise NotFound("Project not found.")
    found = session.scalar(
        select(Project.id).where(Project.id == project_id, Project.org_id == caller.org_id)
    )
    if found is None:
        raise NotFound("Project not found.")
    return found
