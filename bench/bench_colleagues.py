"""Benchmark (not a test): what open queries pages cost the service while they watch their
rows for colleagues' edits. Each simulated page asks POST /api/queries/versions for the 50
rows it shows, every INTERVAL seconds (the dashboard's default, COLLEAGUES_POLL_SECONDS),
as the dashboard does for it; meanwhile one person reads pages of queries/list.

    flock /tmp/team/bench.lock uv run python bench/bench_colleagues.py
    flock /tmp/team/bench.lock uv run python bench/bench_colleagues.py --pages 200 --queries 100000

The service runs under gunicorn (WORKERS × THREADS) on a SQLite file holding one project of
QUERIES queries. Two phases of SECONDS each, in this order: the anchor (queries/list alone,
no page polling) and then the same queries/list series with PAGES pages polling. Printed:
the service's CPU (its processes' user + system time over the phase's wall time, in % of one
core), p50/p95 of the poll, and p50/p95 of queries/list in each phase.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import loadkit  # noqa: E402
from service.org import admin  # noqa: E402

LANGUAGES = ["de", "en", "fr", "es", "it", "nl", "pl", "sv"]
COUNTRIES = ["DE", "US", "FR", "ES", "IT", "NL", "PL", "SE", "AT"]
UNLIMITED = (100_000, 1_000_000, 10_000_000)
ROWS_PER_PAGE = 50
LIST_EVERY = 1.0  # seconds between the person's queries/list calls


def seed(folder: Path, queries: int) -> tuple[str, str, str]:
    with loadkit.seeded_service_database(folder) as (url, session):
        org_id = admin.create_org(session, "Colleagues bench")
        admin.set_limits(session, org_id, *UNLIMITED)
        key = admin.create_key(session, org_id, "tdk")
        project_id = admin.create_project(session, org_id, "Shop search")
        brand = admin.create_tag(session, project_id, "brand", "#1f77b4")
        rows = ((*admin.normalize_query(f"bench query {i:07d}", LANGUAGES[i % 8],
                                        COUNTRIES[i % 9]), [brand] if i % 3 == 0 else [], None)
                for i in range(queries))
        admin.insert_queries(session, project_id, rows, batch_size=5000)
    return url, key, project_id


def cpu_seconds(pids: list[int]) -> float:
    """User + system time of these processes so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


class Phase:
    """SECONDS of the person's queries/list (one a LIST_EVERY s) and, when `pages` is given,
    each page's poll at its interval from a random start within the first interval."""

    def __init__(self, url: str, headers: dict, seconds: float, interval: float,
                 pages: list[list[str]]):
        self.url, self.headers, self.seconds, self.interval = url, headers, seconds, interval
        self.pages = pages
        self.polls: list[float] = []
        self.lists: list[float] = []
        self.failures = 0
        self.lock = threading.Lock()
        self.local = threading.local()

    def _client(self) -> loadkit.KeptAlive:
        if not hasattr(self.local, "client"):
            self.local.client = loadkit.KeptAlive(self.url, self.headers)
        return self.local.client

    def _timed(self, path: str, body: dict, into: list[float]) -> None:
        start = time.perf_counter()
        try:
            self._client().post(path, body)
        except (loadkit.HTTPFailure, OSError):
            with self.lock:
                self.failures += 1
            return
        with self.lock:
            into.append((time.perf_counter() - start) * 1000)

    def run(self) -> float:
        """The wall time of the phase."""
        events: list[tuple[float, int]] = []  # (when, page index; -1: the person's list)
        for index in range(len(self.pages)):
            when = random.uniform(0, self.interval)
            while when < self.seconds:
                events.append((when, index))
                when += self.interval
        events += [(t * LIST_EVERY, -1) for t in range(int(self.seconds / LIST_EVERY))]
        events.sort()
        start = time.perf_counter()
        list_page = 0
        with ThreadPoolExecutor(32) as pool:
            for when, index in events:
                delay = start + when - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                if index < 0:
                    list_page = list_page % 20 + 1
                    pool.submit(self._timed, "/api/queries/list",
                                {"page": list_page, "limit": ROWS_PER_PAGE}, self.lists)
                else:
                    pool.submit(self._timed, "/api/queries/versions",
                                {"ids": self.pages[index]}, self.polls)
        return time.perf_counter() - start


def page_rows(url: str, headers: dict, pages: int) -> list[list[str]]:
    """The ids each simulated page shows: pages 1… of the default view, 50 rows each."""
    client = loadkit.KeptAlive(url, headers)
    shown = []
    for number in range(1, pages + 1):
        listing = client.post("/api/queries/list", {"page": number, "limit": ROWS_PER_PAGE})
        shown.append([record["id"] for record in listing["results"]])
    return shown


def report(name: str, values: list[float]) -> str:
    return (f"{name}: {len(values):,} calls, p50 {loadkit.percentile(values, 0.5):.1f} ms, "
            f"p95 {loadkit.percentile(values, 0.95):.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between polls")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each phase")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-colleagues-"))
    try:
        print(f"Seeding a project of {args.queries:,} queries …", flush=True)
        started = time.perf_counter()
        database_url, key, project_id = seed(folder, args.queries)
        print(f"  {time.perf_counter() - started:.0f} s", flush=True)
        config = {"DATABASE_URL": database_url, "REDIS_URL": None}
        with loadkit.Gunicorn(f"service:create_app({config!r})", {}, args.workers,
                              args.threads, "/api/openapi.json",
                              folder / "service.log") as service:
            headers = {"x-api-key": key, "x-project-id": project_id}
            pids = [service.process.pid, *loadkit.children(service.process.pid)]
            pages = page_rows(service.url, headers, args.pages)
            print(f"Service: gunicorn {args.workers} workers × {args.threads} threads, SQLite; "
                  f"{len(pages)} pages of {ROWS_PER_PAGE} rows, a poll every "
                  f"{args.interval:g} s each; {args.seconds:g} s per phase; "
                  f"{os.cpu_count()} CPUs shared with this client", flush=True)
            results = {}
            for name, watched in (("anchor: no page polling", []),
                                  (f"{len(pages)} pages polling", pages)):
                before = cpu_seconds(pids)
                phase = Phase(service.url, headers, args.seconds, args.interval, watched)
                wall = phase.run()
                results[name] = (phase, (cpu_seconds(pids) - before) / wall * 100)
            tracebacks = service.errors_logged()
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print()
    for name, (phase, cpu) in results.items():
        print(f"{name}")
        print(f"  service CPU {cpu:.1f} % of one core; failures {phase.failures}")
        if phase.polls:
            print(f"  {report('poll (queries/versions, 50 ids)', phase.polls)} "
                  f"({len(phase.polls) / args.seconds:.1f}/s)")
        print(f"  {report('queries/list (page of 50)', phase.lists)}")
    print(f"Load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          f"(other processes share them)")
    print(f"Tracebacks in the service's log: {tracebacks}")
    return 0 if tracebacks == 0 and all(p.failures == 0 for p, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
