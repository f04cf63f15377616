"""A WSGI app served on a free loopback port from a thread of the test process, and a factory
of such servers for a test that starts apps of its own configuration."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from werkzeug.serving import make_server


class LiveServer:
    """A WSGI app served on a free loopback port from a thread."""

    def __init__(self, app):
        self.app = app
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        # A short poll interval keeps shutdown (and so each test's teardown) quick.
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def start(self) -> LiveServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def live_servers(make_app: Callable[..., object],
                 close_app: Callable[[object], None]) -> Iterator[Callable[..., LiveServer]]:
    """`start(…)`: a live server of the app `make_app(…)` makes, as often as the block needs;
    when it ends, each server is stopped and its app closed with `close_app`."""
    started: list[tuple[object, LiveServer]] = []

    def start(*args, **kwargs) -> LiveServer:
        app = make_app(*args, **kwargs)
        server = LiveServer(app).start()
        started.append((app, server))
        return server

    try:
        yield start
    finally:
        for app, server in started:
            server.stop()
            close_app(app)
