"""With Redis, two service processes share one organization's budget."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from service import create_app
from service.org import admin
from service.store.db import session_scope
from tests.support.databases import REDIS_URL
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.redis


@pytest.fixture
def two_processes(tmp_path, sqlite_template):
    database = tmp_path / "shared.sqlite3"
    shutil.copy(sqlite_template, database)
    url = f"sqlite:///{database}"
    app = create_app({"DATABASE_URL": url})
    with session_scope(app) as session:
        org = admin.create_org(session, "Shared budget")
        key = admin.create_key(session, org, "tdk")
        # The minute decides the burst below: a busy machine cannot stretch it out of the
        # window, as it can out of a second.
        admin.set_limits(session, org, 1000, 10, 10_000)
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
    # The organization is new, so its windows in the shared Redis hold nothing yet; the
    # start-up probes were charged to this address, not to it.
    statuses = [requests.get((first, second)[i % 2] + "/api/projects/list", timeout=10,
                             headers={"x-api-key": key}).status_code for i in range(11)]
    assert statuses == [200] * 10 + [429]
    # Both processes read the one window: each now refuses.
    for base in (first, second):
        assert requests.get(base + "/api/projects/list", timeout=10,
                            headers={"x-api-key": key}).status_code == 429
