"""One-time links to choose a password: what a new administrator added "with a link" opens.

The token is random (256 bits) and shown once, in the page of the person who made it; the
database keeps only its SHA-256, like an API key's. A link works once, and for LINK_DAYS.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from enum import Enum

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..store.models import PasswordLink, utcnow

LINK_DAYS = 7
MAX_TOKEN = 100  # longer is not one of ours: not even looked up


class State(Enum):
    USABLE = "usable"
    USED = "used"
    EXPIRED = "expired"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(session: Session, user_id: int) -> tuple[str, PasswordLink]:
    """A new link for the person, and its token (the only time it exists in the clear)."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    link = PasswordLink(user_id=user_id, token_hash=digest(token), created_at=now,
                        expires_at=now + timedelta(days=LINK_DAYS))
    session.add(link)
    session.flush()
    return token, link


def find(session: Session, token: str, for_update: bool = False) -> PasswordLink | None:
    if not token or len(token) > MAX_TOKEN:
        return None
    query = select(PasswordLink).where(PasswordLink.token_hash == digest(token))
    if for_update:
        query = query.with_for_update(of=PasswordLink)
    return session.scalar(query)


def state(link: PasswordLink) -> State:
    if link.used_at is not None:
        return State.USED
    if link.expires_at <= utcnow():
        return State.EXPIRED
    return State.USABLE


def waiting(session: Session, user_ids: list[int]) -> dict[int, PasswordLink]:
    """Of these people, those who were added with a link and have not used it yet: their
    newest link."""
    if not user_ids:
        return {}
    links = session.scalars(select(PasswordLink).where(PasswordLink.user_id.in_(user_ids))
                            .order_by(PasswordLink.created_at, PasswordLink.id))
    newest: dict[int, PasswordLink] = {}
    used: set[int] = set()
    for link in links:
        newest[link.user_id] = link
        if link.used_at is not None:
            used.add(link.user_id)
    return {user_id: link for user_id, link in newest.items() if user_id not in used}
