"""The organization's record of changes other than a key's: projects, tags, imports, people,
rules, each an `org_events` row written in the same transaction as the change itself, so
there is no change without its record. The settings' Activity page reads it
(audit.py). A person's change carries their user id and email (the email stays when
the person is removed); one through the API the key's name and ends and the caller's label
(X-Tagdesk-Actor); the command line's neither."""

from __future__ import annotations

from dataclasses import dataclass

from flask import g, has_request_context
from sqlalchemy.orm import Session

from ..bodies.errors import BadRequest
from ..bodies.validation import read_actor
from ..store.models import ApiKey, OrgEvent, User, utcnow

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
    # Rules (service/api/rules.py), changed through the API.
    "rule.created": "Rule created",
    "rule.changed": "Rule changed",
    "rule.paused": "Rule paused",
    "rule.resumed": "Rule resumed",
    "rule.deleted": "Rule deleted",
    "rule.applied": "Rule applied",
    "rule.unapplied": "Rule's tags taken away",
    "rule.restored": "Rule's tags put back",
}


@dataclass(frozen=True)
class ApiOrigin:
    """Who makes a change through the API: the key, and the person its caller names."""

    key_id: int
    actor: str | None


def api_origin() -> ApiOrigin | None:
    """The origin of the API request being answered; None outside one (the settings area,
    the command line, a job of this process)."""
    caller = g.get("caller") if has_request_context() else None
    if caller is None:
        return None
    try:
        actor = read_actor()
    except BadRequest:  # a label, not an identity: one the service cannot read is left out
        actor = None
    return ApiOrigin(caller.key_id, actor)


def email_of(session: Session, user_id: int | None) -> str | None:
    if user_id is None:
        return None
    user = session.get(User, user_id)
    return user.email if user is not None else None


def record_change(session: Session, org_id: str, action: str, subject: str,
                  detail: str = "", user_id: int | None = None) -> OrgEvent:
    """A change other than a key's: `action` is one of CHANGES, `subject` names what changed
    (a project's or tag's name, an email), `detail` says more in words."""
    if action not in CHANGES:
        raise ValueError(f"unknown change {action!r}")
    event = OrgEvent(org_id=org_id, user_id=user_id, actor_email=email_of(session, user_id),
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


TAG_CHANGES = ("tag.created", "tag.edited", "tag.deleted", "tag.merged", "tag.unmerged")


@dataclass(frozen=True)
class ByImport:
    """A tag change an import made: its file's name, and who started it (None on the command
    line)."""

    file_name: str
    user_id: int | None = None


def record_tag_change(session: Session, org_id: str, action: str, tag_name: str, detail: str,
                      *, user_id: int | None = None,
                      by_import: ByImport | None = None) -> OrgEvent:
    """The record of a change to a tag, wherever it was made — every path that creates, edits,
    merges, unmerges or deletes a tag calls this. `detail` says what changed; where from is
    said after it: an import (its file), the API (the dashboard's picker included: the key
    and the caller's label are kept by record_change) or the command line. A change in the
    settings names its person, so it needs no more."""
    if action not in TAG_CHANGES:
        raise ValueError(f"not a tag change: {action!r}")
    if by_import is not None:
        where, user_id = f"By the import of “{by_import.file_name}”.", by_import.user_id
    elif user_id is not None:
        where = ""
    elif api_origin() is not None:
        where = "Through the API."
    else:
        where = "On the command line."
    return record_change(session, org_id, action, tag_name,
                         " ".join(filter(None, [detail, where])), user_id)
