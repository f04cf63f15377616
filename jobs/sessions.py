"""A background job's org key: read from the server-side session store, never from the jobs
database.

A job records the id of the session that started (or resumed) it. To find the key again it
asks the app, not the store: `SessionKeys(app, field)` builds a request that carries that id
as the session cookie (`app.test_request_context`) and lets Flask open the session for it
through the app's configured `app.session_interface` — Flask-Session's, with whatever store,
key prefix and serialization the app set up, behind any wrapper the app put around it. So
nothing here knows where or how Flask-Session keeps its data, and an upgrade of it changes
nothing here. The request is never dispatched: no view or `before_request` runs, and its
session is never saved.

The app is handed over by whoever builds the job's configuration (app.py's `job_config`), so
`run_job` works in any process that has the app — a thread of a web worker, or an RQ worker
(`flask --app app worker`). Signing out deletes the session: a job that has not started yet
then finds no key and stops (it is reported as interrupted, and whoever resumes it lends it
their own session).
"""

from __future__ import annotations

import logging
import re

from flask import Flask, session

log = logging.getLogger(__name__)

# What a cookie's value may hold unquoted (RFC 6265, cookie-octet): a session id with anything
# else cannot be one this app issued, and must not add cookies of its own to the request.
COOKIE_VALUE = re.compile(r"[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]{1,255}")


class SessionKeys:
    """`keys(session_ref)`: the value of `field` (the org key) in that session, or None when
    the session is gone (signed out, expired) or the store cannot be read."""

    def __init__(self, app: Flask, field: str):
        self.app = app
        self.field = field

    def __call__(self, session_ref: str | None) -> str | None:
        if not session_ref or not COOKIE_VALUE.fullmatch(session_ref):
            return None
        try:
            value = self._read(session_ref)
        except Exception:  # an unreadable store is "no key", said as a sentence by the caller
            log.warning("the session store could not be read for a job", exc_info=False)
            return None
        return value if isinstance(value, str) and value else None

    def _read(self, session_ref: str):
        app = self.app
        cookie_name = app.session_interface.get_cookie_name(app)
        with app.test_request_context("/", headers={"Cookie": f"{cookie_name}={session_ref}"}):
            # A session id the store does not know opens as a new, empty session with an id
            # of its own: only the session that was asked for counts.
            if getattr(session, "sid", None) != session_ref:
                return None
            return session.get(self.field)
