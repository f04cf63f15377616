"""What the load benchmarks share: a private Redis, the service and the dashboard under
gunicorn (several workers, as deployed), a seeded SQLite database, and percentiles.

Nothing here touches the shared Redis on 6379: each run starts its own on a free port.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from sqlalchemy import create_engine

from service import create_app as create_service_app
from service import schema
from service.db import session_scope

ROOT = Path(__file__).resolve().parents[1]


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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


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


class Gunicorn:
    """`target` under gunicorn with its own environment (no TAGDESK_* leaks in)."""

    def __init__(self, target: str, env: dict[str, str], workers: int, threads: int,
                 ready_path: str, log: Path):
        self.target = target
        self.env = env
        self.workers = workers
        self.threads = threads
        self.ready_path = ready_path
        self.log = log
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Gunicorn:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TAGDESK_")}
        env.update(self.env, PYTHONPATH=str(ROOT))
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--workers", str(self.workers),
                 "--threads", str(self.threads), "--no-control-socket",
                 "--bind", f"127.0.0.1:{self.port}", self.target],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + self.ready_path, timeout=5).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.__exit__()
        raise SystemExit(f"{self.target} did not start; see {self.log}")

    def __exit__(self, *_exc) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)

    def errors_logged(self) -> int:
        """Tracebacks in the log: an error answered as a sentence is logged without one."""
        return self.log.read_text(encoding="utf-8", errors="replace").count("Traceback")
