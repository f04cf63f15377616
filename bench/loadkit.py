"""What the benchmarks share: a private Redis, the service and the dashboard under gunicorn
(several workers, as deployed; the fault tests' launcher, tests/faults/processes.py), any
other server started and waited for, a seeded SQLite database with organizations at given
limits, a process's children, and percentiles.

Nothing here touches the shared Redis on 6379: each run starts its own on a free port.
"""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import requests
from sqlalchemy import create_engine

from service import create_app as create_service_app
from service import schema
from service.org import admin
from service.store.db import session_scope
from tests.faults import processes
from tests.support.ports import free_port


@contextmanager
def seeded_service_database(folder: Path) -> Iterator[tuple[str, object]]:
    """(database URL, a session) on a new, migrated SQLite file of the service; what the block
    adds is committed, and the engine let go, when it ends."""
    url = f"sqlite:///{folder / 'service.sqlite3'}"
    engine = create_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None})
    try:
        with session_scope(app) as session:
            yield url, session
    finally:
        app.extensions["tagdesk_engine"].dispose()


def organizations(session, count: int, limits: tuple[int, int, int], name: str
                  ) -> Iterator[tuple[int, str, str]]:
    """`count` organizations with these limits (per second, minute, hour), each with a key and
    a project "Shop search": (index, key, project id), for the caller to fill the project."""
    for index in range(count):
        org_id = admin.create_org(session, f"{name} {index:02d}")
        admin.set_limits(session, org_id, *limits)
        yield index, admin.create_key(session, org_id, "tdk"), admin.create_project(
            session, org_id, "Shop search")


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (gunicorn's workers), in order of their ids."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def serve(command: list[str], ready_url: str, what: str, **popen) -> subprocess.Popen:
    """`command` started (`popen`: subprocess.Popen's options), once `ready_url` answers at
    all; if it does not within 30 s, the process is killed and the run stops."""
    process = subprocess.Popen(command, **popen)
    for _ in range(300):
        try:
            requests.get(ready_url, timeout=10)
            return process
        except requests.RequestException:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{what} did not start")


def run_each_in_a_thread(target, arguments: list[tuple]) -> None:
    """`target(*args)` for each args of `arguments`, all at once, each in a thread of its own;
    returns when all have ended."""
    threads = [threading.Thread(target=target, args=args) for args in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class KeptAlive:
    """JSON over one kept-alive HTTP/1.1 connection (http.client) to one server: for timing
    answers of a few milliseconds, where requests' own work (~1.3 ms a call here, measured
    against this) would be a large share of what is timed, the same for every system."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None) -> None:
        parsed = urlsplit(base_url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=120)
        self.headers = dict(headers or {})

    def get(self, path: str, params: list[tuple[str, str]] | None = None):
        return self._call("GET", path + ("?" + urlencode(params) if params else ""), None)

    def post(self, path: str, body) -> object:
        return self._call("POST", path, json.dumps(body).encode())

    def _call(self, method: str, target: str, body: bytes | None):
        headers = {**self.headers, **({"content-type": "application/json"} if body else {})}
        try:
            self.connection.request(method, target, body=body, headers=headers)
            response = self.connection.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # The server closed the idle connection (gunicorn keeps one 2 s): a new one, and
            # the call again (every call timed here only reads).
            self.connection.close()
            self.connection.request(method, target, body=body, headers=headers)
            response = self.connection.getresponse()
        content = response.read()
        if response.status >= 400:
            raise HTTPFailure(response.status, content.decode(errors="replace"))
        return json.loads(content)


class HTTPFailure(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"{status} {text[:80]}".strip())
        self.status, self.text = status, text


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class Redis:
    """redis-server without persistence on a free port, for this run only."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Redis:
        if shutil.which("redis-server") is None:
            raise SystemExit("redis-server is needed")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        client = redis.Redis(port=self.port, socket_timeout=1)
        for _ in range(200):
            try:
                client.ping()
                return self
            except redis.RedisError:
                time.sleep(0.02)
        raise SystemExit("redis-server did not start")

    def __exit__(self, *_exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class Gunicorn(processes.Gunicorn):
    """`target` under gunicorn with its own environment (no TAGDESK_* leaks in), for the time
    of a `with` block: started and waited for (`ready_path` answers 200; one that does not
    start stops the run with its log's tail), then killed, since a benchmark has read all it
    reports by then. As in the fault tests, the master imports the app's modules once before
    the workers fork (tests/faults/preimport.py): a faster start, the same requests."""

    def __init__(self, target: str, env: dict[str, str], workers: int, threads: int,
                 ready_path: str, log: Path):
        super().__init__(target, env, log, ready_path, workers=workers, threads=threads)

    def __enter__(self) -> Gunicorn:
        return self.start()

    def __exit__(self, *_exc) -> None:
        self.stop()

    def errors_logged(self) -> int:
        """Tracebacks in the log: an error answered as a sentence is logged without one."""
        return self.log.read_text(encoding="utf-8", errors="replace").count("Traceback")


def service_under_gunicorn(database_url: str, redis: Redis, workers: int, threads: int,
                           folder: Path) -> Gunicorn:
    """The service on `database_url`, its rate limits counted in `redis`, under gunicorn
    (log: folder/service.log)."""
    return Gunicorn("service:create_app()",
                    {"TAGDESK_DATABASE_URL": database_url, "TAGDESK_REDIS_URL": redis.url,
                     "TAGDESK_SERVICE_SECRET_KEY": "bench-load"},
                    workers, threads, "/api/openapi.json", folder / "service.log")
