"""Is an import fair to everyone else? Another organization's `projects/list`, timed while the
worst uploads we can construct are read, against the same service idle.

    uv run python bench/bench_import_fairness.py               # SQLite, every case
    uv run python bench/bench_import_fairness.py --cases header-quotes-8k rows-300k

The service runs in a process of its own (tests/support/import_server.py: werkzeug, threaded,
on a fresh SQLite file), so its peak memory is its own: /proc/<pid>/status VmHWM is read
before and after each case. One thread of this process calls `GET /api/projects/list` with
the other organization's key, one call after the other, from the upload's start until its
import has ended; each case prints that call's p95 and slowest, how many calls were made, how
long the import took and how it ended, and the growth of the service's peak memory.

The cases: first lines that held csv.Sniffer's quadratic regular expressions (`",` repeated;
a header of 32,000 repeated columns), the longest first lines still read (just under 8 KiB),
a single line of 150 MiB, and an ordinary large file (300,000 rows). A case is given up after
--timeout seconds. The machine may be shared: compare only figures of one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.imports import (  # noqa: E402
    HEADER,
    Administrator,
    ServiceProcess,
    Timed,
    idle_p95,
    percentile,
    write_lines,
)

QUOTES = '",'
LIMIT = 8 * 1024


def first_line(line: str) -> bytes:
    return (line + "\nshoes,en,US,\n").encode()


CASES = {
    "quotes-60k": lambda folder: first_line(QUOTES * 30_000),
    "header-64k": lambda folder: first_line("query,language,country" + ",a" * 32_000),
    "quotes-8k": lambda folder: first_line((QUOTES * LIMIT)[:LIMIT - 1]),
    "header-8k": lambda folder: first_line(("query,language,country" + ",a" * LIMIT)[:LIMIT - 1]),
    "line-150m": lambda folder: write_lines(folder / "line.csv", HEADER + "before,en,US,\n",
                                            150 << 20, "after,en,US,\n"),
    "rows-300k": lambda folder: (HEADER + "".join(
        f"query number {i} of the large file,en,US,brand\n" for i in range(300_000))).encode(),
}


def run_case(server: ServiceProcess, person: Administrator, name: str, folder: Path,
             timeout: float) -> None:
    content = CASES[name](folder)
    peak_before = server.status("VmHWM")
    started = time.monotonic()
    with Timed(server.url, server.world["other_key"]) as timed:
        report = person.upload(server.world["project_id"], content)
        state = "timed out"
        while time.monotonic() - started < timeout:
            progress = person.progress(report)
            if progress["done"]:
                state = f"{progress['state']}: {progress['added']} added, " \
                        f"{progress['rejected']} rejected"
                break
            time.sleep(0.05)
        took = time.monotonic() - started
    if isinstance(content, Path):
        content.unlink()
    grown = (server.status("VmHWM") - peak_before) / 2**20
    seconds = timed.seconds or [float("nan")]
    print(f"{name:<11} p95 {percentile(seconds, 0.95) * 1000:9.0f} ms  "
          f"max {max(seconds) * 1000:9.0f} ms  calls {len(timed.seconds):5d}  "
          f"import {took:6.1f} s  peak +{grown:5.0f} MiB  {state}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tagdesk-fairness-"))
    try:
        database = folder / "service.sqlite3"
        os.environ.setdefault("TAGDESK_SECRET_KEY", "bench")
        from sqlalchemy import create_engine

        from service import schema

        engine = create_engine(f"sqlite:///{database}")
        schema.upgrade(engine)
        engine.dispose()
        server = ServiceProcess(f"sqlite:///{database}", folder, {"IMPORT_WAIT_SECONDS": 0})
        try:
            person = Administrator(server.url, server.world["email"], server.world["password"])
            person.finished(person.upload(server.world["project_id"], HEADER + "w,en,US,\n"))
            print(f"load average {os.getloadavg()[0]:.2f}; projects/list idle p95 "
                  f"{idle_p95(server.url, server.world['other_key']) * 1000:.1f} ms, service "
                  f"peak {server.status('VmHWM') / 2**20:.0f} MiB", flush=True)
            for name in args.cases:
                run_case(server, person, name, folder, args.timeout)
            print(f"load average {os.getloadavg()[0]:.2f}")
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
