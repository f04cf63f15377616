"""When the session store (Redis) cannot be reached, the dashboard cannot tell who is signed
in. Rather than fail with an error page, each request that meets the outage is answered with
one sentence (a 503 that retries by itself, errors.py) and its session is neither read nor
written: nobody is signed out by accident and nothing half-written is kept.

Flask opens the session before any error handler can run and saves it after the view, so the
store's errors are caught at both ends here:
- opening: the request gets an empty session that is never saved, and is refused before any
  view or CSRF check runs (a `before_request` registered ahead of them);
- saving: the response the view built (a sign-in, a page that issued a CSRF token) is turned
  into the same sentence, because what it relied on was not stored.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

from flask import Flask, Response, g
from flask.sessions import SessionInterface
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

# Errors that mean "out of reach" (stopped, restarting, hung), not a mistake in a command.
STORE_ERRORS = (RedisConnectionError, RedisTimeoutError)
# Headers of the sentence that replace the view's own.
REPLACED_HEADERS = ("Content-Type", "Retry-After", "HX-Retarget", "HX-Reswap", "HX-Push-Url")
# Headers of the view's response that no longer apply.
DROPPED_HEADERS = ("Location", "HX-Redirect", "HX-Location", "HX-Refresh", "Set-Cookie")


class SessionStoreDown(Exception):
    """The session store could not be reached while this request's session was opened."""


def is_store_error(error: BaseException | None) -> bool:
    return isinstance(error, STORE_ERRORS)


def mark_down() -> None:
    """This request met the outage: its session is not saved."""
    g.session_store_down = True


def is_down() -> bool:
    return bool(g.get("session_store_down"))


class StoreAwareSessions(SessionInterface):
    """Flask-Session's interface, with the store's outages caught at open and at save."""

    OWN = ("inner", "unavailable")

    def __init__(self, inner: SessionInterface, unavailable: Callable[[], Response]):
        self.inner = inner
        self.unavailable = unavailable

    # Everything else is Flask-Session's: regenerate(), key_prefix, … are read from it, and
    # what is set here reaches it too (security.py makes the cookie Secure over HTTPS).
    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value) -> None:
        if name in self.OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    def open_session(self, app: Flask, request):
        try:
            return self.inner.open_session(app, request)
        except STORE_ERRORS:
            log.warning("the session store cannot be reached")
            mark_down()
            # Never saved, so its id is never sent or stored.
            return self.inner.session_class(sid=secrets.token_urlsafe(32),
                                            permanent=self.inner.permanent)

    def save_session(self, app: Flask, session, response: Response) -> None:
        if is_down():
            return
        try:
            self.inner.save_session(app, session, response)
        except STORE_ERRORS:
            log.warning("the session store cannot be reached")
            mark_down()
            _replace(response, self.unavailable())


def _replace(response: Response, sentence: Response) -> None:
    """Turn `response` (already through the after-request steps, so it keeps its security
    headers) into `sentence`."""
    response.status_code = sentence.status_code
    response.set_data(sentence.get_data())
    for name in DROPPED_HEADERS:
        response.headers.pop(name, None)
    for name in REPLACED_HEADERS:
        if name in sentence.headers:
            response.headers[name] = sentence.headers[name]


def _refuse_if_down() -> None:
    if is_down():
        raise SessionStoreDown()


def init_app(app: Flask, unavailable: Callable[[], Response]) -> None:
    """Call after Flask-Session's `Session(app)` and before anything that registers a
    `before_request` (CSRF protection reads the session)."""
    app.session_interface = StoreAwareSessions(app.session_interface, unavailable)
    app.before_request(_refuse_if_down)
