"""With Redis, two service processes share one organization's budget."""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from service import admin, create_app
from service.db import session_scope
from service.ratelimit import RateLimiter
from tests.support.databases import REDIS_URL
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def two_processes(tmp_path, sqlite_template):
    database = tmp_path / "shared.sqlite3"
    shutil.copy(sqlite_template, database)
    url = f"sqlite:///{database}"
    app = create_app({"DATABASE_URL": url})
    with session_scope(app) as session:
        org = admin.create_org(session, "Shared budget")
        key = admin.create_key(session, org, "tdk")
    app.extensions["tagdesk_engine"].dispose()

    env = {**os.environ, "TAGDESK_DATABASE_URL": url, "TAGDESK_REDIS_URL": REDIS_URL}
    ports = [free_port(), free_port()]
    processes = [subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "service", "run", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in ports]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    deadline = time.time() + 60
    for url_ in urls:
        while True:
            try:
                requests.get(url_ + "/api/openapi.json", timeout=2)
                break
            except requests.RequestException:
                if time.time() > deadline:
                    pytest.fail("the service processes did not start")
                time.sleep(0.2)
    yield urls, key, org
    for process in processes:
        process.terminate()
        process.wait(10)


def test_two_processes_share_one_budget(two_processes):
    (first, second), key, org = two_processes
    # No sleep for the start-up probes' window to pass: they were charged to this address
    # (several runs may share the Redis and its address windows), the burst is charged to the
    # organization alone. Its per-second window must hold no request but the burst's: checked
    # in the shared Redis, through the service's own limiter (a peek charges nothing). The
    # windows' keys leave the amount out, so with `never` per minute and per hour the
    # per-second one is the window reported.
    limiter, never = RateLimiter(REDIS_URL), 10**9

    def empty() -> bool:
        return limiter.peek("org:" + org, (10, never, never)).window.remaining == 10

    assert wait_until(empty, timeout=5, interval=0.05), "the organization's window is not empty"
    statuses = []
    started = time.time()
    for i in range(11):
        base = first if i % 2 == 0 else second
        statuses.append(requests.get(base + "/api/projects/list", timeout=10,
                                     headers={"x-api-key": key}).status_code)
    assert time.time() - started < 1, "the burst must fit in one second to mean anything"
    assert statuses == [200] * 10 + [429]
