"""A job interrupted by the dashboard's restart is reported with exactly what was done, and
Resume finishes it without applying anything twice.

The dashboard runs as a real process here (gunicorn, embedded service, on a database of this
test's own) so that it can be killed mid-job — SIGKILL, no chance to clean up — and started
again on the same instance folder, as after a crash or a deploy.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from jobs.store import Store
from queryapi import Client
from service import create_app as create_service_app
from service.org import admin
from service.store.db import session_scope, write_scope
from tests.support.e2e import LAPTOP
from tests.support.ports import free_port
from tests.support.servers import LiveServer
from tests.support.world import UNLIMITED, small_org

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
QUERIES = 1000
ALREADY = 150  # of them have the tag before the edit


class DashboardProcess:
    def __init__(self, config: dict):
        self.config = config
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> DashboardProcess:
        port = free_port()
        command = [sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", "4",
                   "--timeout", "60", "--no-control-socket", "--bind", f"127.0.0.1:{port}",
                   f"app:create_app({self.config!r})"]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/signin", timeout=10).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        self.kill()
        pytest.fail("the dashboard did not start")

    def kill(self) -> None:
        """SIGKILL to the dashboard's process group (master and worker): no cleanup at all."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


@pytest.fixture
def setup(tmp_path, sqlite_template):
    database = tmp_path / "service.sqlite3"
    shutil.copy(sqlite_template, database)
    service_config = {"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": None,
                      "DEFAULT_LIMITS": UNLIMITED}
    service_app = create_service_app({**service_config, "TESTING": True})
    with session_scope(service_app) as session:
        org = small_org(session, "Restart org", "Restart project")
        brand = org.tags["brand"]
        admin.insert_queries(session, org.project_id, [
            (f"wanderschuhe {i:04d}", "de", "CH", [brand] if i % (QUERIES // ALREADY) == 0
             and i // (QUERIES // ALREADY) < ALREADY else [], None)
            for i in range(QUERIES)])
        # Slow enough to be stopped half-way.
        admin.set_limits(session, org.org_id, 5, 100_000, 1_000_000)
    # The ground truth, through the API, from a service of this test's own.
    api_server = LiveServer(service_app).start()
    config = {"INSTANCE_PATH": str(tmp_path / "instance"), "SECRET_KEY": "restart-secret",
              "SERVICE_CONFIG": service_config, "BULK_BATCH_SIZE": 100,
              "SIGNIN_LIMIT": "1000/minute", "JOBS_POLL_SECONDS": 0.2}
    processes = []
    yield {"config": config, "key": org.key, "project_id": org.project_id, "org_id": org.org_id,
           "api": Client(api_server.url, org.key), "processes": processes,
           "service_app": service_app, "jobs_url": f"sqlite:///{tmp_path}/instance/"
                                                   "dashboard.sqlite3"}
    for process in processes:
        process.kill()
    api_server.stop()
    service_app.extensions["tagdesk_engine"].dispose()


def state(api: Client, project_id: str) -> dict:
    names = {tag.id: tag.name for tag in api.iter_tags(project_id)}
    return {q.query: ({names[t] for t in q.tags}, q.updated_at)
            for q in api.iter_queries(project_id)}


def test_a_job_interrupted_by_a_restart_is_reported_and_resumed(browser, setup, screenshots):
    api, project_id = setup["api"], setup["project_id"]
    before = state(api, project_id)
    assert sum("brand" in names for names, _ in before.values()) == ALREADY

    first = DashboardProcess(setup["config"]).start()
    setup["processes"].append(first)
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(first.url + "/signin")
        page.get_by_label("API key").fill(setup["key"])
        page.get_by_label("Your name (shown in the activity log)").fill("Chris")
        page.get_by_role("button", name="Sign in").click()
        page.goto(f"{first.url}/projects/{project_id}/queries")
        page.get_by_role("checkbox", name="Select all on this page").check()
        page.get_by_role("button", name=f"Select all {QUERIES:,} matching").click()
        page.get_by_role("button", name="Add tags").click()
        page.get_by_role("dialog").get_by_role("checkbox", name="brand", exact=True).check()
        page.get_by_role("dialog").get_by_role("button", name="Apply", exact=True).click()
        page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
        expect(page.locator("[data-job] [data-done]")).not_to_have_text("0")

        # Half-way through, the dashboard is killed.
        jobs = Store(setup["jobs_url"])
        edit = jobs.for_project(project_id, limit=1)[0]
        deadline = time.monotonic() + 30
        while jobs.get(edit.id).processed < 400 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.kill()
        stopped = jobs.get(edit.id)
        assert stopped.state == "running" and 400 <= stopped.processed < QUERIES
        jobs.engine.dispose()
        middle = state(api, project_id)
        tagged_then = {q for q, (names, _) in middle.items() if "brand" in names}
        assert ALREADY + stopped.processed - stopped.untouched <= len(tagged_then) < QUERIES
        # The tight limit was there to stop the job half-way; the rest need not be slow.
        with write_scope(setup["service_app"]) as session:  # the killed writer waited for
            admin.set_limits(session, setup["org_id"], 100_000, 1_000_000, 10_000_000)

        # It starts again: the job is reported as interrupted, with what was done.
        second = DashboardProcess(setup["config"]).start()
        setup["processes"].append(second)
        page.goto(f"{second.url}/projects/{project_id}/queries")
        job = page.locator("[data-job]").first
        expect(job).to_contain_text(f"Interrupted after {stopped.processed:,} of "
                                    f"{QUERIES:,} queries done.")
        expect(job).to_contain_text(
            "Tagdesk stopped working on this before it finished (a restart or a lost worker).")
        page.screenshot(path=screenshots / "bulk-interrupted.png")
        job.get_by_role("button", name="Resume").click()
        expect(page.locator("[data-job]").first).to_contain_text(
            f"Added ‘brand’ to {QUERIES - ALREADY:,} queries ({ALREADY} already had it).",
            timeout=60_000)
    finally:
        context.close()

    after = state(api, project_id)
    assert all("brand" in names for names, _ in after.values())
    assert {q: names for q, (names, _) in after.items()} == {
        q: names | {"brand"} for q, (names, _) in before.items()}
    # Nothing applied twice: what was written before the restart was not written again.
    for query in tagged_then:
        assert after[query][1] == middle[query][1], query
    jobs = Store(setup["jobs_url"])
    final = jobs.get(edit.id)
    assert final.state == "done"
    assert (final.processed, final.changed, final.untouched) == (QUERIES, QUERIES - ALREADY,
                                                                 ALREADY)
    assert len(jobs.changes(edit.id)) == QUERIES - ALREADY
    jobs.engine.dispose()
