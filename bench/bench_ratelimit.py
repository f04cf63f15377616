"""Benchmark (not a test): what the service's rate limiter costs per request with its counters in
memory (no TAGDESK_REDIS_URL), for the storage the service uses and for `limits`' own
`MemoryStorage`.

    uv run python bench/bench_ratelimit.py                   # in process, a few seconds
    uv run python bench/bench_ratelimit.py --http            # also over loopback HTTP, ~1 min
    uv run python bench/bench_ratelimit.py --idle 10000      # with 10,000 other identities

In process: `RateLimiter.hit` for one organization, limits lifted, back to back and one hit
every 20 ms (`limits`' `MemoryStorage` starts a `threading.Timer` on a hit when the last one
has run, i.e. when hits come more than 10 ms apart, and each run of it walks every key).
`--idle N` first charges N other identities once each (every identity has three windows),
as a service sees after a while of traffic from many organizations and client addresses.
Figures: µs per hit, p50 / p95 of its wall time; the whole process's CPU per hit (background
threads included); threads started per hit.

Over HTTP (`--http`): two copies of the service under gunicorn (1 worker × 4 threads), one per
storage, on one seeded SQLite file, answering `GET /api/projects/list` over keep-alive loopback;
requests alternate between the two so the machine's noise falls on both alike. Phases: limits
lifted (one request every 20 ms each, then back to back) and the default limits (10/s, 300/min:
one request every 120 ms each, all within the budget). Figures: ms p50 / p95, and the worker's
CPU per request.

Variants: `service` is what `service.access.ratelimit.RateLimiter("memory://")` builds; `limits-memory`
is the same limiter over `limits.storage.MemoryStorage` and `MovingWindowRateLimiter`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from limits.storage import MemoryStorage  # noqa: E402
from limits.strategies import MovingWindowRateLimiter  # noqa: E402

from service.access.ratelimit import RateLimiter  # noqa: E402
from service.config import DEFAULT_LIMITS  # noqa: E402

LIFTED = (100_000, 1_000_000, 10_000_000)
VARIANTS = ("service", "limits-memory")
VARIANT_VARIABLE = "BENCH_RATELIMIT_VARIANT"


def use_variant(limiter: RateLimiter, variant: str) -> RateLimiter:
    if variant == "limits-memory":
        limiter.storage = MemoryStorage()
        limiter.strategy = MovingWindowRateLimiter(limiter.storage)
    elif variant != "service":
        raise SystemExit(f"unknown variant {variant}")
    return limiter


def bench_app():
    """The service for gunicorn, over the storage named by BENCH_RATELIMIT_VARIANT."""
    from service import create_app

    app = create_app()
    use_variant(app.extensions["tagdesk_ratelimiter"], os.environ[VARIANT_VARIABLE])
    return app


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


class ThreadCount:
    """Threads started while in the block (wraps `threading.Thread.start`)."""

    def __enter__(self) -> ThreadCount:
        self.count = 0
        self.original = threading.Thread.start
        counter = self

        def start(thread, *args, **kwargs):
            counter.count += 1
            return counter.original(thread, *args, **kwargs)

        threading.Thread.start = start
        return self

    def __exit__(self, *_exc) -> None:
        threading.Thread.start = self.original


def in_process(variant: str, hits: int, spacing: float, idle: int) -> dict[str, float]:
    limiter = use_variant(RateLimiter("memory://"), variant)
    for i in range(idle):
        limiter.hit(f"addr:10.{i // 65536}.{i // 256 % 256}.{i % 256}", DEFAULT_LIMITS)
    for _ in range(20):  # warm-up
        limiter.hit("org:bench", LIFTED)
    time.sleep(0.05)
    walls = []
    with ThreadCount() as threads:
        cpu = time.process_time()
        for _ in range(hits):
            started = time.perf_counter()
            decision = limiter.hit("org:bench", LIFTED)
            walls.append(time.perf_counter() - started)
            assert decision.allowed
            if spacing:
                time.sleep(spacing)
        cpu = time.process_time() - cpu
    if spacing:
        cpu -= hits * sleep_cpu_cost()
    return {"p50": percentile(walls, 0.5) * 1e6, "p95": percentile(walls, 0.95) * 1e6,
            "cpu": cpu / hits * 1e6, "threads": threads.count / hits}


_SLEEP_CPU: list[float] = []


def sleep_cpu_cost() -> float:
    """CPU seconds one `time.sleep(0.02)` itself costs, to take out of the spaced figures."""
    if not _SLEEP_CPU:
        cpu = time.process_time()
        for _ in range(25):
            time.sleep(0.02)
        _SLEEP_CPU.append((time.process_time() - cpu) / 25)
    return _SLEEP_CPU[0]


def run_in_process(rounds: int, idle: int) -> None:
    patterns = [("back to back", 0.0, 3000), ("every 20 ms", 0.02, 150)]
    print(f"in process: RateLimiter.hit, limits lifted, {idle:,} idle identities; "
          f"{rounds} rounds, variants alternating")
    print(f"{'pattern':<14}{'variant':<15}{'µs p50':>8}{'µs p95':>8}{'CPU µs/hit':>12}"
          f"{'threads/hit':>13}")
    for name, spacing, hits in patterns:
        results: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
        for _ in range(rounds):
            for variant in VARIANTS:
                results[variant].append(in_process(variant, hits, spacing, idle))
        for variant in VARIANTS:
            rows = results[variant]
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"{name:<14}{variant:<15}{med['p50']:>8.1f}{med['p95']:>8.1f}"
                  f"{med['cpu']:>12.1f}{med['threads']:>13.2f}")


# --- over HTTP ----------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_http() -> None:
    from loadkit import Gunicorn, children, seeded_service_database

    from service.org import admin

    with tempfile.TemporaryDirectory(prefix="tagdesk-bench-ratelimit-") as folder, \
            ExitStack() as stack:
        with seeded_service_database(Path(folder)) as (url, session):
            keys = {}
            for limits in ("lifted", "default"):
                org = admin.create_org(session, f"Bench {limits}")
                keys[limits] = admin.create_key(session, org, "tdk")
                admin.create_project(session, org, "Bench project")
                if limits == "lifted":
                    admin.set_limits(session, org, *LIFTED)
        servers = {}
        for variant in VARIANTS:
            servers[variant] = stack.enter_context(Gunicorn(
                "bench.bench_ratelimit:bench_app()",
                {"TAGDESK_DATABASE_URL": url, VARIANT_VARIABLE: variant},
                workers=1, threads=4, ready_path="/api/openapi.json",
                log=Path(tempfile.gettempdir()) / f"bench-ratelimit-{variant}.log"))
        workers = {v: children(s.process.pid)[0] for v, s in servers.items()}
        sessions = {v: requests.Session() for v in VARIANTS}
        phases = [("lifted, every 20 ms", "lifted", 0.02, 500),
                  ("lifted, back to back", "lifted", 0.0, 1000),
                  ("default, every 120 ms", "default", 0.12, 100)]
        print(f"\nover HTTP: GET /api/projects/list, gunicorn 1 × 4 threads per variant; "
              f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
        print(f"{'phase':<24}{'variant':<15}{'ms p50':>8}{'ms p95':>8}{'CPU ms/req':>12}")
        for name, limits, spacing, count in phases:
            headers = {"x-api-key": keys[limits]}
            for variant in VARIANTS:  # warm-up
                for _ in range(5):
                    sessions[variant].get(servers[variant].url + "/api/projects/list",
                                          headers=headers, timeout=10)
            time.sleep(1.1)  # the per-second window of the warm-up passes
            times: dict[str, list[float]] = {v: [] for v in VARIANTS}
            cpu = {v: cpu_seconds(workers[v]) for v in VARIANTS}
            statuses = set()
            for _ in range(count):
                for variant in VARIANTS:
                    started = time.perf_counter()
                    answer = sessions[variant].get(servers[variant].url + "/api/projects/list",
                                                   headers=headers, timeout=10)
                    times[variant].append(time.perf_counter() - started)
                    statuses.add(answer.status_code)
                if spacing:
                    time.sleep(spacing)
            cpu = {v: cpu_seconds(workers[v]) - cpu[v] for v in VARIANTS}
            for variant in VARIANTS:
                print(f"{name:<24}{variant:<15}{percentile(times[variant], 0.5) * 1e3:>8.2f}"
                      f"{percentile(times[variant], 0.95) * 1e3:>8.2f}"
                      f"{cpu[variant] / count * 1e3:>12.3f}")
            if statuses != {200}:
                print(f"  (statuses seen: {sorted(statuses)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=int, default=0, metavar="N",
                        help="identities charged once before the in-process runs")
    parser.add_argument("--http", action="store_true", help="also over loopback HTTP")
    args = parser.parse_args()
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    run_in_process(args.rounds, args.idle)
    if args.http:
        run_http()


if __name__ == "__main__":
    main()
