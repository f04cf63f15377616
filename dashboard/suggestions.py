"""Suggested tags as the pages show them: the project's status (read once per CACHE_SECONDS a
session), its sentence, and a suggestion's confidence in words. Everything here is absent
where the API offers no suggestions (`Capabilities.suggestions`)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import g

from queryapi import SuggestionStatus

from . import apiclient
from .rows import relative_time

STATUS = "suggestion status"


def offered() -> bool:
    return apiclient.capabilities().suggestions


def status(project_id: str, refresh: bool = False) -> SuggestionStatus | None:
    """The project's suggestion status, or None where the API has no suggestions."""
    if not offered():
        return None
    read = g.setdefault("tagdesk_suggestion_status", {})  # once a request, whatever the cache
    if refresh or project_id not in read:
        read[project_id] = apiclient.cached_read(
            STATUS, project_id, lambda: apiclient.client().suggestion_status(project_id),
            refresh=refresh)
    return read[project_id]


def suggested_counts(found: SuggestionStatus | None) -> dict[int, int]:
    """How many queries are suggested each tag (tags with none left out)."""
    return {tag_id: count for tag_id, count in (found.tags if found else ()) if count}


def status_sentence(found: SuggestionStatus, now: datetime | None = None) -> str:
    """"Suggestions learned from 4,512 tagged queries 2 minutes ago · 96 % right on queries
    held back", or what stands in the way."""
    if found.state == "too few tags":
        needed = found.needed or 0
        more = f"{needed:,} more tagged {'query' if needed == 1 else 'queries'}"
        return (f"No suggestions yet: a tag needs {more} before it is suggested."
                if needed else "No suggestions yet: too few tagged queries.")
    if found.state == "learning" and found.learned_at is None:
        if found.problem:  # tried again a couple of minutes on, or now by Refresh
            return f"No suggestions yet. {found.problem}"
        return "Learning suggestions from the tagged queries…"
    parts = []
    if found.learned_at is not None:
        when = relative_time(found.learned_at, now or datetime.now(UTC))
        parts.append(f"Suggestions learned from {found.learned_from or 0:,} tagged queries "
                     f"{when}")
    if found.held_back_right is not None:
        parts.append(f"{round(found.held_back_right * 100)} % right on queries held back")
    elif found.learned_at is not None and found.default_confidence is None:
        # No confidence was right often enough: no query is suggested a tag, and why is said.
        parts.append("none shown yet: on queries held back they were not right often enough; "
                     "tagging more queries helps")
    if found.state == "learning":
        parts.append("learning again now")
    line = " · ".join(parts)
    return f"{line}. {found.problem}" if found.problem else line
