"""Tiny real HTTP servers on loopback, run from threads, for what the service never does by
itself: answer with variant payloads, stay silent, drop the connection, or sit behind a proxy
that answers 503 for a while."""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from tests.support.background import Background
from tests.support.ports import free_port


@dataclass
class Seen:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: object


@dataclass
class Answer:
    status: int = 200
    body: object = None  # JSON-encoded unless bytes
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[Seen], Answer]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                    body)
        with self.server.lock:
            self.server.seen.append(seen)
        answer = self.server.respond(seen)
        payload = answer.body if isinstance(answer.body, bytes) else json.dumps(
            answer.body).encode()
        self.send_response(answer.status)
        headers = {"Content-Type": "application/json", **answer.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = _handle

    def log_message(self, *args):  # keep test output quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, respond: Route):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.respond = respond
        self.seen: list[Seen] = []
        self.lock = threading.Lock()


class TinyServer:
    """Answers every request with `respond(seen)`; keeps what it saw in `.seen`."""

    def __init__(self, respond: Route):
        self.server = _Server(respond)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def seen(self) -> list[Seen]:
        return self.server.seen

    def __enter__(self) -> TinyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def routes(table: dict[tuple[str, str], Route]) -> Route:
    """Dispatch on (method, path without query string)."""
    def respond(seen: Seen) -> Answer:
        route = table.get((seen.method, seen.path.split("?")[0]))
        if route is None:
            return Answer(404, {"statusCode": 404, "message": "Not found.", "error": "Not Found"})
        return route(seen)
    return respond


class FlakyProxy(TinyServer):
    """Answers the first `failures` requests with 503 and Retry-After, then forwards each
    request to `upstream` and relays its answer."""

    RELAYED = ("Content-Type", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining",
               "X-RateLimit-Reset")

    def __init__(self, upstream: str, failures: int, retry_after: str = "30"):
        self.upstream = upstream
        self.failures = failures
        self.retry_after = retry_after
        self.forwarded = 0
        self._count = 0
        self._lock = threading.Lock()
        self._session = requests.Session()
        super().__init__(self._respond)

    def _respond(self, seen: Seen) -> Answer:
        with self._lock:
            self._count += 1
            failing = self._count <= self.failures
        if failing:
            return Answer(503, {"statusCode": 503, "error": "Service Unavailable",
                                "message": "Service temporarily unavailable."},
                          {"Retry-After": self.retry_after})
        headers = {k: v for k, v in seen.headers.items()
                   if k in ("x-api-key", "x-project-id", "content-type")}
        data = json.dumps(seen.body).encode() if seen.body is not None else None
        upstream = self._session.request(seen.method, self.upstream + seen.path,
                                         headers=headers, data=data, timeout=30)
        with self._lock:
            self.forwarded += 1
        return Answer(upstream.status_code, upstream.content,
                      {k: upstream.headers[k] for k in self.RELAYED if k in upstream.headers})


class RawServer(Background):
    """A bare TCP server: `behaviour(connection)` runs for each accepted connection.

    For the failures no HTTP server produces on purpose: never answering, hanging up halfway.
    """

    def __init__(self, behaviour: Callable[[socket.socket], None]):
        super().__init__()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.behaviour = behaviour
        self.connections: list[socket.socket] = []
        self.accepted = 0

    def _run(self):
        self.listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            self.connections.append(connection)
            threading.Thread(target=self.behaviour, args=(connection,), daemon=True).start()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        for connection in self.connections:
            with contextlib.suppress(OSError):
                connection.close()
        self.listener.close()


def read_request(connection: socket.socket) -> bytes:
    """Read one request's head (and whatever body came with it)."""
    connection.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def never_answer(connection: socket.socket) -> None:
    read_request(connection)  # then keep the connection open, silent, until the test ends


def hang_up_mid_body(connection: socket.socket) -> None:
    read_request(connection)
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       b"Content-Length: 500\r\n\r\n{\"page\": {\"totalRecords\": 3")
    connection.shutdown(socket.SHUT_RDWR)
    connection.close()


def hang_up_before_answer(connection: socket.socket) -> None:
    read_request(connection)
    connection.close()


def closes_kept_alive_connection_as_the_next_request_arrives() -> Callable[[socket.socket], None]:
    """The first connection answers one request and keeps itself open, then closes when the
    next request arrives, unanswered (a server ending an idle kept-alive connection at the
    moment the client reuses it); later connections answer normally."""
    body = (b'{"page": {"totalRecords": 0, "limit": 100, "currentPage": 1, "totalPages": 0, '
            b'"nextPage": null, "prevPage": null}, "results": []}')
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
              + str(len(body)).encode() + b"\r\nConnection: keep-alive\r\n\r\n" + body)
    count = itertools.count()

    def behaviour(connection: socket.socket) -> None:
        first = next(count) == 0
        with contextlib.suppress(OSError):  # the client or the test's end closes it
            read_request(connection)
            connection.sendall(answer)
            if first:
                read_request(connection)
                connection.close()
            else:
                while read_request(connection):
                    connection.sendall(answer)

    return behaviour


def closed_port() -> str:
    """The URL of a loopback port nobody listens on."""
    return f"http://127.0.0.1:{free_port()}"
