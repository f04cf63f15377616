"""Administrative operations behind the command line (and the tests and the demo)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import contextmanager
from itertools import chain, islice

from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name, tag_name_problem
from weblib.text_rules import has_forbidden_character

from . import bitmap_index, bulk_load, keys
from .models import (
    ApiKey,
    Organization,
    Project,
    Query,
    Tag,
    is_uuid,
    new_uuid,
    query_tags,
    utcnow,
)
from .validation import MAX_CODE, MAX_STRING

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


def create_project(session: Session, org_id: str, name: str) -> str:
    _organization(session, org_id)
    project = Project(org_id=org_id, name=_text(name, "project name"))
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


# From this many rows a call is a bulk load (service/bulk_load.py); fewer go row by row, through
# the triggers.
BULK_ROWS = 500


def insert_queries(session: Session, project_id: str, rows: Iterable[NewQuery],
                   batch_size: int = 5000) -> int:
    """Insert normalized rows in batches (at most `batch_size` rows held at a time); a key the
    project already has, or that an earlier row repeats, is skipped. Returns how many were
    added."""
    iterator = iter(rows)
    batches = iter(lambda: list(islice(iterator, batch_size)), [])
    first = next(batches, [])
    if len(first) >= min(BULK_ROWS, batch_size):
        return bulk_load.insert(session, project_id, chain([first], batches))
    count = 0
    with _derived_once(session) as inserted_pks:
        for batch in chain([first], batches):
            count += _insert_batch(session, project_id, batch, inserted_pks)
    return count


@contextmanager
def _derived_once(session: Session):
    """PostgreSQL: the short-term counters of every query inserted here are updated once, at
    the end, in this transaction, instead of once per INSERT statement (migration 0009 says
    why), and they and their links added to the bitmap index (service/bitmap_index.py).
    Yields the list to put the inserted row keys in."""
    if session.get_bind().dialect.name != "postgresql":
        yield []
        return
    session.execute(text("SELECT set_config('tagdesk.defer_text_grams', 'on', true)"))
    bitmap_index.follow(session.connection())
    inserted_pks: list[int] = []
    yield inserted_pks
    session.execute(text("SELECT set_config('tagdesk.defer_text_grams', 'off', true)"))
    bitmap_index.follow(session.connection(), False)
    if inserted_pks:
        session.execute(text("SELECT tagdesk_count_text_grams_of(CAST(:pks AS integer[]))"),
                        {"pks": inserted_pks})
        bitmap_index.add_inserted(session.connection(), inserted_pks)


def _insert_batch(session: Session, project_id: str, batch: list[NewQuery],
                  inserted_pks: list[int]) -> int:
    unique: dict[tuple[str, str, str], NewQuery] = {}
    for row in batch:
        unique.setdefault(row[:3], row)
    existing = {tuple(row) for row in session.execute(
        select(Query.query, Query.language, Query.country).where(
            Query.project_id == project_id, Query.query.in_({key[0] for key in unique})))}
    fresh = [row for key, row in unique.items() if key not in existing]
    if not fresh:
        return 0
    ids = [new_uuid() for _ in fresh]
    now = utcnow()
    _insert_rows(session, Query.__table__, [
        {"id": query_id, "project_id": project_id, "query": q, "language": lang,
         "country": country, "updated_at": updated_at or now}
        for query_id, (q, lang, country, _, updated_at) in zip(ids, fresh, strict=True)
    ])
    pk_by_id = {query_id: pk for query_id, pk in session.execute(
        select(Query.id, Query.pk).where(Query.id.in_(ids)))}
    inserted_pks.extend(pk_by_id.values())
    links = [{"query_pk": pk_by_id[query_id], "tag_id": tag_id, "updated_at": row[4] or now}
             for query_id, row in zip(ids, fresh, strict=True) for tag_id in set(row[3])]
    if links:
        _insert_rows(session, query_tags, links)
    return len(fresh)


def _insert_rows(session: Session, table, rows: list[dict], per_statement: int = 1000) -> None:
    """On PostgreSQL, multi-row INSERT statements: the driver would otherwise send one
    statement per row, and the statement-level trigger keeping the project's query counter
    would run once per row. SQLite's executemany is already the fast path there."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(insert(table), rows)
        return
    for start in range(0, len(rows), per_statement):
        session.execute(insert(table).values(rows[start:start + per_statement]))


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
