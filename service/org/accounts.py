"""People who sign in to their organization's settings: accounts, passwords, credentials.

Passwords are hashed with werkzeug's default, scrypt (salted, memory-hard); only the hash is
stored. Emails are kept case-folded, so one address is one account whatever its spelling.
"""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from ..store.models import Organization, User
from .admin import AdminError

MAX_EMAIL = 320
MIN_PASSWORD = 12
MAX_PASSWORD = 1024  # hashing a megabyte of "password" is a way to burn CPU, not a password
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")

# Checked against when no account has the email, so that an unknown email takes as long to
# refuse as a wrong password (no telling from the timing which addresses have accounts).
_DUMMY_HASH: str | None = None

# werkzeug's method string: "scrypt" is its default cost (n=2**15, r=8, p=1, ~0.1 s a hash).
# The test suite sets a cheap scrypt cost for its own process (tests/conftest.py), as Django's
# tests swap PASSWORD_HASHERS; a stored hash names its own method, so checks follow it.
HASH_METHOD = "scrypt"


def fold_email(email: str) -> str:
    return email.strip().casefold()


def valid_email(email: str) -> bool:
    return len(email) <= MAX_EMAIL and EMAIL.fullmatch(email) is not None


def password_problem(password: str) -> str | None:
    if len(password) < MIN_PASSWORD:
        return f"The password must be at least {MIN_PASSWORD} characters long."
    if len(password) > MAX_PASSWORD:
        return f"The password must be at most {MAX_PASSWORD} characters long."
    if not password.strip():
        return "The password cannot be only spaces."
    return None


def hash_password(password: str) -> str:
    return generate_password_hash(password, method=HASH_METHOD)


def create_user(session: Session, org_id: str, email: str, password: str) -> int:
    if session.get(Organization, org_id) is None:
        raise AdminError(f"No organization {org_id}.")
    folded = fold_email(email)
    if not valid_email(folded):
        raise AdminError(f"{email.strip()!r} is not an email address.")
    problem = password_problem(password)
    if problem:
        raise AdminError(problem)
    if session.scalar(select(User.id).where(User.email == folded)) is not None:
        raise AdminError(f"There is already an account for {folded}.")
    user = User(org_id=org_id, email=folded, password_hash=hash_password(password))
    session.add(user)
    session.flush()
    return user.id


def check_credentials(session: Session, email: str, password: str) -> User | None:
    """The account with this email and password, or None (in about the same time either way)."""
    global _DUMMY_HASH
    folded = fold_email(email)
    user = None
    if valid_email(folded) and len(password) <= MAX_PASSWORD:
        user = session.scalar(select(User).where(User.email == folded))
    if user is None:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = hash_password("not a password of anyone's")
        check_password_hash(_DUMMY_HASH, password[:MAX_PASSWORD])
        return None
    return user if check_password_hash(user.password_hash, password) else None
