"""Where a background job finds its org key: the signed-in person's server-side session,
opened through the app's own session interface (jobs/sessions.py) — whatever store, key
prefix and serialization the app configured — and never the jobs database."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app
from jobs.work import SIGNED_OUT, run_job
from tests.dashboard.bulk_helpers import bulk_url, page, plan_of, post, wait_for
from tests.support.dashboard import AuthActions, close_app
from tests.support.databases import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]
COOKIE = "tagdesk_session"


def key_of(app, session_ref):
    """What `run_job` is handed to find a session's key, asked directly."""
    return app.extensions["tagdesk_job_config"]()["SESSIONS"](session_ref)


def sid_of(auth: AuthActions) -> str:
    return auth.client.get_cookie(COOKIE).value


def queue_job(app, auth: AuthActions, shop) -> str:
    """A bulk edit of every filler query, confirmed and left waiting in the queue."""
    html = page(auth.client, shop, "q=filler")
    asked = post(auth.client, bulk_url(shop), {"action": "add", "apply_tag": str(
        shop.tags["sale"]), "scope": "all", "q": "filler"}, html)
    assert asked.status_code == 200
    runner = app.extensions["tagdesk_runner"]
    submit, runner.submit = runner.submit, lambda job_id: None
    try:
        post(auth.client, f"/projects/{shop.project_id}/bulk/confirm",
             {"plan": plan_of(asked.get_data(as_text=True))}, html)
    finally:
        runner.submit = submit
    edit = app.extensions["tagdesk_jobs"].for_project(shop.project_id, limit=1)[0]
    assert edit.state == "queued"
    return edit.id


@pytest.fixture(params=[
    pytest.param(("files", "json"), id="files-json"),
    pytest.param(("files", "msgpack"), id="files-msgpack"),
    pytest.param(("redis", "json"), id="redis-json", marks=pytest.mark.redis),
    pytest.param(("redis", "msgpack"), id="redis-msgpack", marks=pytest.mark.redis),
])
def configured_app(request, shop, dashboard_config):
    """The dashboard with its sessions in files or in Redis, in either serialization, under a
    key prefix of this test's own (not the default one)."""
    store, serialization = request.param
    config = {**dashboard_config, "SESSION_SERIALIZATION_FORMAT": serialization,
              "SESSION_KEY_PREFIX": f"tagdesk-test-{secrets.token_hex(4)}:"}
    if store == "redis":
        config["REDIS_URL"] = REDIS_URL
    app = create_app(config)
    yield app
    close_app(app)


def test_a_job_reads_the_key_through_the_apps_session_configuration(configured_app, shop):
    app = configured_app
    auth = AuthActions(app.test_client(), shop)
    auth.sign_in()
    sid = sid_of(auth)
    if app.config.get("REDIS_URL"):
        import redis

        connection = redis.Redis.from_url(REDIS_URL)
        try:  # the session is where the app's configuration put it
            assert connection.exists(app.config["SESSION_KEY_PREFIX"] + sid)
        finally:
            connection.close()
    assert key_of(app, sid) == shop.key
    assert key_of(app, sid) == shop.key  # reading it changed nothing
    assert key_of(app, "no-such-session") is None
    auth.sign_out()
    assert key_of(app, sid) is None


def test_signing_out_stops_a_job_that_has_not_started_on_each_store(configured_app, shop):
    app = configured_app
    auth = AuthActions(app.test_client(), shop)
    auth.sign_in()
    store = app.extensions["tagdesk_jobs"]
    config = app.extensions["tagdesk_job_config"]()
    started = queue_job(app, auth, shop)
    assert run_job(started, config) == "done"
    assert wait_for(app, started).changed == 60
    waiting = queue_job(app, auth, shop)
    auth.sign_out()
    assert run_job(waiting, config) == "interrupted"
    assert store.get(waiting).message == SIGNED_OUT
    assert store.get(waiting).resumable


def test_only_the_session_a_job_recorded_is_read(app, auth, shop):
    auth.sign_in()
    sid = sid_of(auth)
    assert key_of(app, sid) == shop.key
    for ref in (None, "", " ", f"nope; {COOKIE}={sid}", f"nope,{COOKIE}={sid}",
                f'"{sid}"', f"{sid} ", f"{sid};", sid + "x", sid[:-1], "x" * 300):
        assert key_of(app, ref) is None, ref


def test_reading_a_key_never_writes_the_session_store(app, auth, shop):
    auth.sign_in()
    sid = sid_of(auth)
    folder = Path(app.instance_path) / "sessions"

    def files():
        return {path.name: (path.stat().st_mtime_ns, path.read_bytes())
                for path in folder.iterdir()}

    before = files()
    assert key_of(app, sid) == shop.key
    assert key_of(app, secrets.token_urlsafe(32)) is None
    assert files() == before


def test_an_unreachable_session_store_means_no_key_not_a_crash(shop, dashboard_config):
    app = create_app({**dashboard_config, "REDIS_URL": "redis://127.0.0.1:9/0"})
    try:
        assert key_of(app, secrets.token_urlsafe(32)) is None
    finally:
        close_app(app)


def test_jobs_import_neither_the_dashboard_nor_the_service(tmp_path):
    """Everything of jobs/, its migrations included, runs without blueprints/ or service/."""
    script = (
        "import sys\n"
        "import jobs, jobs.deltas, jobs.export, jobs.fresh, jobs.rq_runner, jobs.rq_worker\n"
        "import jobs.runner, jobs.schema, jobs.sessions, jobs.store, jobs.walk, jobs.work\n"
        "jobs.store.Store.for_url(sys.argv[1])\n"
        "loaded = sorted({name.split('.')[0] for name in sys.modules} & {'blueprints', "
        "'service', 'app'})\n"
        "assert not loaded, loaded\n")
    url = f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    done = subprocess.run([sys.executable, "-c", script, url], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr


def test_jobs_leave_the_session_store_to_flask_session():
    """No copy of Flask-Session's storage rules (store, key prefix, serialization) in jobs/."""
    for path in (ROOT / "jobs").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for copied in ("flask_session", "cachelib", "msgspec", "SESSION_KEY_PREFIX",
                       "SESSION_SERIALIZATION_FORMAT", "FileSystemCache"):
            assert copied not in source, (path, copied)
