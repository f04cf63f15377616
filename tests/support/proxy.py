"""The deployment's front: nginx with the committed deploy/nginx.conf, on loopback ports of a
test's own; raw HTTP requests; and clients that open a request and never finish its headers.

nginx runs as a foreground process (`daemon off`) with its prefix, pid file, logs and temporary
files in the test's folder: the main configuration written here is the smallest that includes
the committed file, as Debian's /etc/nginx/nginx.conf includes /etc/nginx/conf.d/*.conf. The
committed file is changed only where it names ports (its `listen` and its upstreams' servers),
and where a test asks for another value of a directive by name (a timeout it would otherwise
wait out).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.processes import stop_group

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "deploy" / "nginx.conf"
# What the committed file says, and what a test puts in its place.
LISTEN = "listen 80;"
DASHBOARD_UPSTREAM = "server 127.0.0.1:8080;"
SERVICE_UPSTREAM = "server 127.0.0.1:8000;"

MAIN = """\
{user}worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 768; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/tagdesk.conf;
}}
"""


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(path, os.X_OK)),
        None)


def site_config(port: int, dashboard_port: int, service_port: int,
                settings: dict[str, str] | None = None) -> str:
    """deploy/nginx.conf with this test's ports, and with the values of `settings` (directive:
    value) where a test asks for them: each replaced directive is a line of its own (comments
    aside), and must occur exactly once."""
    text = SITE.read_text(encoding="utf-8")
    for old, new in ((LISTEN, f"listen 127.0.0.1:{port};"),
                     (DASHBOARD_UPSTREAM, f"server 127.0.0.1:{dashboard_port};"),
                     (SERVICE_UPSTREAM, f"server 127.0.0.1:{service_port};")):
        text, count = re.subn(rf"(?m)^(\s*){re.escape(old)}$", rf"\g<1>{new}", text)
        assert count == 1, f"deploy/nginx.conf should say {old!r} once"
    for name, value in (settings or {}).items():
        text, count = re.subn(rf"(?m)^(\s*){re.escape(name)} [^;\n]+;$",
                              rf"\g<1>{name} {value};", text)
        assert count == 1, f"deploy/nginx.conf should set {name} once"
    return text


def committed_setting(name: str) -> str:
    """The value deploy/nginx.conf gives the directive `name` (a line of its own, once)."""
    found = re.findall(rf"(?m)^\s*{re.escape(name)} ([^;\n]+);$",
                       SITE.read_text(encoding="utf-8"))
    assert len(found) == 1, f"deploy/nginx.conf should set {name} once"
    return found[0]


class Nginx:
    """nginx in front of a dashboard and a service on loopback (the same port for both in
    embedded mode), listening on a free port of its own."""

    def __init__(self, folder: Path, dashboard_port: int, service_port: int,
                 settings: dict[str, str] | None = None):
        self.prefix = folder
        self.port = free_port()
        self.dashboard_port = dashboard_port
        self.service_port = service_port
        self.settings = settings  # directives of the committed file given other values
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Nginx:
        binary = nginx_binary()
        if binary is None:  # only reached when TAGDESK_TEST_PROXY asked for these tests
            pytest.fail("these tests need nginx (apt-get install nginx)")
        self.prefix.mkdir(parents=True, exist_ok=True)
        (self.prefix / "tagdesk.conf").write_text(
            site_config(self.port, self.dashboard_port, self.service_port, self.settings),
            encoding="utf-8")
        # As root, nginx's workers would run as `nobody`, who cannot enter the test's folder.
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else ""
        (self.prefix / "nginx.conf").write_text(
            MAIN.format(user=user, prefix=self.prefix), encoding="utf-8")
        with open(self.prefix / "stderr.log", "ab") as log:
            self.process = subprocess.Popen(
                [binary, "-p", str(self.prefix), "-c", str(self.prefix / "nginx.conf"),
                 "-e", str(self.prefix / "error.log"), "-g", "daemon off;"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=1):
                return self
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"nginx did not start:\n{self.log()}")

    def log(self) -> str:
        parts = []
        for name in ("stderr.log", "error.log"):
            with contextlib.suppress(OSError):
                parts.append((self.prefix / name).read_text(errors="replace")[-3000:])
        return "\n".join(parts)

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process, grace=5)


def raw_request(port: int, request: bytes, timeout: float = 10.0) -> bytes:
    """Send `request` as it is on a connection of its own; everything read until the server
    closes the connection (or `timeout` passes without a byte)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(request)
        answer = b""
        with contextlib.suppress(TimeoutError):
            while chunk := connection.recv(65536):
                answer += chunk
        return answer


def status_of(answer: bytes) -> int | None:
    """The status code of the first response in `answer` (None when nothing came)."""
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else None


class SlowClients:
    """`count` connections to `port`, each having sent the start of a request and then one
    more header line every `interval` seconds, never the blank line that ends the headers (the
    "slowloris" attack); with `body`, whole headers of a form sign-in and then its body, a byte
    every `interval` seconds, never all of it. A background thread keeps them going until
    `close()`, for at most `limit` seconds."""

    def __init__(self, port: int, count: int, interval: float = 1.0, limit: float = 120.0,
                 body: bool = False):
        self.port = port
        self.count = count
        self.interval = interval
        self.limit = limit
        self.body = body
        self.sockets: list[socket.socket] = []
        self.dropped = 0  # connections the server closed meanwhile
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, name="slow-clients", daemon=True)

    def open(self) -> SlowClients:
        start = (b"POST /signin HTTP/1.1\r\nHost: tagdesk.example.com\r\n"
                 b"Content-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 100000\r\n\r\napi_key=" if self.body else
                 b"GET /signin HTTP/1.1\r\nHost: tagdesk.example.com\r\n")
        for _ in range(self.count):
            connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            connection.sendall(start)
            self.sockets.append(connection)
        self._thread.start()
        return self

    def _trickle(self) -> None:
        deadline = time.monotonic() + self.limit
        line = 0
        while not self._stop.wait(self.interval) and time.monotonic() < deadline:
            line += 1
            for connection in list(self.sockets):
                try:
                    connection.sendall(b"x" if self.body else b"X-Slow-%d: 1\r\n" % line)
                except OSError:
                    self.sockets.remove(connection)
                    connection.close()
                    self.dropped += 1

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        for connection in self.sockets:
            connection.close()
        self.sockets.clear()

    def __enter__(self) -> SlowClients:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()
