"""A PostgreSQL cluster and a Redis server of the test's own, on free loopback ports, that the
test may stop, pause and start again. The shared servers on 5432 and 6379 are never touched.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.ports import free_port

# Debian's server binaries, of whichever major version the machine has (the newest if several).
POSTGRES_BIN = max(Path("/usr/lib/postgresql").glob("*/bin"),
                   key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
                   default=Path("/usr/lib/postgresql/15/bin"))


def require_binaries() -> None:
    if not (POSTGRES_BIN / "pg_ctl").exists() or shutil.which("redis-server") is None:
        # Only reached when TAGDESK_TEST_POSTGRES and TAGDESK_TEST_REDIS asked for these tests.
        pytest.fail(f"these tests need PostgreSQL's initdb/pg_ctl in {POSTGRES_BIN} "
                    "and redis-server")


class PrivatePostgres:
    """initdb + pg_ctl in a temporary folder (or a given one, kept between runs). PostgreSQL
    refuses to run as root, so as root the commands run as the `postgres` user, who owns the
    folder. `settings` are the server's, as `-c name=value`; tests need no durability."""

    def __init__(self, folder: Path | None = None, settings: dict[str, str] | None = None):
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="tagdesk-pg-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.settings = {"fsync": "off"} if settings is None else settings
        self.data = self.folder / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)

    def _run(self, program: str, *args: str) -> None:
        command = [str(POSTGRES_BIN / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=60)

    def init(self) -> PrivatePostgres:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust",
                  "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
        return self

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1" + "".join(
            f" -c {name}={value}" for name, value in self.settings.items())
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w",
                  "-o", options, "start")

    def stop(self) -> None:
        """A fast shutdown: sessions are ended at once, as in a failover or a restart."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """redis-server without persistence: stopped and started again, it comes back empty."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="tagdesk-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # in case it was paused
            self.process.terminate()
            self.process.wait(10)

    def pause(self) -> None:
        """The server hangs: connections are accepted by the kernel, nothing is answered."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
