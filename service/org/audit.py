"""The settings activity log: who changed what, and when.

Key actions (generated, revoked) keep the key's ends in `key_events`; every other change —
projects, tags, imports, people, rules — is an `org_events` row, written by
service/org/org_record.py (its functions are named here too, as the settings' pages call them).
A person's action carries their user id and email (the email stays when the person is
removed); the command line's carries neither. Rows are written in the same transaction as the
change itself, so there is no change without its record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ..store.models import ApiKey, KeyEvent, OrgEvent, utcnow
from . import keys
from .org_record import CHANGES, email_of
from .org_record import ByImport as ByImport
from .org_record import record_change as record_change
from .org_record import record_tag_change as record_tag_change

GENERATED = "generated"
REVOKED = "revoked"


def record(session: Session, api_key: ApiKey, action: str, user_id: int | None = None,
           form_token: str | None = None) -> KeyEvent:
    event = KeyEvent(
        org_id=api_key.org_id, user_id=user_id, action=action, key_id=api_key.id,
        key_prefix=api_key.prefix, key_last_four=api_key.last_four, key_name=api_key.name,
        form_token=form_token, at=utcnow(), actor_email=email_of(session, user_id),
    )
    session.add(event)
    session.flush()
    return event


def key_by_value(session: Session, key: str) -> ApiKey | None:
    return session.scalar(select(ApiKey).where(ApiKey.key_hash == keys.digest(key)))


def events(session: Session, org_id: str, limit: int, offset: int = 0) -> list[KeyEvent]:
    return list(session.scalars(
        select(KeyEvent).where(KeyEvent.org_id == org_id)
        .order_by(KeyEvent.at.desc(), KeyEvent.id.desc()).limit(limit).offset(offset)
    ))


def count(session: Session, org_id: str) -> int:
    return session.scalar(
        select(func.count()).select_from(KeyEvent).where(KeyEvent.org_id == org_id)) or 0


def event_for_form(session: Session, form_token: str) -> KeyEvent | None:
    return session.scalar(select(KeyEvent).where(KeyEvent.form_token == form_token))


@dataclass(frozen=True)
class Entry:
    """One line of the activity log, whatever kind of change it records."""

    at: datetime
    who: str | None  # the email of the person signed in; None through the API or the command line
    action: str      # in words
    subject: str
    detail: str = ""
    key: str = ""    # a key's ends, for key actions
    through: str = ""  # the key a change through the API was made with: "“Staff” tdk_live_…1a2b"
    # What the API caller says of who made the change (X-Tagdesk-Actor): a label, not a
    # person signed in, so it is only ever shown beside `through`.
    label: str | None = None


def _key_entry(event: KeyEvent) -> Entry:
    who = event.actor_email or (event.user.email if event.user else None)
    return Entry(event.at, who, "Key generated" if event.action == GENERATED else "Key revoked",
                 event.key_name or "Unnamed key",
                 key=keys.mask(event.key_prefix, event.key_last_four))


def _change_entry(event: OrgEvent) -> Entry:
    through = ""
    if event.key_prefix is not None:
        name = f"“{event.key_name}”" if event.key_name else "an unnamed key"
        through = f"{name} {keys.mask(event.key_prefix, event.key_last_four)}"
    return Entry(event.at, event.actor_email, CHANGES.get(event.action, event.action),
                 event.subject, event.detail, through=through,
                 label=event.actor_name if through else None)


def log_count(session: Session, org_id: str) -> int:
    changes = session.scalar(
        select(func.count()).select_from(OrgEvent).where(OrgEvent.org_id == org_id)) or 0
    return count(session, org_id) + changes


def log(session: Session, org_id: str, limit: int, offset: int = 0) -> list[Entry]:
    """Key events and other changes together, newest first (each table read only as far as
    the page needs)."""
    depth = offset + limit
    key_events = [_key_entry(e) for e in events(session, org_id, depth)]
    changes = [_change_entry(e) for e in session.scalars(
        select(OrgEvent).where(OrgEvent.org_id == org_id)
        .order_by(OrgEvent.at.desc(), OrgEvent.id.desc()).limit(depth))]
    merged = sorted(key_events + changes, key=lambda entry: entry.at, reverse=True)
    return merged[offset:depth]
