"""Every error is JSON {statusCode, message, error}; nothing internal is ever shown."""

from __future__ import annotations

import logging
from http import HTTPStatus

from flask import Flask, current_app, jsonify
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import DBAPIError, OperationalError
from werkzeug.exceptions import HTTPException

from ..engine.refusals import Invalid, Missing, Refused

log = logging.getLogger(__name__)

PHRASES = {413: "Payload Too Large"}
UNAVAILABLE_RETRY_SECONDS = 30


class ApiError(Exception):
    def __init__(self, status: int, message: str | list[str], headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class BadRequest(ApiError):
    def __init__(self, message: str | list[str]):
        super().__init__(400, message)


class Unauthorized(ApiError):
    def __init__(self, message: str = "Invalid API key."):
        super().__init__(401, message)


class NotFound(ApiError):
    def __init__(self, message: str = "Not found."):
        super().__init__(404, message)


class Conflict(ApiError):
    def __init__(self, message: str):
        super().__init__(409, message)


def phrase(status: int) -> str:
    return PHRASES.get(status) or HTTPStatus(status).phrase


def error_response(status: int, message: str | list[str], headers: dict | None = None):
    response = jsonify({"statusCode": status, "message": message, "error": phrase(status)})
    response.status_code = status
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


HTTP_MESSAGES = {
    404: "Not found.",
    405: "Method not allowed.",
    413: "Request body is larger than 1 MiB.",
    415: "Request body must be JSON (Content-Type: application/json).",
}


def unavailable():
    return error_response(
        503,
        f"Service temporarily unavailable. Retry in {UNAVAILABLE_RETRY_SECONDS} seconds.",
        {"Retry-After": str(UNAVAILABLE_RETRY_SECONDS)},
    )


def database_is_unreachable(error: Exception) -> bool:
    """The database, or Redis holding the rate-limit counters, cannot be reached."""
    if isinstance(error, OperationalError | RedisConnectionError | RedisTimeoutError):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


def _page(status: int, error: Exception | None, headers: dict | None, otherwise):
    """The settings area's HTML error page for its own paths (service/settings); otherwise
    the API's JSON error."""
    render = current_app.extensions.get("tagdesk_error_page")
    page = render(status, error, headers) if render is not None else None
    return otherwise() if page is None else page


def from_refusal(refusal: Refused) -> ApiError:
    """The API's error for what the engine refused: the same message."""
    if isinstance(refusal, Missing):
        return NotFound(refusal.message)
    if isinstance(refusal, Invalid):
        return BadRequest(refusal.message)
    raise TypeError(f"no status for {type(refusal).__name__}")


def register(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(error: ApiError):
        return _page(error.status, error, error.headers, lambda: error_response(
            error.status, error.message, error.headers))

    @app.errorhandler(Refused)
    def _refused(refusal: Refused):
        return _api_error(from_refusal(refusal))

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException):
        status = error.code or 500
        headers = {}
        if status == 405 and error.valid_methods:
            headers["Allow"] = ", ".join(sorted(error.valid_methods))
        return _page(status, error, headers, lambda: error_response(
            status, HTTP_MESSAGES.get(status, phrase(status) + "."), headers))

    @app.errorhandler(Exception)
    def _unexpected(error: Exception):
        if database_is_unreachable(error):
            store = "rate-limit store" if isinstance(error, RedisConnectionError
                                                     | RedisTimeoutError) else "database"
            log.warning("%s unreachable: %s", store, getattr(error, "orig", error))
            return _page(503, error, {"Retry-After": str(UNAVAILABLE_RETRY_SECONDS)},
                         unavailable)
        log.exception("unhandled error")
        return _page(500, error, None, lambda: error_response(500, "Internal server error."))
