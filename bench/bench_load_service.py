"""Benchmark (not a test): many organizations at their rate limits at once, against the service
under gunicorn (several workers) sharing its counters in Redis. Checks exact 429 counts and
zero 5xx, and prints p95 latencies.

    uv run python bench/bench_load_service.py                       # 20 orgs × 15/s × 20 s
    uv run python bench/bench_load_service.py --orgs 40 --rate 12 --seconds 25

Every organization has its own key and the limits PER_SECOND/s, PER_MINUTE/min (default
10/s, 120/min, 10,000/h) and is driven open-loop at RATE requests per second (default 15,
above the per-second limit) for SECONDS, alternating `projects/list` and `queries/list`.

The exact count. A request is admitted only when all three moving windows have room, and a
refused request is charged to none of them. The minute window admits PER_MINUTE requests and
frees its first slot only 60 s after the first admitted request; the run sends for SECONDS
< 60, so no slot is freed during it. The per-second window admits at most PER_SECOND in any
second, i.e. it can delay the minute's budget but not shrink it, as long as the run is long
enough to use it up (PER_SECOND × (SECONDS − 1) ≥ PER_MINUTE). So for every organization:

    200s = PER_MINUTE exactly, 429s = sent − PER_MINUTE exactly, 5xx = 0.

A count above PER_MINUTE would mean the workers do not share one budget (each process
counting alone would admit up to workers × PER_MINUTE); below it, that refused requests use
up quota. The 429s are split by Retry-After: 1 s is the per-second window (the first part of
the run), longer is the per-minute window (once its budget is spent). The exit status is 0
when every check holds.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import loadkit  # noqa: E402
from service.org import admin  # noqa: E402

RETRY_MESSAGE = re.compile(r"^Rate limit exceeded\. Retry in (\d+) seconds?\.$")


@dataclass
class Org:
    index: int
    key: str
    project_id: str


@dataclass
class Outcome:
    org: int
    status: int  # 0: no answer (connection error or timeout)
    seconds: float
    started: float
    retry_after: int | None = None
    body_ok: bool = True


def seed(folder: Path, orgs: int, limits: tuple[int, int, int]) -> tuple[str, list[Org]]:
    made = []
    with loadkit.seeded_service_database(folder) as (url, session):
        for index, key, project_id in loadkit.organizations(session, orgs, limits, "Load org"):
            tag = admin.create_tag(session, project_id, "brand", "#1f77b4")
            admin.insert_queries(session, project_id, [
                (*admin.normalize_query(f"load query {index:02d}-{i:03d}", "en", "US"),
                 [tag] if i % 3 == 0 else [], None) for i in range(50)])
            made.append(Org(index, key, project_id))
    return url, made


class Driver:
    """Open loop: request i of an organization is due at start + offset + i / rate, whatever
    the answers before it; a pool of threads sends them (one keep-alive session each)."""

    def __init__(self, base_url: str, orgs: list[Org], rate: float, seconds: float,
                 threads: int):
        self.base_url = base_url
        self.orgs = orgs
        self.rate = rate
        self.count = int(rate * seconds)
        self.pool = ThreadPoolExecutor(threads)
        self.local = threading.local()
        self.outcomes: list[Outcome] = []
        self.lock = threading.Lock()

    def _session(self) -> requests.Session:
        if not hasattr(self.local, "session"):
            self.local.session = requests.Session()
        return self.local.session

    def _send(self, org: Org, number: int) -> None:
        headers = {"x-api-key": org.key, "x-project-id": org.project_id}
        started = time.perf_counter()
        outcome = Outcome(org.index, 0, 0.0, started)
        try:
            if number % 2 == 0:
                answer = self._session().get(self.base_url + "/api/projects/list",
                                             headers=headers, timeout=30)
            else:
                answer = self._session().post(self.base_url + "/api/queries/list",
                                              json={"limit": 10}, headers=headers, timeout=30)
            outcome.status = answer.status_code
            if answer.status_code == 429:
                outcome.retry_after = int(answer.headers["Retry-After"])
                match = RETRY_MESSAGE.match(answer.json().get("message", ""))
                outcome.body_ok = bool(match) and int(match.group(1)) == outcome.retry_after \
                    and answer.json().get("statusCode") == 429
        except requests.RequestException:
            outcome.status = 0
        outcome.seconds = time.perf_counter() - started
        with self.lock:
            self.outcomes.append(outcome)

    def _schedule(self, org: Org, start: float) -> None:
        offset = org.index / (len(self.orgs) * self.rate)  # spread the organizations evenly
        for number in range(self.count):
            due = start + offset + number / self.rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.pool.submit(self._send, org, number)

    def run(self) -> float:
        start = time.perf_counter() + 0.2
        loadkit.run_each_in_a_thread(self._schedule, [(org, start) for org in self.orgs])
        self.pool.shutdown(wait=True)
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orgs", type=int, default=20)
    parser.add_argument("--rate", type=float, default=15.0, help="requests/s per organization")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--per-second", type=int, default=10)
    parser.add_argument("--per-minute", type=int, default=120)
    parser.add_argument("--per-hour", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument("--client-threads", type=int, default=64)
    args = parser.parse_args()

    limits = (args.per_second, args.per_minute, args.per_hour)
    if args.seconds >= 55 or args.rate <= args.per_second \
            or args.per_second * (args.seconds - 1) < args.per_minute \
            or args.per_hour < args.per_minute:
        raise SystemExit("the exact count needs SECONDS < 55, RATE > PER_SECOND, "
                         "PER_SECOND × (SECONDS − 1) ≥ PER_MINUTE and PER_HOUR ≥ PER_MINUTE")

    folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-load-"))
    load_before = os.getloadavg()[0]
    try:
        print(f"Seeding {args.orgs} organizations …", flush=True)
        database_url, orgs = seed(folder, args.orgs, limits)
        with loadkit.Redis(folder) as redis, loadkit.service_under_gunicorn(
                database_url, redis, args.workers, args.threads, folder) as service:
            print(f"Service: gunicorn {args.workers} workers × {args.threads} threads, "
                  f"SQLite, rate-limit counters in Redis", flush=True)
            driver = Driver(service.url, orgs, args.rate, args.seconds, args.client_threads)
            wall = driver.run()
            tracebacks = service.errors_logged()
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    by_org: dict[int, Counter] = defaultdict(Counter)
    starts: dict[int, list[float]] = defaultdict(list)
    for outcome in driver.outcomes:
        by_org[outcome.org][outcome.status] += 1
        starts[outcome.org].append(outcome.started)
    # The arithmetic holds while an organization's requests all start within 55 s (a busy
    # client may fall behind its schedule).
    span = max(max(times) - min(times) for times in starts.values())
    sent = driver.count
    expected_ok, expected_429 = args.per_minute, sent - args.per_minute
    print(f"\nLimits {args.per_second}/s, {args.per_minute}/min, {args.per_hour:,}/h per "
          f"organization; {args.orgs} organizations × {args.rate:g}/s × {args.seconds:g} s "
          f"= {sent} requests each, {sent * args.orgs:,} in all, all answered after "
          f"{wall:.1f} s ({sent * args.orgs / wall:.0f}/s); longest span of one "
          f"organization's requests: {span:.1f} s")
    print(f"Load average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    if span >= 55:
        print("The run fell too far behind its schedule for the exact count; use fewer "
              "organizations or a lower rate.")
        return 1
    print(f"Expected per organization: 200 = {expected_ok} (the minute's budget), "
          f"429 = {sent} − {expected_ok} = {expected_429}, 5xx = 0\n")
    print("org   200   429   5xx  other  (429 by window: per-second / per-minute)")
    exact = 0
    for org in orgs:
        counts = by_org[org.index]
        fivexx = sum(n for status, n in counts.items() if status >= 500)
        other = sum(n for status, n in counts.items() if status not in (200, 429)
                    and status < 500)
        windows = Counter("second" if o.retry_after == 1 else "minute"
                          for o in driver.outcomes if o.org == org.index and o.status == 429)
        good = counts[200] == expected_ok and counts[429] == expected_429 and not fivexx \
            and not other
        exact += good
        print(f"{org.index:3d}  {counts[200]:4d}  {counts[429]:4d}  {fivexx:4d}  {other:5d}"
              f"  ({windows['second']} / {windows['minute']}){'' if good else '  <- differs'}")

    ok = [o.seconds * 1000 for o in driver.outcomes if o.status == 200]
    limited = [o.seconds * 1000 for o in driver.outcomes if o.status == 429]
    total_5xx = sum(1 for o in driver.outcomes if o.status >= 500)
    no_answer = sum(1 for o in driver.outcomes if o.status == 0)
    bad_bodies = sum(1 for o in driver.outcomes if o.status == 429 and not o.body_ok)
    print(f"\nOrganizations with the exact count: {exact} of {args.orgs}")
    print(f"Totals: 200 = {len(ok):,} (expected {expected_ok * args.orgs:,}), "
          f"429 = {len(limited):,} (expected {expected_429 * args.orgs:,}), "
          f"5xx = {total_5xx}, no answer = {no_answer}")
    print(f"429 bodies whose message disagrees with Retry-After: {bad_bodies}")
    print(f"Latency 200: p50 {loadkit.percentile(ok, 0.5):.1f} ms, "
          f"p95 {loadkit.percentile(ok, 0.95):.1f} ms, "
          f"max {max(ok, default=float('nan')):.1f} ms")
    print(f"Latency 429: p50 {loadkit.percentile(limited, 0.5):.1f} ms, "
          f"p95 {loadkit.percentile(limited, 0.95):.1f} ms, "
          f"max {max(limited, default=float('nan')):.1f} ms")
    print(f"Tracebacks in the service's log: {tracebacks}")
    passed = exact == args.orgs and total_5xx == 0 and no_answer == 0 and bad_bodies == 0 \
        and tracebacks == 0
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
