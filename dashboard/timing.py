"""Where a page view's time goes: in API calls, or in the dashboard itself.

Every call through the session's client is timed (`TimedClient`); with SERVER_TIMING on, each
response says so in a `Server-Timing` header (browsers' developer tools show it; the benchmark
reads it). Off by default: it tells the outside world a little about the inside. Besides wall
time, the header gives the CPU time the request's thread spent outside API calls (`cpu`): on a
busy machine the wall time also counts waiting for a core, the CPU time only the work.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from time import perf_counter, thread_time

from flask import Flask, current_app, g, has_app_context

_PASSTHROUGH = {"close", "with_mode", "masked_key", "base_url", "mode", "stats"}


def add_api_time(seconds: float, cpu_seconds: float = 0.0) -> None:
    if has_app_context():
        g.api_seconds = g.get("api_seconds", 0.0) + seconds
        g.api_cpu_seconds = g.get("api_cpu_seconds", 0.0) + cpu_seconds


def _timed_iterator(iterator: Iterator) -> Iterator:
    """A walk over pages: the time of each step is time spent on the API."""
    while True:
        start, start_cpu = perf_counter(), thread_time()
        try:
            item = next(iterator)
        except StopIteration:
            add_api_time(perf_counter() - start, thread_time() - start_cpu)
            return
        add_api_time(perf_counter() - start, thread_time() - start_cpu)
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
            start, start_cpu = perf_counter(), thread_time()
            try:
                result = value(*args, **kwargs)
            finally:
                add_api_time(perf_counter() - start, thread_time() - start_cpu)
            if isinstance(result, Iterator):
                return _timed_iterator(result)
            return result

        return timed


def _start() -> None:
    g.started = perf_counter()
    g.started_cpu = thread_time()


def _report(response):
    if current_app.config.get("SERVER_TIMING") and "started" in g:
        total = (perf_counter() - g.started) * 1000
        api = g.get("api_seconds", 0.0) * 1000
        cpu = (thread_time() - g.started_cpu - g.get("api_cpu_seconds", 0.0)) * 1000
        response.headers["Server-Timing"] = (
            f'api;dur={api:.2f};desc="API calls", app;dur={total - api:.2f};desc="dashboard", '
            f'cpu;dur={cpu:.2f};desc="dashboard CPU", total;dur={total:.2f}')
    return response


def init_app(app: Flask) -> None:
    app.before_request(_start)
    app.after_request(_report)
