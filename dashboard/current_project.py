"""The project a page is about: checked against the session's projects, and remembered in
the browser so that the start page goes back to it."""

from __future__ import annotations

import re

from flask import abort, request

from queryapi import Project

from . import apiclient

PROJECT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
LAST_PROJECT_COOKIE = "tagdesk_project"
LAST_PROJECT_SECONDS = 365 * 24 * 3600


def last_project_id() -> str | None:
    return request.cookies.get(LAST_PROJECT_COOKIE) or None


def remember_project(response, project_id: str):
    """The last project used is remembered in the browser (a project id is no secret)."""
    if request.cookies.get(LAST_PROJECT_COOKIE) != project_id:
        response.set_cookie(LAST_PROJECT_COOKIE, project_id, max_age=LAST_PROJECT_SECONDS,
                            httponly=True, samesite="Lax", secure=request.is_secure)
    return response


def load_project(project_id: str) -> Project:
    """The project from the session's cached list, or a 404 page (no API call for ids that
    cannot be project ids)."""
    if not PROJECT_ID.fullmatch(project_id):
        abort(404)
    return apiclient.project_or_404(project_id)
