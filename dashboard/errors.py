"""Every failure is a sentence: friendly pages for whole-page requests, a notice in the page's
notice area for htmx requests (never an error page swapped into the table), no stack trace.

- the key stops working mid-session -> back to sign-in with a sentence (HX-Redirect for htmx);
- 429 / 503 from the service -> a banner that retries by itself after the wait;
- the service cannot be reached -> the page says so (and retries a little later);
- the session store (Redis) cannot be reached -> the same, without touching the session
  (sessionstore.py);
- an expired CSRF token -> a fresh token and a request to try again;
- unknown pages and projects -> 404; anything unexpected -> 500, logged, never shown.
"""

from __future__ import annotations

import logging
import math
from urllib.parse import urlsplit

from flask import flash, make_response, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError, generate_csrf
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from werkzeug.exceptions import HTTPException

from queryapi import (
    ApiError,
    AuthError,
    InvalidRequest,
    NotFound,
    RateLimited,
    TransportError,
    Unavailable,
)
from weblib import error_pages

from . import sessionstore, signin
from .htmx import is_htmx, page_on_screen

log = logging.getLogger(__name__)

UNREACHABLE_RETRY_SECONDS = 10
LONGEST_AUTOMATIC_WAIT = 3600

PAGES = {
    **error_pages.PAGES,
    401: ("Please sign in", "You need to sign in to see this page."),
    403: ("Not allowed", "You are not allowed to do that."),
}


def retry_url() -> str | None:
    """Requests worth repeating are GETs; the URL is this site's own path. The retry loads a
    whole page: for a part of a page asked by htmx (the saved views, a row), the page on
    screen, not the part's own address."""
    if request.method != "GET":
        return None
    here = request.full_path.rstrip("?") if request.query_string else request.path
    page = signin.safe_next(page_on_screen())
    if page is not None and urlsplit(page).path != request.path:
        return page
    return here


def respond(status: int, heading: str, message: str, kind: str = "error",
            retry_after: float | None = None, headers: dict | None = None):
    wait = None
    if retry_after is not None:
        wait = min(max(1, math.ceil(retry_after)), LONGEST_AUTOMATIC_WAIT)
    context = {"heading": heading, "message": message, "kind": kind,
               "retry_after": wait, "retry_url": retry_url() if wait else None}
    try:
        if is_htmx():
            response = make_response(render_template("errors/notice.html", **context), status)
            # The sentence goes into the page's notice area; the URL stays what it was.
            response.headers["HX-Retarget"] = "#notices"
            response.headers["HX-Reswap"] = "innerHTML"
            response.headers["HX-Push-Url"] = "false"
        else:
            response = make_response(render_template("errors/page.html", **context), status)
    except Exception:  # the page itself could not be drawn (e.g. the session store is down)
        log.exception("error page could not be rendered")
        response = make_response(f"{heading}. {message}", status)
        response.mimetype = "text/plain"
    if wait:
        response.headers["Retry-After"] = str(wait)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def page(status: int, message: str | None = None):
    heading, default = error_pages.wording(status, PAGES)
    return respond(status, heading, message or default)


def session_store_unavailable():
    sessionstore.mark_down()
    return respond(503, "The dashboard is taking a break",
                   "Tagdesk cannot reach its session store right now, so it cannot tell who is "
                   "signed in. Nothing has been lost; this page will try again shortly.",
                   "warning", UNREACHABLE_RETRY_SECONDS)


def init_app(app) -> None:
    @app.errorhandler(sessionstore.SessionStoreDown)
    @app.errorhandler(RedisConnectionError)
    @app.errorhandler(RedisTimeoutError)
    def _session_store_down(error):
        if not isinstance(error, sessionstore.SessionStoreDown):  # that one was logged
            log.warning("the session store cannot be reached")
        return session_store_unavailable()

    @app.errorhandler(AuthError)
    def _key_rejected(_error):
        return signin.key_rejected_response()

    @app.errorhandler(RateLimited)
    def _rate_limited(error):
        return respond(429, "A short pause",
                       "Your organization has made a lot of requests in a short time, so the "
                       "service asked us to wait a moment.", "warning", error.retry_after)

    @app.errorhandler(Unavailable)
    def _unavailable(error):
        return respond(503, "The service is taking a break",
                       "The Tagdesk service is temporarily unavailable.", "warning",
                       error.retry_after)

    @app.errorhandler(TransportError)
    def _unreachable(_error):
        log.warning("the API could not be reached")
        return respond(502, "The service cannot be reached",
                       "The Tagdesk service cannot be reached right now. Your work is safe; "
                       "this page will try again shortly.", "error", UNREACHABLE_RETRY_SECONDS)

    @app.errorhandler(NotFound)
    def _api_not_found(_error):
        return page(404, "That project does not exist, or it belongs to another organization.")

    @app.errorhandler(InvalidRequest)
    def _invalid(error):
        log.info("the API rejected a request: %s", error.message)
        return page(400, "The service could not use these filters. Try a shorter search or "
                         "fewer filters.")

    @app.errorhandler(ApiError)
    def _api_error(error):
        log.warning("unexpected API error: %r", error)
        return respond(502, "The service answered unexpectedly",
                       "The Tagdesk service gave an answer we did not expect. Please try again "
                       "in a moment.")

    @app.errorhandler(CSRFError)
    def _csrf(_error):
        message = ("This page was open for a long time, so its security check expired. "
                   "Nothing was changed — please try again.")
        if request.endpoint == "auth.signin":
            return signin.render_signin(message, 400)
        if is_htmx():
            if not signin.is_signed_in():
                return signin.signin_redirect_for_htmx()
            return respond(400, "Please try again", message, "warning",
                           headers={"X-CSRFToken": generate_csrf()})
        flash(message, "warning")
        return redirect(signin.safe_referrer() or url_for("projects.home"), 303)

    @app.errorhandler(HTTPException)
    def _http(error):
        if sessionstore.is_store_error(getattr(error, "original_exception", None)):
            # Raised where no handler of its own applies (Flask wraps it in a 500).
            return _session_store_down(error)
        status = error.code or 500
        response = page(status)
        if status == 405 and getattr(error, "valid_methods", None):
            response.headers["Allow"] = ", ".join(sorted(error.valid_methods))
        return response

    @app.errorhandler(Exception)
    def _unexpected(error):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return page(500)
