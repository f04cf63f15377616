"""Is an import fair to everyone else? Another organization's `projects/list`, timed while the
worst uploads we can construct are read, against the same service idle.

    uv run python bench/bench_import_fairness.py               # gunicorn, 2 workers, every case
    uv run python bench/bench_import_fairness.py --cases far-cell.xlsx inflated.zip
    uv run python bench/bench_import_fairness.py --werkzeug    # one threaded process

The service runs in processes of its own: gunicorn with 2 workers of 4 threads on a fresh
PostgreSQL database (tests/support/import_server.py `served_app`), or one threaded werkzeug
process on a fresh SQLite file (--werkzeug). Their peak memory is their own: /proc/<pid>/status
VmHWM of each worker is read before and after each case, and a worker that ended (SIGABRT,
say) is counted. One thread of this process calls `GET /api/projects/list` with the other
organization's key, one call after the other (a connection each, so that they reach either
worker), from the upload's start until its reading has ended: the import's end, or, for a
file whose columns are chosen first, its Columns page drawn; each hostile file is uploaded
and read --repeat times (5), as a person trying again would. Each case prints that call's p95
and slowest, the calls made and failed, how long the reading took and how it ended, the
largest growth of a worker's peak memory, and the workers that ended. The anchor — the p95
with no upload in flight — is measured at the start and at the end of the same run.

The cases: first lines that held csv.Sniffer's quadratic regular expressions (`",` repeated;
a header of 32,000 repeated columns), the longest first lines still read (just under 8 KiB),
a single line of 150 MiB, an ordinary large file (300,000 rows); workbooks whose reading would
cost what they do not hold (tests/support/hostile_files.py: cells at A1 and XFD1048576, a row
of a million cells, an .ods of repeats declaring ten million cells, two million shared strings)
and an ordinary workbook of 100,000 rows; Search Console archives whose Queries.csv has a bad
CRC, is encrypted, cut short, or inflates to 2 GiB under a declared 1 KiB. A case is given up
after --timeout seconds. The machine may be shared: compare only figures of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests  # noqa: E402

from tests.support import hostile_files  # noqa: E402
from tests.support.imports import (  # noqa: E402
    HEADER,
    Administrator,
    ServiceProcess,
    idle_p95,
    percentile,
    write_lines,
)
from tests.support.ports import free_port  # noqa: E402
from tests.support.xlsx import workbook  # noqa: E402

QUOTES = '",'
LIMIT = 8 * 1024


def first_line(line: str) -> bytes:
    return (line + "\nshoes,en,US,\n").encode()


def large_workbook(_folder: Path) -> bytes:
    return workbook({"Queries": [["query", "language", "country", "tags"]] + [
        [f"query number {i} of the large workbook", "en", "US", "brand"]
        for i in range(100_000)]})


# name → (the file's name as uploaded, its content: bytes, or a file written into the folder)
CASES = {
    "quotes-60k": ("q.csv", lambda folder: first_line(QUOTES * 30_000)),
    "header-64k": ("q.csv", lambda folder: first_line("query,language,country"
                                                      + ",a" * 32_000)),
    "quotes-8k": ("q.csv", lambda folder: first_line((QUOTES * LIMIT)[:LIMIT - 1])),
    "header-8k": ("q.csv", lambda folder: first_line(
        ("query,language,country" + ",a" * LIMIT)[:LIMIT - 1])),
    "line-150m": ("q.csv", lambda folder: write_lines(
        folder / "line.csv", HEADER + "before,en,US,\n", 150 << 20, "after,en,US,\n")),
    "rows-300k": ("q.csv", lambda folder: (HEADER + "".join(
        f"query number {i} of the large file,en,US,brand\n" for i in range(300_000))).encode()),
    "far-cell.xlsx": ("far.xlsx", lambda folder: hostile_files.far_cell_xlsx()),
    "wide-row.xlsx": ("wide.xlsx", lambda folder: hostile_files.wide_row_xlsx()),
    "repeats.ods": ("repeats.ods", lambda folder: hostile_files.repeated_ods(1_000_000, 100)),
    "strings.xlsx": ("strings.xlsx", lambda folder: hostile_files.shared_strings_xlsx()),
    "rows-100k.xlsx": ("large.xlsx", large_workbook),
    **{f"{how}.zip": ("Performance.zip",
                      lambda folder, how=how: hostile_files.damaged_zip(how, inflated=2 << 30))
       for how in ("bad-crc", "encrypted", "truncated", "inflated")},
}


class Bystander(threading.Thread):
    """The other organization's `projects/list`, called again and again until stopped: each
    call's seconds, and the calls that failed (an error, or no answer)."""

    def __init__(self, url: str, key: str):
        super().__init__(daemon=True)
        self.url, self.key = url + "/api/projects/list", key
        self.seconds: list[float] = []
        self.failed = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.perf_counter()
            try:  # a connection a call: the calls reach either worker
                ok = requests.get(self.url, headers={"x-api-key": self.key,
                                                     "Connection": "close"},
                                  timeout=60).status_code == 200
            except requests.RequestException:
                ok = False
            self.seconds.append(time.perf_counter() - started)
            self.failed += not ok
            time.sleep(0.01)


class Gunicorn:
    """The service under gunicorn, 2 workers of 4 threads, in a session of its own."""

    def __init__(self, database_url: str, folder: Path, config: dict):
        from service import create_app
        from tests.support import import_server

        app = create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": None})
        self.world = import_server.make_world(app)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, import_server.SERVED: json.dumps(
            [database_url, str(folder), config])}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", "2", "--threads", "4",
             "--timeout", "120", "--bind", f"127.0.0.1:{port}", "--log-level", "warning",
             "tests.support.import_server:served_app()"],
            env=env, start_new_session=True, cwd=Path(__file__).resolve().parents[1])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(self.url + "/api/projects/list", timeout=5)
                if len(self.workers()) == 2:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise SystemExit("gunicorn did not start")

    def workers(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def stop(self) -> None:
        from tests.support.processes import stop_group

        stop_group(self.process, grace=5)


class Werkzeug(ServiceProcess):
    def workers(self) -> list[int]:
        return [self.process.pid]


def peak(pid: int) -> int:
    """VmHWM of a process, in bytes (0 once it has ended)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def read_through(person: Administrator, address: str, timeout: float) -> str:
    """Follow an upload until its reading has ended: its import's end, or its Columns page
    drawn. How it ended, in a few words."""
    if address.endswith("/columns"):
        page = person.get(address)
        if "is damaged or cannot be read" in page.text:
            return f"columns page {page.status_code}: damaged, said so"
        return f"columns page {page.status_code}"
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        progress = person.progress(address)
        if progress["done"]:
            return f"{progress['state']}: {progress['added']} added, " \
                   f"{progress['rejected']} rejected"
        time.sleep(0.05)
    return "timed out"


def run_case(server, person: Administrator, name: str, folder: Path, timeout: float,
             repeat: int) -> None:
    """The case's file uploaded and read `repeat` times (a person who tries again), another
    organization's calls timed throughout."""
    file_name, make = CASES[name]
    content = make(folder)
    workers = server.workers()
    before = {pid: peak(pid) for pid in workers}
    started = time.monotonic()
    bystander = Bystander(server.url, server.world["other_key"])
    bystander.start()
    for _ in range(repeat):
        try:
            state = read_through(person, person.upload(server.world["project_id"], content,
                                                       name=file_name), timeout)
        except (requests.RequestException, AssertionError) as error:
            state = f"upload failed: {' '.join(str(error).split())[:80]}"
    took = time.monotonic() - started
    bystander.stop.set()
    bystander.join(70)
    if isinstance(content, Path):
        content.unlink()
    ended = [pid for pid in workers if peak(pid) == 0]
    grown = max((peak(pid) - before[pid] for pid in workers if pid not in ended), default=0)
    seconds = bystander.seconds or [float("nan")]
    print(f"{name:<15} p95 {percentile(seconds, 0.95) * 1000:7.0f} ms  max "
          f"{max(seconds) * 1000:7.0f} ms  calls {len(bystander.seconds):4d} failed "
          f"{bystander.failed:3d}  read {took:5.1f} s  peak +{grown / 2**20:4.0f} MiB  "
          f"workers ended {len(ended)}  {state}", flush=True)


def warm(server, person: Administrator) -> None:
    """A few small imports and workbooks' Columns pages, so that what every reading loads is
    in each worker's idle figure (an upload goes to either worker)."""
    small = workbook({"Sheet1": [["query", "language", "country"], ["warm", "en", "US"]]})
    for _ in range(6):
        person.finished(person.upload(server.world["project_id"], HEADER + "w,en,US,\n"))
        person.get(person.upload(server.world["project_id"], small, name="warm.xlsx"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--repeat", type=int, default=5, help="uploads of each file")
    parser.add_argument("--werkzeug", action="store_true",
                        help="one threaded werkzeug process on SQLite instead of gunicorn on "
                             "PostgreSQL")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tagdesk-fairness-"))
    os.environ.setdefault("TAGDESK_SECRET_KEY", "bench")
    from sqlalchemy import create_engine

    from service import schema
    from tests.support.databases import postgres_database_of_its_own

    try:
        with contextlib.ExitStack() as stack:
            database_url = f"sqlite:///{folder / 'service.sqlite3'}" if args.werkzeug else \
                stack.enter_context(postgres_database_of_its_own("tagdesk_fairness_"))
            engine = create_engine(database_url)
            schema.upgrade(engine)
            engine.dispose()
            # One signing key for both workers: a session goes on when its worker is replaced.
            config = {"IMPORT_WAIT_SECONDS": 0, "SECRET_KEY": "bench-fairness"}
            server = Werkzeug(database_url, folder, config) if args.werkzeug \
                else Gunicorn(database_url, folder, config)
            stack.callback(server.stop)
            person = Administrator(server.url, server.world["email"], server.world["password"])
            warm(server, person)
            print(f"{'werkzeug, SQLite' if args.werkzeug else 'gunicorn, 2 workers, PostgreSQL'}"
                  f"; load average {os.getloadavg()[0]:.2f}; projects/list idle p95 "
                  f"{idle_p95(server.url, server.world['other_key']) * 1000:.1f} ms", flush=True)
            for name in args.cases:
                run_case(server, person, name, folder, args.timeout,
                         1 if name in ("line-150m", "rows-300k") else args.repeat)
            print(f"load average {os.getloadavg()[0]:.2f}; projects/list idle p95 "
                  f"{idle_p95(server.url, server.world['other_key']) * 1000:.1f} ms")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
