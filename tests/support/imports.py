"""The settings area's imports over real HTTP, for tests and benchmarks: an administrator who
signs in and uploads a file (streamed from disk, never held whole), follows its progress and
deletes a tag; a job held after its first batch; another organization's API calls timed while
an import runs; and a service in a process of its own, whose memory can be read from /proc."""

from __future__ import annotations

import io
import json
import math
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import requests

from tests.support.background import Background


def held_after_the_first_batch(monkeypatch, sink_class) -> tuple[threading.Event,
                                                                  threading.Event]:
    """(first_batch_in, release): a job whose sink is `sink_class` (import_jobs.JobSink for an
    import, CheckSink for a check) waits once its first batch is committed, until `release` is
    set (60 s at most), so that a test sees it running however fast the machine is."""
    first_batch_in, release = threading.Event(), threading.Event()
    done = sink_class.done

    def held(self, batch, counts):
        done(self, batch, counts)
        if not first_batch_in.is_set():
            first_batch_in.set()
            release.wait(60)

    monkeypatch.setattr(sink_class, "done", held)
    return first_batch_in, release


CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
HEADER = "query,language,country,tags\n"


class Administrator:
    """A person signed in to the settings area of a live service, over HTTP."""

    def __init__(self, base_url: str, email: str, password: str):
        self.base_url = base_url
        self.http = requests.Session()
        token = self.csrf("/settings/signin")
        signed_in = self.post("/settings/signin", data={
            "csrf_token": token, "email": email, "password": password})
        assert signed_in.status_code == 303, signed_in.text

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.http.get(self.base_url + path, allow_redirects=False, timeout=120, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.http.post(self.base_url + path, allow_redirects=False, timeout=300,
                              **kwargs)

    def csrf(self, path: str) -> str:
        page = self.get(path).text
        match = CSRF_FIELD.search(page)
        assert match, page
        return match.group(1)

    def upload(self, project_id: str, content: bytes | str | Path,
               name: str = "queries.csv") -> str:
        """Upload a file (bytes, text, or a file on disk streamed a piece at a time); the
        address of its import's report."""
        path = f"/settings/projects/{project_id}/imports"
        token = self.csrf(path)
        boundary = uuid.uuid4().hex
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n"
                f"{token}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"{name}\"\r\nContent-Type: text/csv\r\n\r\n").encode()
        tail = f"\r\n--{boundary}--\r\n".encode()
        data = None if isinstance(content, Path) else (
            content.encode() if isinstance(content, str) else content)
        body = _Body([head, content if data is None else data, tail])
        response = self.post(path, data=body, headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert response.status_code == 303, response.text[:2000]
        return response.headers["Location"]

    def progress(self, report: str) -> dict:
        return self.get(report + "/progress").json()

    def finished(self, report: str, timeout: float = 60) -> dict:
        """The import's progress once it has ended (fails after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            progress = self.progress(report)
            if progress["done"]:
                return progress
            assert time.monotonic() < deadline, f"the import did not end: {progress}"
            time.sleep(0.02)

    def check(self, columns: str, data: dict, timeout: float = 60) -> requests.Response:
        """Check the file on its Columns page with these fields: the page once the check has
        ended (the check runs as a job; its page shows the result), or the answer that
        refused the fields (422)."""
        posted = self.post(columns, data={**data, "action": "check"})
        if posted.status_code != 303:
            return posted
        assert posted.headers["Location"] == columns, posted.headers["Location"]
        self.finished(columns.removesuffix("/columns"), timeout)
        return self.get(columns)

    def delete_tag(self, project_id: str, tag_id: int) -> requests.Response:
        path = f"/settings/projects/{project_id}/tags/{tag_id}/delete"
        return self.post(path, data={"csrf_token": self.csrf(path)})


class _Body:
    """A request body of bytes and files on disk, read a piece at a time (its length known, so
    it is sent as it is, not chunked)."""

    def __init__(self, parts: list[bytes | Path]):
        self.parts = parts
        self.length = sum(part.stat().st_size if isinstance(part, Path) else len(part)
                          for part in parts)
        self._open: list = []

    def __len__(self) -> int:
        return self.length

    def read(self, size: int = -1) -> bytes:
        while self.parts or self._open:
            if not self._open:
                part = self.parts.pop(0)
                self._open = [open(part, "rb") if isinstance(part, Path)  # noqa: SIM115
                              else io.BytesIO(part)]
            piece = self._open[0].read(size if size and size > 0 else 1 << 20)
            if piece:
                return piece
            self._open.pop().close()
        return b""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


class Timed(Background):
    """Another organization's `projects/list`, called again and again from a thread until
    stopped: each call's seconds."""

    join_seconds = 180.0

    def __init__(self, base_url: str, key: str):
        super().__init__()
        self.url = base_url + "/api/projects/list"
        self.key = key
        self.seconds: list[float] = []

    def _run(self) -> None:
        with requests.Session() as http:
            while not self._stop.is_set():
                started = time.perf_counter()
                response = http.get(self.url, headers={"x-api-key": self.key}, timeout=120)
                self.seconds.append(time.perf_counter() - started)
                assert response.status_code == 200, response.text
                time.sleep(0.01)

    @property
    def p95(self) -> float:
        return percentile(self.seconds, 0.95) if self.seconds else math.inf


def idle_p95(base_url: str, key: str, calls: int = 60) -> float:
    seconds = []
    with requests.Session() as http:
        for _ in range(calls):
            started = time.perf_counter()
            http.get(base_url + "/api/projects/list", headers={"x-api-key": key}, timeout=30)
            seconds.append(time.perf_counter() - started)
    return percentile(seconds, 0.95)


# --- a service in a process of its own ---------------------------------------------------------


class ServiceProcess:
    """`python -m tests.support.import_server`: a service on a loopback port in a process of
    its own (its memory is its own to measure), with an organization whose administrator may
    import (`world`: ids, key, email, password), and another organization (`other_key`)."""

    def __init__(self, database_url: str, folder: Path, config: dict | None = None):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.import_server", database_url, str(folder),
             json.dumps(config or {})],
            stdout=subprocess.PIPE, text=True, start_new_session=True,
            cwd=Path(__file__).resolve().parents[2])
        line = self.process.stdout.readline()
        assert line, "the service did not start"
        self.world = json.loads(line)
        self.url = self.world["url"]

    def status(self, field: str) -> int:
        """A VmRSS/VmHWM-like field of /proc/<pid>/status, in bytes."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise KeyError(field)

    def stop(self) -> None:
        from tests.support.processes import stop_group

        stop_group(self.process, grace=5)


def write_lines(path: Path, head: str, long_line_bytes: int, tail: str) -> Path:
    """A file: `head`, then one line of `long_line_bytes` letters, then `tail` (written a
    piece at a time)."""
    piece = b"x" * (1 << 20)
    with open(path, "wb") as handle:
        handle.write(head.encode())
        left = long_line_bytes
        while left > 0:
            handle.write(piece[:min(left, len(piece))])
            left -= len(piece)
        handle.write(b",en,US,\n" + tail.encode())
    return path
