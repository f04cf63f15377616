"""One error hierarchy; every error carries a sentence a person can read.

    ApiError                 anything the API or the way to it went wrong with
    ├── AuthError            401, 403: the key is missing, unknown, revoked or not allowed
    ├── NotFound             404: e.g. a project outside the key's organization
    ├── InvalidRequest       400, 413, 415, 422: the service's own words, list kept in .details
    ├── Conflict             409: e.g. a new tag's name is taken (create_tag, an extension)
    ├── RateLimited          429: .retry_after seconds
    ├── Unavailable          503: .retry_after seconds
    └── TransportError       timeouts, refused or dropped connections, answers that are not JSON

`status` is the HTTP status of the answer, or None when there was no usable answer (transport
errors, a malformed payload, a check made before sending).
"""

from __future__ import annotations

from http import HTTPStatus

MAX_MESSAGE = 1000


class ApiError(Exception):
    default_message = "The Query & Tag API reported an error."

    def __init__(self, message: str | None = None, *, status: int | None = None,
                 details: list[str] | None = None):
        self.message = message or self.default_message
        self.status = status
        self.details = list(details or [])
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, message={self.message!r})"


class AuthError(ApiError):
    default_message = "The API key was not accepted; it may be mistyped or revoked."


class NotFound(ApiError):
    default_message = "The service found nothing at that address."


class InvalidRequest(ApiError):
    default_message = "The service rejected the request as invalid."


class Conflict(ApiError):
    default_message = "The request conflicts with what the service holds already."


class _MustWait(ApiError):
    """An answer that says to wait: .retry_after seconds (`unsaid_wait` when it gives none)."""

    unsaid_wait: float
    waiting_message: str  # the sentence before "; retry in N seconds."

    def __init__(self, message: str | None = None, *, retry_after: float, status: int | None,
                 details: list[str] | None = None):
        self.retry_after = float(retry_after)
        super().__init__(message, status=status, details=details)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(status={self.status!r}, retry_after={self.retry_after!r},"
                f" message={self.message!r})")


class RateLimited(_MustWait):
    default_message = "Too many requests for this organization; wait a moment and retry."
    unsaid_wait = 1.0
    waiting_message = "Too many requests for this organization right now"


class Unavailable(_MustWait):
    default_message = "The service is temporarily unavailable; retry in a little while."
    unsaid_wait = 30.0
    waiting_message = "The service is temporarily unavailable"


class TransportError(ApiError):
    default_message = "The service could not be reached."


STATUS_ERRORS: dict[int, type[ApiError]] = {
    400: InvalidRequest, 401: AuthError, 403: AuthError, 404: NotFound, 409: Conflict,
    413: InvalidRequest, 415: InvalidRequest, 422: InvalidRequest, 429: RateLimited,
    503: Unavailable,
}


def sentence(parts: list[str] | str) -> str:
    """Messages as one readable paragraph: each part ends with a full stop, joined by spaces."""
    if isinstance(parts, str):
        parts = [parts]
    cleaned = []
    for part in parts:
        part = " ".join(str(part).split())
        if part:
            cleaned.append(part if part[-1] in ".!?…" else part + ".")
    text = " ".join(cleaned)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def seconds(value: float) -> str:
    value = max(value, 0)
    whole = round(value)
    if abs(value - whole) < 0.05:
        return "1 second" if whole == 1 else f"{whole} seconds"
    return f"{value:.1f} seconds"


def status_phrase(status: int) -> str:
    try:
        return f"HTTP {status} ({HTTPStatus(status).phrase})"
    except ValueError:
        return f"HTTP {status}"


def error_for_status(status: int, message: str | list[str] | None,
                     retry_after: float | None = None) -> ApiError:
    """The error for an answer with an error status; `message` is the service's, if any."""
    kind = STATUS_ERRORS.get(status, ApiError)
    details = [str(m) for m in message] if isinstance(message, list) else (
        [message] if isinstance(message, str) and message.strip() else [])
    text = sentence(details) if details else None
    if issubclass(kind, _MustWait):
        wait = kind.unsaid_wait if retry_after is None else retry_after
        return kind(f"{kind.waiting_message}; retry in {seconds(wait)}.",
                    retry_after=wait, status=status, details=details)
    if kind is ApiError and text is None:
        text = f"The service answered with {status_phrase(status)}."
    return kind(text, status=status, details=details)
