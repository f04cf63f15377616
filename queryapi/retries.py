"""The two behaviours, and the part of each that urllib3's `Retry` carries out.

INTERACTIVE (a page a person waits for): one immediate retry of a connection that could not be
opened, and one of a request whose connection dropped before any answer (typically a kept-alive
connection the service closed just as the request went out: idle for its keep-alive time, as
between two clicks ~2 s apart); a read timeout is not retried, a person would wait twice.
Nothing else here. Waiting on 429/503 is decided per call in transport.py, against a
budget of about two seconds — a rule `Retry` cannot express (it has no notion of a total sleep).

BACKGROUND (bulk jobs): `Retry` retries refused/failed connections and read errors with
exponential backoff, and 503 on the reference's schedule: wait `unavailable_wait` (30 s), then
double. 429 is deliberately left to transport.py: a 429 means the pacer's picture of the rate
limit was wrong, so the pacer has to see it, and it waits exactly Retry-After.

A call that is not safe to repeat (creating a tag, an extension) has a policy of its own in
either mode: a connection that could not be opened is tried again, nothing after the request
went out.
"""

from __future__ import annotations

import enum
import time
from typing import Protocol

from urllib3.exceptions import MaxRetryError, ReadTimeoutError
from urllib3.util.retry import Retry


class Mode(enum.Enum):
    INTERACTIVE = "interactive"
    BACKGROUND = "background"

    def __str__(self) -> str:
        return self.value


class RetryObserver(Protocol):
    def failed_attempt(self, status: int | None) -> None: ...
    def waited(self, seconds: float) -> None: ...


class ObservedRetry(Retry):
    """urllib3's Retry, with the reference's 503 schedule and a report of every retry.

    - 503: wait `unavailable_wait`, then twice that, and so on up to `unavailable_max_wait`
      (Retry-After is not used: its 30 would override the configurable base).
    - Every attempt that is retried is reported (for `Client.stats`), and every wait too.
    urllib3 builds a new Retry for each attempt through `new()`, which is why the extra
    settings are copied there.
    """

    def __init__(self, *args, unavailable_wait: float = 30.0,
                 unavailable_max_wait: float = 300.0, observer: RetryObserver | None = None,
                 retry_read_timeouts: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.unavailable_wait = unavailable_wait
        self.unavailable_max_wait = unavailable_max_wait
        self.observer = observer
        self.retry_read_timeouts = retry_read_timeouts

    def new(self, **kw) -> ObservedRetry:
        retry = super().new(**kw)
        retry.unavailable_wait = self.unavailable_wait
        retry.unavailable_max_wait = self.unavailable_max_wait
        retry.observer = self.observer
        retry.retry_read_timeouts = self.retry_read_timeouts
        return retry

    def increment(self, method=None, url=None, response=None, error=None, _pool=None,
                  _stacktrace=None) -> ObservedRetry:
        if isinstance(error, ReadTimeoutError) and not self.retry_read_timeouts:
            raise MaxRetryError(_pool, url, error) from error
        retry = super().increment(method=method, url=url, response=response, error=error,
                                  _pool=_pool, _stacktrace=_stacktrace)
        # Reached only when the attempt will be retried; an attempt that exhausts the retries
        # is counted by the transport, which receives its answer or its error.
        if self.observer is not None:
            self.observer.failed_attempt(response.status if response is not None else None)
        return retry

    def unavailable_delay(self) -> float:
        in_a_row = 0
        for entry in reversed(self.history):
            if entry.status != 503:
                break
            in_a_row += 1
        return min(self.unavailable_max_wait,
                   self.unavailable_wait * 2 ** max(in_a_row - 1, 0))

    def sleep(self, response=None) -> None:
        if response is not None and response.status == 503:
            delay = self.unavailable_delay()
        else:
            delay = self.get_backoff_time()
        if delay > 0:
            time.sleep(delay)
        if self.observer is not None:
            self.observer.waited(delay)


def retry_policy(mode: Mode, *, retries: int, backoff_factor: float, unavailable_wait: float,
                 observer: RetryObserver, idempotent: bool = True) -> ObservedRetry:
    """`idempotent=False` (creating a tag, an extension that is not safe to repeat): only a
    connection that could not be opened is tried again — the request never left — and
    neither a read error nor a 503, after which the service may have acted."""
    common = dict(
        total=None,
        redirect=0,
        other=0,
        # Every endpoint of the reference is safe to repeat (see client.py), so POST and PATCH
        # are retried too.
        allowed_methods=None,
        # Retry-After of 429 is honoured in transport.py; of 503, replaced by the schedule.
        respect_retry_after_header=False,
        # When retries run out, hand back the last answer so it becomes an Unavailable error.
        raise_on_status=False,
        raise_on_redirect=False,
        observer=observer,
    )
    if not idempotent:
        background = mode is Mode.BACKGROUND
        return ObservedRetry(connect=retries if background else 1, read=False, status=0,
                             status_forcelist=(), backoff_factor=backoff_factor if background
                             else 0, retry_read_timeouts=False, **common)
    if mode is Mode.INTERACTIVE:
        return ObservedRetry(connect=1, read=1, status=0, status_forcelist=(),
                             backoff_factor=0, retry_read_timeouts=False, **common)
    return ObservedRetry(
        connect=retries, read=retries, status=retries, status_forcelist=(503,),
        backoff_factor=backoff_factor, backoff_max=max(backoff_factor * 64, 1.0),
        unavailable_wait=unavailable_wait, unavailable_max_wait=unavailable_wait * 10,
        **common,
    )
