"""One API call over HTTP: send, wait and retry as the mode says, decode, or raise an ApiError.

Waiting is split between urllib3 and this module:
- urllib3's `Retry` (retries.py, mounted through requests' HTTPAdapter) retries connections that
  fail and, in BACKGROUND mode, read errors and 503s with backoff.
- This module handles 429 in both modes, 503 in INTERACTIVE mode, the pacing of BACKGROUND mode
  (pacing.py) and errors while reading a body, which happen after urllib3 has handed the
  response over and so are beyond its retries. The interactive rule — sleep at most about two
  seconds in total, and only when Retry-After fits in what is left — needs a budget kept across
  attempts, which `Retry` has no place for.

Secrets: the key reaches requests only through `KeyAuth`. requests' exceptions carry the
prepared request (headers included), so they are never chained to ours: errors are raised after
the `except` block has finished, with a sentence of our own.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from requests.exceptions import ChunkedEncodingError, ContentDecodingError
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from .errors import ApiError, TransportError, error_for_status, seconds
from .keys import ApiKey, KeyAuth
from .pacing import Pacer
from .retries import Mode, retry_policy
from .stats import StatsCounter

log = logging.getLogger("queryapi")

USER_AGENT = "tagdesk-queryapi/0.1"
# Background jobs give up after this many 429s in a row (a budget of 0, a misconfiguration).
MAX_RATE_LIMITED_IN_A_ROW = 30
DEFAULT_RATE_LIMIT_WAIT = 1.0


def _settle_environment(session: requests.Session, base_url: str) -> None:
    """Read the proxy and CA-bundle variables once, for the client's lifetime.

    requests reads them again on every call (two walks over `os.environ`, a quarter of a
    millisecond per call: a sixth of a dashboard page's own CPU). Every call goes to
    `base_url`, and a process's environment does not change under it. A netrc file, the other
    thing requests looks for, is never used: the key is the only credential.
    """
    session.proxies.update(requests.utils.get_environ_proxies(base_url))
    ca_bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if ca_bundle:
        session.verify = ca_bundle
    session.trust_env = False


@dataclass(frozen=True)
class _Failure:
    """Internal: an attempt that got no usable answer, as a sentence."""

    message: str
    reading_body: bool  # it struck after urllib3 had handed the response over


class Transport:
    def __init__(self, base_url: str, key: ApiKey, mode: Mode,
                 timeout: tuple[float, float], *, retries: int, backoff_factor: float,
                 unavailable_wait: float, interactive_budget: float):
        self.base_url = base_url
        self.mode = mode
        self.timeout = timeout
        self.retries = retries
        self.backoff_factor = backoff_factor
        self.unavailable_wait = unavailable_wait
        self.interactive_budget = interactive_budget
        self.stats = StatsCounter()
        self.pacer = Pacer() if mode is Mode.BACKGROUND else None
        self._key = key
        self._attempt = threading.local()  # when the current attempt started, per thread

        self.session = self._new_session(idempotent=True)
        # Calls that are not safe to repeat go through a session of their own, made when the
        # first one is made: its adapter never resends a request that went out.
        self._unsafe_session: requests.Session | None = None
        self._unsafe_lock = threading.Lock()

    def _new_session(self, idempotent: bool) -> requests.Session:
        session = requests.Session()
        session.auth = KeyAuth(self._key)
        _settle_environment(session, self.base_url)
        session.headers.update({"Accept": "application/json", "User-Agent": USER_AGENT})
        adapter = HTTPAdapter(max_retries=retry_policy(
            self.mode, retries=self.retries, backoff_factor=self.backoff_factor,
            unavailable_wait=self.unavailable_wait, observer=self, idempotent=idempotent))
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def _session_for(self, idempotent: bool) -> requests.Session:
        if idempotent:
            return self.session
        with self._unsafe_lock:
            if self._unsafe_session is None:
                self._unsafe_session = self._new_session(idempotent=False)
            return self._unsafe_session

    def close(self) -> None:
        self.session.close()
        with self._unsafe_lock:
            if self._unsafe_session is not None:
                self._unsafe_session.close()

    # -- RetryObserver: urllib3's retries report here --------------------------------------

    def failed_attempt(self, status: int | None) -> None:
        self.stats.attempt(status)
        log.info("attempt failed (%s); urllib3 retries", status or "no answer")

    def waited(self, delay: float) -> None:
        self.stats.slept(delay)
        self._attempt.started = time.monotonic()

    # -- a call ----------------------------------------------------------------------------

    def call(self, method: str, path: str, *, project_id: str | None = None,
             params: dict | None = None, body: Any = None, idempotent: bool = True,
             extra_headers: dict[str, str] | None = None) -> Any:
        """The decoded JSON of a successful answer, or an ApiError.

        `idempotent=False`: the call is not safe to repeat. It is sent again only when it
        certainly had no effect — its connection could not be opened, or the answer was 429
        (a refused request does nothing) — never after a lost answer or a 503."""
        headers = dict(extra_headers or {})
        data = None
        if project_id is not None:
            headers["x-project-id"] = project_id
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = encode(body)
        what = f"{method} {path}"
        budget = self.interactive_budget
        rate_limited = lost = 0
        while True:
            # The pacer reserves the request's place before it is sent, so that calls made
            # at the same time from several threads (a pipelined job) cannot overshoot.
            ticket = self.pacer.acquire(self._sleep) if self.pacer is not None else None
            outcome = self._exchange(method, self.base_url + path, params, data, headers,
                                     self._session_for(idempotent))
            if isinstance(outcome, _Failure):
                if self.pacer is not None:
                    self.pacer.abandon(ticket)
                if (outcome.reading_body and self.mode is Mode.BACKGROUND and idempotent
                        and lost < self.retries):
                    lost += 1
                    self._sleep(self.backoff_factor * 2 ** (lost - 1))
                    continue
                raise TransportError(outcome.message)
            status, answer_headers, content, started, finished = outcome
            retry_after = None
            if status in (429, 503):
                default = DEFAULT_RATE_LIMIT_WAIT if status == 429 else self.unavailable_wait
                retry_after = parse_retry_after(answer_headers.get("Retry-After"), default)
            if self.pacer is not None:
                self.pacer.observe(started, finished, status, answer_headers, retry_after,
                                   ticket=ticket)
            if retry_after is not None and (idempotent or status == 429):
                if self.mode is Mode.INTERACTIVE and retry_after <= budget:
                    log.info("%s: %s, waiting %.1f s (Retry-After)", what, status, retry_after)
                    budget -= retry_after
                    self._sleep(retry_after)
                    continue
                if (self.mode is Mode.BACKGROUND and status == 429
                        and rate_limited < MAX_RATE_LIMITED_IN_A_ROW):
                    # The pacer now holds the next attempt back for exactly Retry-After.
                    rate_limited += 1
                    log.info("%s: 429, retrying in %.1f s", what, retry_after)
                    continue
            return self._result(what, status, answer_headers, content, retry_after)

    def _exchange(self, method, url, params, data, headers, session: requests.Session):
        """(status, headers, body, start and end time) of one answer, or a _Failure.

        requests' exceptions hold the prepared request, key included; none leaves this method.
        """
        self._attempt.started = time.monotonic()
        failure = None
        try:
            response = session.request(
                method, url, params=params, data=data, headers=headers, timeout=self.timeout,
                # A redirect could take the key to another host: treat it as an error instead.
                allow_redirects=False)
        except requests.RequestException as error:
            failure = self._describe(error)
        if failure is not None:
            self.stats.attempt(None)
            log.info("%s %s failed: %s", method, url, failure.message)
            return failure
        status = response.status_code
        self.stats.attempt(status)
        log.debug("%s %s -> %s in %.3f s", method, url, status,
                  response.elapsed.total_seconds())
        return (status, response.headers, response.content, self._attempt.started,
                time.monotonic())

    def _result(self, what, status, headers, content, retry_after):
        if 200 <= status < 300:
            try:
                return json.loads(content)
            except (ValueError, UnicodeDecodeError):
                pass
            raise TransportError(
                f"The service at {self.base_url} answered {what} with something that is not "
                "JSON; is the base URL that of the Query & Tag API?")
        if 300 <= status < 400:
            target = headers.get("Location", "another address")
            raise ApiError(f"The service answered {what} with a redirect to {target}; "
                           "the base URL is probably not quite right.", status=status)
        raise error_for_status(status, self._service_message(content), retry_after)

    def _service_message(self, content: bytes) -> str | list[str] | None:
        try:
            payload = json.loads(content)
        except (ValueError, UnicodeDecodeError):
            return None
        message = payload.get("message") if isinstance(payload, dict) else None
        if isinstance(message, str):
            return self._scrub(message)
        if isinstance(message, list):
            return [self._scrub(str(part)) for part in message]
        return None

    def _scrub(self, text: str) -> str:
        """Should a service ever echo the key in a message, show it masked."""
        return text.replace(self._key.reveal(), self._key.masked)

    def _describe(self, error: requests.RequestException) -> _Failure:
        cause = error.args[0] if error.args else None
        # urllib3's retries end in MaxRetryError (reason: the last attempt's error). Without
        # one, a connection error struck while requests read the body, after urllib3's part.
        reading_body = not isinstance(cause, MaxRetryError) and isinstance(
            error, ChunkedEncodingError | ContentDecodingError | requests.ConnectionError)
        if isinstance(cause, MaxRetryError):
            cause = cause.reason
        connect, read = self.timeout
        where = self.base_url
        if isinstance(cause, NewConnectionError):
            message = (f"Could not connect to the service at {where}: the connection was "
                       "refused or the host could not be found.")
        elif isinstance(error, requests.ConnectTimeout) or isinstance(cause, ConnectTimeoutError):
            message = f"Could not connect to the service at {where} within {seconds(connect)}."
        elif isinstance(error, requests.ReadTimeout) or isinstance(cause, ReadTimeoutError):
            message = f"The service at {where} did not answer within {seconds(read)}."
        elif isinstance(error, requests.exceptions.SSLError):
            message = f"A secure connection to the service at {where} could not be set up."
        elif isinstance(error, ChunkedEncodingError | requests.ConnectionError) or isinstance(
                cause, ProtocolError):
            message = (f"The connection to the service at {where} was dropped before the "
                       "answer was complete.")
        else:
            message = f"The request to the service at {where} failed ({type(error).__name__})."
        return _Failure(message, reading_body)

    def _sleep(self, delay: float) -> None:
        if delay <= 0:
            return
        time.sleep(delay)
        self.stats.slept(delay)


def encode(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def parse_retry_after(value: str | None, default: float) -> float:
    """Retry-After in seconds: a number, or an HTTP date; `default` when absent or unreadable."""
    if not value:
        return default
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return default
    return max(moment.timestamp() - time.time(), 0.0)
