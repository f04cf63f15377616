"""The record of key actions: who generated or revoked which key, and when.

A person's action carries their user id; the command line's carries none. Rows are written
in the same transaction as the action itself, so there is no key without its record.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from .. import keys
from ..models import ApiKey, KeyEvent, utcnow

GENERATED = "generated"
REVOKED = "revoked"


def record(session: Session, api_key: ApiKey, action: str, user_id: int | None = None,
           form_token: str | None = None) -> KeyEvent:
    event = KeyEvent(
        org_id=api_key.org_id, user_id=user_id, action=action, key_id=api_key.id,
        key_prefix=api_key.prefix, key_last_four=api_key.last_four, key_name=api_key.name,
        form_token=form_token, at=utcnow(),
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
