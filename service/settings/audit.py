"""The settings activity log: who changed what, and when.

Key actions (generated, revoked) keep the key's ends in `key_events`; every other change —
projects, tags, imports, people, rules — is an `org_events` row. A person's action carries their
user id and email (the email stays when the person is removed); the command line's carries
neither. Rows are written in the same transaction as the change itself, so there is no
change without its record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .. import keys
from ..auth import api_origin
from ..models import ApiKey, KeyEvent, OrgEvent, User, utcnow

GENERATED = "generated"
REVOKED = "revoked"


# What each change is called in the log.
CHANGES = {
    "project.created": "Project created",
    "project.renamed": "Project renamed",
    "tag.created": "Tag created",
    "tag.edited": "Tag edited",
    "tag.deleted": "Tag deleted",
    "tag.merged": "Tag merged",
    "tag.unmerged": "Tag merge undone",
    "import.finished": "Queries imported",
    "import.failed": "Import failed",
    "person.added": "Administrator added",
    "person.removed": "Administrator removed",
    "person.password_set": "Password set",
    "person.link_renewed": "New password link",
    # Rules (service/rules.py), changed through the API.
    "rule.created": "Rule created",
    "rule.changed": "Rule changed",
    "rule.paused": "Rule paused",
    "rule.resumed": "Rule resumed",
    "rule.deleted": "Rule deleted",
    "rule.applied": "Rule applied",
    "rule.unapplied": "Rule's tags taken away",
    "rule.restored": "Rule's tags put back",
}


def _email(session: Session, user_id: int | None) -> str | None:
    if user_id is None:
        return None
    user = session.get(User, user_id)
    return user.email if user is not None else None


def record(session: Session, api_key: ApiKey, action: str, user_id: int | None = None,
           form_token: str | None = None) -> KeyEvent:
    event = KeyEvent(
        org_id=api_key.org_id, user_id=user_id, action=action, key_id=api_key.id,
        key_prefix=api_key.prefix, key_last_four=api_key.last_four, key_name=api_key.name,
        form_token=form_token, at=utcnow(), actor_email=_email(session, user_id),
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


def record_change(session: Session, org_id: str, action: str, subject: str,
                  detail: str = "", user_id: int | None = None) -> OrgEvent:
    """A change other than a key's: `action` is one of CHANGES, `subject` names what changed
    (a project's or tag's name, an email), `detail` says more in words."""
    if action not in CHANGES:
        raise ValueError(f"unknown change {action!r}")
    event = OrgEvent(org_id=org_id, user_id=user_id, actor_email=_email(session, user_id),
                     action=action, subject=subject[:300], detail=detail[:500], at=utcnow())
    origin = api_origin() if user_id is None else None
    key = session.get(ApiKey, origin.key_id) if origin is not None else None
    if key is not None:  # made through the API: the key, and whom its caller names
        event.key_prefix, event.key_last_four, event.key_name = \
            key.prefix, key.last_four, key.name
        event.actor_name = origin.actor
    session.add(event)
    session.flush()
    return event


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
