"""Before every API request (paths under /api): identify the caller, then charge the rate
limit. Other paths of the service (the settings pages, /settings) are not the API's: they sign
people in with a password and are left alone here.

A valid key is charged to its organization (all its keys share one budget); anything else is
charged to the client address, which also slows down key guessing.
"""

from __future__ import annotations

from flask import Flask, current_app, g, request

from ..bodies.errors import ApiError
from ..store.db import get_session
from .auth import authenticate
from .ratelimit import Decision, RateLimiter

PUBLIC_PATHS = {"/api/openapi.json"}


def is_api_path(path: str) -> bool:
    return path == "/api" or path.startswith("/api/")


def _limiter() -> RateLimiter:
    return current_app.extensions["tagdesk_ratelimiter"]


def _address_identity() -> str:
    return "addr:" + (request.remote_addr or "unknown")


def seconds(count: int) -> str:
    return "1 second" if count == 1 else f"{count} seconds"


def _charge(identity: str, limits) -> None:
    try:
        decision = _limiter().hit(identity, limits)
    except Exception:
        # The counters' store is out of reach (a 503 follows): asking it again for the
        # headers would only make the caller wait a second time.
        g.limiter_failed = True
        raise
    g.ratelimit = decision
    if not decision.allowed:
        raise ApiError(
            429,
            f"Rate limit exceeded. Retry in {seconds(decision.retry_after)}.",
        )


def before_request() -> None:
    if not is_api_path(request.path):
        return
    defaults = current_app.config["DEFAULT_LIMITS"]
    if request.path in PUBLIC_PATHS:
        _charge(_address_identity(), defaults)
        return
    try:
        g.caller = authenticate(get_session())
    except ApiError:
        _charge(_address_identity(), defaults)
        raise
    _charge("org:" + g.caller.org_id, g.caller.limits)


def after_request(response):
    if not is_api_path(request.path):
        return response
    decision: Decision | None = g.get("ratelimit")
    if decision is None and g.get("limiter_failed"):
        return response
    if decision is None:
        # Answered before the limiter ran (the database was unreachable): report the address
        # budget without charging it.
        try:
            decision = _limiter().peek(_address_identity(), current_app.config["DEFAULT_LIMITS"])
        except Exception:  # headers are best effort while the counters' store is down
            return response
    for name, value in decision.headers().items():
        response.headers[name] = value
    return response


def init_app(app: Flask, storage_uri: str) -> None:
    app.extensions["tagdesk_ratelimiter"] = RateLimiter(storage_uri)
    app.before_request(before_request)
    app.after_request(after_request)

