"""The service and the dashboard as real processes: gunicorn with several workers, as deployed
(docs/deploy.md), with their output kept in a log file to show when a test fails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Gunicorn:
    """`target` (an app factory's call) under gunicorn on a free loopback port, its output in
    the file `log`; ready when `ready_path` answers 200."""

    target: str
    env: dict[str, str]
    log: Path
    ready_path: str
    workers: int = 2
    threads: int = 4
    port: int = field(default_factory=free_port, init=False)
    process: subprocess.Popen | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Gunicorn:
        return self.launch().wait_ready()

    def launch(self) -> Gunicorn:
        # Only what this process is told: no TAGDESK_* setting leaks in from the caller.
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("TAGDESK_")}
        env.update(self.env, PYTHONPATH=str(ROOT))
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--workers", str(self.workers),
                 "--threads", str(self.threads), "--no-control-socket",
                 "--config", "python:tests.faults.preimport",
                 "--bind", f"127.0.0.1:{self.port}", self.target],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        return self

    def wait_ready(self) -> Gunicorn:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + self.ready_path, timeout=5).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        pytest.fail(f"{self.target} did not start:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]

    def stop(self) -> None:
        """SIGKILL to the process group: these processes have nothing to finish, and a
        graceful stop costs seconds of the test's time."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
