"""Administrative operations behind the command line (and the tests and the demo)."""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name, tag_name_problem
from weblib.text_rules import has_forbidden_character

from ..bodies.validation import MAX_CODE, MAX_STRING
from ..engine import bulk_load, inserting
from ..store.models import ApiKey, Organization, Project, Tag, is_uuid, utcnow
from . import keys

COLOR = re.compile(r"#[0-9a-fA-F]{6}")


class AdminError(ValueError):
    """A sentence for the person at the command line."""


def project_by_id(session: Session, project_id: str) -> Project | None:
    """The project with this id; None for any other string, a name included."""
    return session.get(Project, project_id) if is_uuid(project_id) else None


def create_org(session: Session, name: str) -> str:
    org = Organization(name=_text(name, "organization name"))
    session.add(org)
    session.flush()
    return org.id


def create_key(session: Session, org_id: str, prefix: str, project_id: str | None = None,
               name: str = "") -> str:
    _organization(session, org_id)
    if project_id is not None:
        project = project_by_id(session, project_id)
        if project is None or project.org_id != org_id:
            raise AdminError(f"No project {project_id} in organization {org_id}.")
    key = keys.generate(prefix)
    session.add(ApiKey(
        org_id=org_id, project_id=project_id, name=name, key_hash=keys.digest(key),
        prefix=keys.visible_prefix(key), last_four=key[-4:],
    ))
    session.flush()
    return key


def revoke_key(session: Session, key: str) -> None:
    found = session.scalar(select(ApiKey).where(ApiKey.key_hash == keys.digest(key)))
    if found is None:
        raise AdminError("No such key.")
    if found.revoked_at is None:
        found.revoked_at = utcnow()


def create_project(session: Session, org_id: str, name: str,
                   currency: str | None = None) -> str:
    """A new project; `currency`: the ISO 4217 code of its queries' CPC, if said."""
    _organization(session, org_id)
    project = Project(org_id=org_id, name=_text(name, "project name"), currency=currency)
    session.add(project)
    session.flush()
    return project.id


def create_tag(session: Session, project_id: str, name: str, color: str) -> int:
    if project_by_id(session, project_id) is None:
        raise AdminError(f"No project {project_id}.")
    if not COLOR.fullmatch(color):
        raise AdminError(f"Colour {color!r} is not #RRGGBB.")
    name = _text(name, "tag name")
    problem = tag_name_problem(name)
    if problem:
        raise AdminError(f"The tag name {problem}.")
    exists = session.scalar(select(Tag.id).where(
        Tag.project_id == project_id, Tag.name_folded == fold_tag_name(name)))
    if exists is not None:
        raise AdminError(f"The project already has a tag named {name!r}.")
    tag = Tag(project_id=project_id, name=name, name_folded=fold_tag_name(name),
              color=color.lower())
    session.add(tag)
    session.flush()
    return tag.id


def set_limits(session: Session, org_id: str, per_second: int, per_minute: int,
               per_hour: int) -> None:
    org = _organization(session, org_id)
    if min(per_second, per_minute, per_hour) < 1:
        raise AdminError("Limits must be positive whole numbers.")
    org.limit_per_second, org.limit_per_minute, org.limit_per_hour = (
        per_second, per_minute, per_hour)


def normalize_query(query: str, language: str, country: str) -> tuple[str, str, str]:
    return query_key(_text(query, "query", MAX_STRING), _text(language, "language", MAX_CODE),
                     _text(country, "country", MAX_CODE))


def query_key(query: str, language: str, country: str) -> tuple[str, str, str]:
    """A query's key as stored, from trimmed values already checked: the language in lower
    case, the country in upper case."""
    return query, language.lower(), country.upper()


NewQuery = bulk_load.NewQuery  # query, language, country, tags, time
insert_queries = inserting.insert_queries


def find_org(session: Session, name_or_id: str) -> str:
    """The id of the organization with this id or, failing that, with this name. A name that
    several organizations share is refused with their ids, to use instead."""
    value = name_or_id.strip()
    if value and session.get(Organization, value) is not None:
        return value
    ids = list(session.scalars(select(Organization.id).where(Organization.name == value)
                               .order_by(Organization.created_at, Organization.id)))
    if not ids:
        raise AdminError(f"No organization has the id or the name {value!r}.")
    if len(ids) > 1:
        raise AdminError(f"{len(ids)} organizations are named {value!r}: give the id of the "
                         f"one you mean instead: {', '.join(ids)}.")
    return ids[0]


def _organization(session: Session, org_id: str) -> Organization:
    org = session.get(Organization, org_id)
    if org is None:
        raise AdminError(f"No organization {org_id}.")
    return org


def _text(value: str, what: str, max_length: int = 200) -> str:
    value = value.strip()
    if not value:
        raise AdminError(f"The {what} is empty.")
    if len(value) > max_length:
        raise AdminError(f"The {what} is longer than {max_length} characters.")
    if has_forbidden_character(value):
        raise AdminError(f"The {what} contains control characters.")
    return value
