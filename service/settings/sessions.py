"""Signed-in sessions of the settings area, kept by the server (table `settings_sessions`,
migration 0024).

The browser's cookie (signed by Flask) carries a random secret of 256 bits; the database keeps
only its SHA-256, who it signs in and until when. A session is a row, so it can be ended where
the server is: signing out deletes it, removing a person deletes all of theirs (the foreign key
cascades, and the removal deletes them too), and a new password deletes every session of its
person but the one that set it. A copied cookie then names nothing, and never will again: the
secret is random, and a row's person is never another one (ids are never given twice, 0024).

It is the service's own database, so it works the same on SQLite and PostgreSQL, with Redis or
without, in one process or many.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..store.models import SettingsSession, User, utcnow

MAX_SECRET = 100  # longer is not one of ours: not even looked up


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _usable(secret: object) -> bool:
    return isinstance(secret, str) and 0 < len(secret) <= MAX_SECRET


def start(db: Session, user_id: int, lifetime: timedelta) -> str:
    """Inside a write transaction: a new session of the person, and its secret (for the
    cookie; the only place it exists in the clear). Sessions past their time go meanwhile."""
    now = utcnow()
    db.execute(delete(SettingsSession).where(SettingsSession.expires_at <= now))
    secret = secrets.token_urlsafe(32)
    db.add(SettingsSession(token_hash=digest(secret), user_id=user_id, created_at=now,
                           expires_at=now + lifetime))
    db.flush()
    return secret


def user_of(db: Session, secret: object) -> User | None:
    """The person this secret's session signs in, while it lasts; else None."""
    if not _usable(secret):
        return None
    return db.scalar(
        select(User).join(SettingsSession, SettingsSession.user_id == User.id)
        .where(SettingsSession.token_hash == digest(secret),
               SettingsSession.expires_at > utcnow()))


def end(db: Session, secret: object) -> None:
    """Inside a write transaction: this session is over (if it was one)."""
    if _usable(secret):
        db.execute(delete(SettingsSession).where(SettingsSession.token_hash == digest(secret)))


def end_all(db: Session, user_id: int) -> None:
    """Inside a write transaction: every session of this person is over."""
    db.execute(delete(SettingsSession).where(SettingsSession.user_id == user_id))
