"""A WSGI app served on a free loopback port from a thread of the test process."""

from __future__ import annotations

import threading

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
