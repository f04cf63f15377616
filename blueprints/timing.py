"""Where a page view's time goes: in API calls, or in the dashboard itself.

Every call through the session's client is timed (`TimedClient`); with SERVER_TIMING on, each
response says so in a `Server-Timing` header (browsers' developer tools show it; the benchmark
reads it). Off by default: it tells the outside world a little about the inside.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from time import perf_counter

from flask import Flask, current_app, g, has_app_context

_PASSTHROUGH = {"close", "with_mode", "masked_key", "base_url", "mode", "stats"}


def add_api_time(seconds: float) -> None:
    if has_app_context():
        g.api_seconds = g.get("api_seconds", 0.0) + seconds


def _timed_iterator(iterator: Iterator) -> Iterator:
    """A walk over pages: the time of each step is time spent on the API."""
    while True:
        start = perf_counter()
        try:
            item = next(iterator)
        except StopIteration:
            add_api_time(perf_counter() - start)
            return
        add_api_time(perf_counter() - start)
        yield item


class TimedClient:
    """A queryapi.Client whose calls add their duration to the current request's total."""

    def __init__(self, client):
        self._client = client

    def __repr__(self) -> str:
        return repr(self._client)

    def __getattr__(self, name):
        value = getattr(self._client, name)
        if name.startswith("_") or name in _PASSTHROUGH or not callable(value):
            return value

        @functools.wraps(value)
        def timed(*args, **kwargs):
            start = perf_counter()
            try:
                result = value(*args, **kwargs)
            finally:
                add_api_time(perf_counter() - start)
            if isinstance(result, Iterator):
                return _timed_iterator(result)
            return result

        return timed


def _start() -> None:
    g.started = perf_counter()


def _report(response):
    if current_app.config.get("SERVER_TIMING") and "started" in g:
        total = (perf_counter() - g.started) * 1000
        api = g.get("api_seconds", 0.0) * 1000
        response.headers["Server-Timing"] = (
            f'api;dur={api:.2f};desc="API calls", app;dur={total - api:.2f};desc="dashboard", '
            f"total;dur={total:.2f}")
    return response


def init_app(app: Flask) -> None:
    app.before_request(_start)
    app.after_request(_report)
