"""Embedded mode: the service under /api, a private loopback server per process (so that no
self-call can deadlock), re-created after a fork; gunicorn with sync workers; the start-up
message."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from app import create_app
from tests.support.dashboard import close_app, csrf_token
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


def test_a_forked_process_starts_its_own_internal_server(app, shop):
    embedded = app.extensions["tagdesk_embedded"]
    parent_url = embedded.internal_url()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe (or what went wrong), then leave at once
        try:
            child_url = embedded.internal_url()
            status = requests.get(child_url + "/api/projects/list",
                                  headers={"x-api-key": shop.key}, timeout=10).status_code
            os.write(write_end, f"{child_url} {status}".encode())
        except BaseException as error:  # said to the parent, which fails with it
            os.write(write_end, f"failed {error!r}"[:1000].encode())
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the forked process did not answer")
    answer = os.read(read_end, 1000).decode()
    os.close(read_end)
    assert not answer.startswith("failed "), answer
    child_url, status = answer.split()
    assert status == "200"
    assert child_url != parent_url
    assert embedded.internal_url() == parent_url  # the parent's server is untouched


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("options", [["--workers", "1"],
                                     ["--preload", "--workers", "2", "--threads", "2"]],
                         ids=["one-sync-worker", "preloaded-threaded-workers"])
def test_gunicorn_workers_serve_pages_without_deadlock(shop, database_url, tmp_path, options):
    port = free_port()
    config = {"INSTANCE_PATH": str(tmp_path / "instance"),
              "SERVICE_CONFIG": {"DATABASE_URL": database_url, "DEFAULT_LIMITS": UNLIMITED}}
    command = [sys.executable, "-m", "gunicorn", *options, "--timeout", "20",
               "--no-control-socket",
               "--bind", f"127.0.0.1:{port}", f"app:create_app({json.dumps(config)})"]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
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
        answer = browser.post(base + "/signin", timeout=10, data={
            "csrf_token": csrf_token(page.text), "api_key": shop.key})
        assert answer.status_code == 200 and answer.url == base + "/projects"
        for _ in range(6):  # several views, landing on either worker
            view = browser.get(f"{base}/projects/{shop.project_id}/queries?q=schuhe",
                               timeout=10)
            assert view.status_code == 200
            assert "laufschuhe" in view.text
        assert browser.get(base + "/api/openapi.json", timeout=10).status_code == 200
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
