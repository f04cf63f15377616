"""A request body the server cannot read is the client's error: 400, not 500.

The WSGI server decodes the body as the app reads `wsgi.input`, and raises there when the
client sent something malformed. Werkzeug counts only OSError and ValueError from that stream
as a broken request (400); other servers raise their own classes — gunicorn its parse errors,
e.g. `InvalidChunkSize` for a chunk size that is not hexadecimal — which reached the apps'
catch-all handlers as a 500 with a logged traceback, on any route that reads a form or a body,
before anyone signs in.

`guard_request_bodies(app)` wraps an app's WSGI callable so that whatever a read of the
server's `wsgi.input` raises becomes werkzeug's `BadRequest`, answered by the app's own 400
handler (JSON under /api, a page elsewhere). The criterion is where the exception comes from,
not its class: no server's classes are imported here. The dashboard and the service both apply
it; in embedded mode the dashboard's wrapper is the one that applies (the service's sees an
input that is already guarded).
"""

from __future__ import annotations

from werkzeug.exceptions import BadRequest, HTTPException


class UnreadableBody(BadRequest):
    description = "The request body could not be read: it is malformed or incomplete."


class GuardedInput:
    """The server's `wsgi.input`, its reads raising UnreadableBody instead of the server's own
    errors (an HTTPException raised below, such as werkzeug's 413, passes unchanged)."""

    def __init__(self, stream):
        self.stream = stream

    def _guarded(self, method, *args):
        try:
            return method(*args)
        except HTTPException:
            raise
        except Exception as error:
            raise UnreadableBody() from error

    def read(self, *args):
        return self._guarded(self.stream.read, *args)

    def readline(self, *args):
        return self._guarded(self.stream.readline, *args)

    def readlines(self, *args):
        return self._guarded(self.stream.readlines, *args)

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if close is not None:
            close()


class GuardRequestBodies:
    """WSGI: the request's `wsgi.input` guarded (once) before the app reads it."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        stream = environ.get("wsgi.input")
        if stream is not None and not isinstance(stream, GuardedInput):
            environ["wsgi.input"] = GuardedInput(stream)
        return self.wsgi_app(environ, start_response)


def guard_request_bodies(app) -> None:
    """Wrap the Flask `app`'s WSGI callable (in create_app, like ProxyFix)."""
    app.wsgi_app = GuardRequestBodies(app.wsgi_app)
