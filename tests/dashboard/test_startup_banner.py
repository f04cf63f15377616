"""`flask --app app run` prints the address to open and the demo key — but only when that
address is the dashboard's. When another program already holds the port, the address would
lead to that program (and hand it the demo key), so a sentence says the port is busy instead.

The dashboard runs as it does for people: `python -m flask --app app run` in a process of its
own, on a fresh instance folder and service database, with no TAGDESK_* or FLASK_* setting
inherited."""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

import app as app_module
from app import create_app
from tests.support.dashboard import close_app
from tests.support.ports import free_port
from tests.support.processes import stop_group

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 90  # migrations and a small demo on a busy machine


@contextmanager
def another_program_on_a_port():
    """A plain listening socket: the other program."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def flask_run(tmp_path: Path, *options: str) -> subprocess.Popen:
    """`flask … run` in a session of its own: `stop_group` stops the reloader's child too."""
    config = {"INSTANCE_PATH": str(tmp_path / "instance"), "DEMO_QUERIES": 20}
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("TAGDESK_", "FLASK_", "WERKZEUG_"))}
    environment.update(
        PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1",
        # The service's database is not in the dashboard's instance folder: without this it
        # would be the checkout's instance/tagdesk.sqlite3.
        TAGDESK_DATABASE_URL=f"sqlite:///{tmp_path / 'service.sqlite3'}",
        TAGDESK_SERVICE_SECRET_KEY="banner-test-service-secret")
    return subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", f"app:create_app({config!r})", *options],
        cwd=ROOT, env=environment, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)


class Output:
    """The process's output, read as it comes."""

    def __init__(self, process: subprocess.Popen):
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(process.stdout,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: str, seconds: float = START_SECONDS) -> re.Match | None:
        """The first match of `pattern` in a line, or None once the output ends or time is up."""
        deadline = time.monotonic() + seconds
        for line in self.lines:
            if found := re.search(pattern, line):
                return found
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if found := re.search(pattern, line):
                return found
        return None

    @property
    def text(self) -> str:
        return "".join(self.lines)


def test_a_port_taken_by_another_program_is_named_instead_of_the_address_and_key(tmp_path):
    with another_program_on_a_port() as port:
        process = flask_run(tmp_path, "run", "--port", str(port))
        try:
            output = Output(process)
            assert output.wait_for(r"^Port \d+ is in use"), output.text  # werkzeug, exiting
            process.wait(timeout=30)
        finally:
            stop_group(process)
        printed = output.text
        assert process.returncode != 0
        assert f"Tagdesk dashboard: port {port} is already in use by another program" in printed
        assert "start the dashboard on another port: uv run flask --app app run --port " \
            in printed
        assert f"http://127.0.0.1:{port}/" not in printed
        assert "Demo key" not in printed
        assert "tdk_live_" not in printed
        assert "Demo administrator" not in printed and "/settings/" not in printed


def test_a_free_port_gets_the_address_and_the_demo_key_and_the_address_is_the_dashboard(
        tmp_path):
    """…and the settings' address with the demo's administrator, who signs in there."""
    port = free_port()
    process = flask_run(tmp_path, "run", "--port", str(port))
    try:
        output = Output(process)
        key = output.wait_for(r"^Demo key: (tdk_live_\S+)$")
        assert key, output.text
        administrator = output.wait_for(r"^Demo administrator: (\S+@\S+), password: (\S+)$")
        assert administrator, output.text
        assert output.wait_for(r"^Another administrator: "), output.text
        printed = output.text
        assert f"Tagdesk dashboard: http://127.0.0.1:{port}/\n" in printed
        assert f"API (embedded): http://127.0.0.1:{port}/api/\n" in printed
        assert f"Settings: http://127.0.0.1:{port}/settings/\n" in printed
        assert administrator[1] == "admin@demo.example"
        assert ("Another administrator: uv run flask --app service create-user <org> <email>\n"
                in printed)
        assert "already in use" not in printed
        # The address printed is this dashboard's, and the key is its demo key.
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = requests.get(f"http://127.0.0.1:{port}/api/projects/list",
                                      headers={"x-api-key": key[1]}, timeout=10)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, output.text
                time.sleep(0.1)
        assert answer.status_code == 200
        # The settings' address is this dashboard's too, and the administrator signs in there.
        settings = requests.Session()
        page = settings.get(f"http://127.0.0.1:{port}/settings/signin", timeout=10)
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text)[1]
        signed_in = settings.post(page.url, timeout=10, data={
            "csrf_token": token, "email": administrator[1], "password": administrator[2]})
        assert signed_in.url == f"http://127.0.0.1:{port}/settings/api"
        assert administrator[1] in signed_in.text
    finally:
        stop_group(process)


def test_with_the_reloader_the_banner_is_printed_once_by_the_serving_process(tmp_path):
    port = free_port()
    process = flask_run(tmp_path, "--debug", "run", "--port", str(port))
    try:
        output = Output(process)
        assert output.wait_for(r"^Demo key: tdk_live_"), output.text
        # The serving process prints once the watcher has bound the port: nothing earlier.
        assert output.text.count("Tagdesk dashboard: ") == 1, output.text
        assert output.text.index("Restarting with") < output.text.index("Tagdesk dashboard: ")
    finally:
        stop_group(process)


def test_a_busy_port_is_named_in_process_too(flask_run_config, monkeypatch, capsys):
    """The check made by `create_app` itself, without a subprocess (FLASK_RUN_PORT)."""
    monkeypatch.delenv("FLASK_RUN_HOST", raising=False)
    with another_program_on_a_port() as port:
        monkeypatch.setenv("FLASK_RUN_PORT", str(port))
        app = create_app(flask_run_config)
    try:
        printed = capsys.readouterr().err
        assert f"port {port} is already in use by another program" in printed
        assert "Demo key" not in printed and "tdk_live_" not in printed
        assert "Demo administrator" not in printed
        assert "Tagdesk dashboard: http" not in printed
    finally:
        close_app(app)


@pytest.mark.parametrize("held", [False, True], ids=["free", "held"])
def test_the_port_check_binds_as_the_server_would(held):
    if held:
        with another_program_on_a_port() as port:
            assert "already in use" in (app_module._port_problem("127.0.0.1", port) or "")
    else:
        assert app_module._port_problem("127.0.0.1", free_port()) is None
