"""Embedded mode: the service under /api, a private loopback server per process (so that no
self-call can deadlock), re-created after a fork; gunicorn with sync workers; the start-up
message."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from app import create_app
from tests.support.dashboard import close_app, csrf_token
from tests.support.ports import free_port
from tests.support.world import UNLIMITED

ROOT = Path(__file__).resolve().parents[2]


def test_the_client_uses_a_private_loopback_server(app, shop):
    embedded = app.extensions["tagdesk_embedded"]
    url = embedded.internal_url()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
    assert embedded.internal_url() == url
    response = requests.get(url + "/api/projects/list", headers={"x-api-key": shop.key},
                            timeout=10)
    assert response.status_code == 200


# Run in an interpreter of its own, as gunicorn's master forks: a pytest worker has threads of
# earlier tests, and one inside SQLite when it forks leaves the child's first statement waiting
# forever (a thread of inserts and counts beside the fork: 1 child of 60 never answered).
FORK_SCRIPT = """
import json, os, sys, threading, time
import requests
from app import create_app

config, key = json.loads(sys.argv[1]), sys.argv[2]
embedded = create_app(config).extensions["tagdesk_embedded"]
parent_url = embedded.internal_url()
before = requests.get(parent_url + "/api/projects/list", headers={"x-api-key": key}, timeout=30)
# Fork as gunicorn's master does, with no request in flight: once the request's own thread
# has ended and the checkpoint its writes asked for (50 ms later) is done.
deadline = time.monotonic() + 10
while any(thread.name.endswith("(process_request_thread)") for thread in threading.enumerate()):
    assert time.monotonic() < deadline, "the request's thread did not end"
    time.sleep(0.01)
time.sleep(0.3)
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        child_url = embedded.internal_url()
        status = requests.get(child_url + "/api/projects/list", headers={"x-api-key": key},
                              timeout=30).status_code
        os.write(write_end, json.dumps({"url": child_url, "status": status}).encode())
    except BaseException as error:
        os.write(write_end, json.dumps({"error": repr(error)}).encode())
    finally:
        os._exit(0)
os.close(write_end)
os.waitpid(pid, 0)
child = json.loads(os.read(read_end, 4000) or b"{}")
print(json.dumps({"parent": parent_url, "before": before.status_code, "child": child,
                  "after": embedded.internal_url()}))
"""


def test_a_forked_process_starts_its_own_internal_server(shop, database_url, tmp_path):
    config = {"INSTANCE_PATH": str(tmp_path / "instance"),
              "SERVICE_CONFIG": {"DATABASE_URL": database_url, "DEFAULT_LIMITS": UNLIMITED}}
    finished = subprocess.run([sys.executable, "-c", FORK_SCRIPT, json.dumps(config), shop.key],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr[-3000:]
    answer = json.loads(finished.stdout.splitlines()[-1])
    assert answer["before"] == 200
    assert "error" not in answer["child"], answer["child"]
    assert answer["child"]["status"] == 200
    assert answer["child"]["url"] != answer["parent"]
    assert answer["after"] == answer["parent"]  # the parent's server is untouched


# How long a page may take under gunicorn. Longer than its worker timeout (20 s): a deadlocked
# worker is killed and its request fails, whereas a busy CI machine once took over 10 s to
# answer one page with one sync worker.
ANSWER_SECONDS = 40


@pytest.mark.parametrize("options", [["--workers", "1"],
                                     ["--preload", "--workers", "2", "--threads", "2"]],
                         ids=["one-sync-worker", "preloaded-threaded-workers"])
def test_gunicorn_workers_serve_pages_without_deadlock(shop, database_url, tmp_path, options):
    port = free_port()
    config = {"INSTANCE_PATH": str(tmp_path / "instance"),
              "SERVICE_CONFIG": {"DATABASE_URL": database_url, "DEFAULT_LIMITS": UNLIMITED}}
    command = [sys.executable, "-m", "gunicorn", *options, "--timeout", "20",
               "--bind", f"127.0.0.1:{port}", f"app:create_app({json.dumps(config)})"]
    # Started as docs/deploy.md starts it (gunicorn.conf.py read from the repository's root),
    # with a home of its own: gunicorn's control socket would be made there.
    home = tmp_path / "home"
    home.mkdir()
    environment = {**{name: value for name, value in os.environ.items()
                      if name != "XDG_RUNTIME_DIR"}, "PYTHONPATH": str(ROOT), "HOME": str(home)}
    server = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        browser = requests.Session()
        # A worker boots (imports, migrations) before it answers; on a busy machine that can
        # take several seconds, so wait for an answer rather than for an open port.
        deadline = time.monotonic() + 90
        while True:
            try:
                page = browser.get(base + "/signin", timeout=30)
                break
            except requests.RequestException:
                if time.monotonic() > deadline:
                    pytest.fail("gunicorn did not start")
                time.sleep(0.2)
        answer = browser.post(base + "/signin", timeout=ANSWER_SECONDS, data={
            "csrf_token": csrf_token(page.text), "api_key": shop.key})
        assert answer.status_code == 200 and answer.url == base + "/projects"
        for _ in range(6):  # several views, landing on either worker
            view = browser.get(f"{base}/projects/{shop.project_id}/queries?q=schuhe",
                               timeout=ANSWER_SECONDS)
            assert view.status_code == 200
            assert "laufschuhe" in view.text
        assert browser.get(base + "/api/openapi.json",
                           timeout=ANSWER_SECONDS).status_code == 200
        # No control socket: the service's and the dashboard's servers on one machine would
        # both make it at the same default path, the second replacing the first's.
        assert not (home / ".gunicorn").exists()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_start_up_prints_the_url_and_the_demo_key(flask_run_config, monkeypatch, capsys):
    port = free_port()
    monkeypatch.setenv("FLASK_RUN_PORT", str(port))
    app = create_app(flask_run_config)
    try:
        printed = capsys.readouterr().err
        assert f"Tagdesk dashboard: http://127.0.0.1:{port}/\n" in printed
        assert f"Settings: http://127.0.0.1:{port}/settings/\n" in printed
        assert f"Demo key: {app.config['DEMO_KEY']}" in printed
        email, password = app.config["DEMO_ADMIN"]
        assert f"Demo administrator: {email}, password: {password}\n" in printed
        assert ("Another administrator: uv run flask --app service create-user <org> <email>"
                in printed)
        again = create_app(flask_run_config)  # once per process
        close_app(again)
        assert "Tagdesk dashboard" not in capsys.readouterr().err
    finally:
        close_app(app)


def test_start_up_names_the_address_given_to_flask_run(flask_run_config, monkeypatch, capsys):
    """`flask --app app run --port N` prints that port, not Flask's default."""
    from flask.cli import run_command

    monkeypatch.delenv("FLASK_RUN_PORT", raising=False)
    port = free_port()
    with run_command.make_context("run", ["--port", str(port)]) as context, context:
        app = create_app(flask_run_config)
    try:
        assert f"Tagdesk dashboard: http://127.0.0.1:{port}/" in capsys.readouterr().err
    finally:
        close_app(app)
