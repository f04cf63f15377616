"""The scale-out topology's parts (tests/scaleout/conftest.py starts it): processes in sessions
of their own, the cluster's addresses and processes, its PostgreSQL databases and Redis names,
and the data it is seeded with.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, text

from service import create_app as create_service_app
from service.org import admin
from service.store.db import session_scope
from tests.support.databases import POSTGRES_ADMIN_URL

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 14
START_SECONDS = 60


def redis_url_with_db(url: str, db: int) -> str:
    base, _, last = url.rstrip("/").rpartition("/")
    return f"{base}/{db}" if last.isdigit() else f"{url.rstrip('/')}/{db}"


class Process:
    """A command in a session of its own, with its output in a log file."""

    def __init__(self, name: str, command: list[str], env: dict, log_folder: Path):
        self.name = name
        self.command = command
        self.env = env
        self.log_path = log_folder / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> Process:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL to the whole group, and to children that left it (RQ runs each job in a
        session of its own): no chance to clean up."""
        if self.running:
            children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
            try:
                orphans = [int(pid) for pid in children.read_text().split()]
            except OSError:
                orphans = []
            os.killpg(self.process.pid, signal.SIGKILL)
            for pid in orphans:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.process.wait(10)


    def wait_until(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if not self.running:
                break
            try:
                if ready():
                    return
            except (requests.RequestException, OSError):
                pass
            time.sleep(0.05)
        pytest.fail(f"{self.name} did not {what}:\n{self.log_tail()}")


def ended(pid: int, timeout: float = 5.0) -> bool:
    """Has process `pid` ended (gone, or a zombie nobody reaped yet)?"""
    deadline = time.monotonic() + timeout
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def gunicorn(binds: list[int], factory: str, extra: list[str] = ()) -> list[str]:
    command = [sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", "4",
               "--timeout", "60", "--graceful-timeout", "5", "--no-control-socket", *extra]
    for port in binds:
        command += ["--bind", f"127.0.0.1:{port}"]
    return [*command, factory]


def answers(url: str) -> bool:
    return requests.get(url, timeout=5, allow_redirects=False).status_code < 500


@dataclass
class Org:
    id: str
    key: str
    project_id: str
    tags: dict[str, int] = field(default_factory=dict)


@dataclass
class Cluster:
    token: str
    redis_url: str
    service_database: str
    jobs_database: str
    api_url: str
    service_urls: list[str]
    dashboard_urls: list[str]
    services: list[Process]
    dashboards: list[Process]
    workers: list[Process]
    session_prefix: str
    queue: str
    orgs: dict[str, Org]

    def restart_services(self) -> None:
        for process in self.services:
            process.kill()
            process.start()
        for process, url in zip(self.services, self.service_urls, strict=True):
            process.wait_until(lambda url=url: answers(url + "/api/openapi.json"), "restart")

    def worker_of(self, pid: int) -> Process:
        """The worker whose child process `pid` is (RQ runs each job in a forked child)."""
        parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        found = [w for w in self.workers if w.running and w.process.pid == parent]
        assert found, f"process {pid} is no worker's child"
        return found[0]

    def redis(self):
        import redis

        return redis.Redis.from_url(self.redis_url)


def create_database(name: str) -> str:
    engine = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name


def drop_database(name: str) -> None:
    engine = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def job_ids(database: str) -> list[str]:
    """The jobs of this run (RQ names its records after them)."""
    engine = create_engine(POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + database)
    try:
        with engine.connect() as connection:
            return list(connection.scalars(text("SELECT id FROM edits")))
    except Exception:  # the database or its tables were never made
        return []
    finally:
        engine.dispose()


def forget_in_redis(url: str, marks: list[str]) -> None:
    """Delete this run's keys (and its names in RQ's sets): those naming its token, its
    organizations (rate-limit windows) or its jobs."""
    import redis

    connection = redis.Redis.from_url(url)
    try:
        mine = [key for key in connection.scan_iter(count=1000)
                if any(mark.encode() in key for mark in marks)]
        if mine:
            connection.delete(*mine)
        for members in ("rq:queues", "rq:workers"):
            gone = [m for m in connection.smembers(members) if marks[0].encode() in m]
            if gone:
                connection.srem(members, *gone)
    finally:
        connection.close()


# The data: an organization whose jobs the tests run (two projects of 1,000 queries; in the
# second, every 13th query already has the tag the fault test adds), and two whose only use is
# spending a budget. Per-minute limits of 10 make the shared budget exact however fast or slow
# the requests are: every one of them falls in the same minute.
QUERIES = 1000
ALREADY_EVERY = 13
JOB_LIMITS = (10, 100_000, 1_000_000)
BUDGET_LIMITS = (1000, 10, 10_000)


def seed(database_url: str) -> dict[str, Org]:
    service_app = create_service_app({"DATABASE_URL": database_url, "REDIS_URL": None,
                                      "TESTING": True})
    orgs: dict[str, Org] = {}
    with session_scope(service_app) as session:
        org_id = admin.create_org(session, "Scale-out jobs")
        key = admin.create_key(session, org_id, "tdk")
        progress = admin.create_project(session, org_id, "Progress project")
        fault = admin.create_project(session, org_id, "Fault project")
        tags = {"sale": admin.create_tag(session, progress, "sale", "#ff7f0e"),
                "brand": admin.create_tag(session, fault, "brand", "#1f77b4")}
        admin.insert_queries(session, progress, [
            (f"laufschuhe {i:04d}", "de", "DE", [], None) for i in range(QUERIES)])
        admin.insert_queries(session, fault, [
            (f"wanderschuhe {i:04d}", "de", "CH",
             [tags["brand"]] if i % ALREADY_EVERY == 0 else [], None)
            for i in range(QUERIES)])
        admin.set_limits(session, org_id, *JOB_LIMITS)
        orgs["jobs"] = Org(org_id, key, progress, tags)
        orgs["fault"] = Org(org_id, key, fault, tags)
        for name in ("budget", "race"):
            budget_org = admin.create_org(session, f"Shared budget ({name})")
            orgs[name] = Org(budget_org, admin.create_key(session, budget_org, "tdk"),
                             admin.create_project(session, budget_org, "Budget project"))
            admin.set_limits(session, budget_org, *BUDGET_LIMITS)
    service_app.extensions["tagdesk_engine"].dispose()
    return orgs
