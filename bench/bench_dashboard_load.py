"""Benchmark (not a test): people signed in to the dashboard under gunicorn, clicking through a
project's queries page, driven by Locust (bench/locustfile.py) — with the service's default rate
limits, and with them lifted to show the dashboard's own capacity.

    uv run python bench/bench_dashboard_load.py                        # both, 60 s each
    uv run python bench/bench_dashboard_load.py --limits default --think 1-3
    uv run python bench/bench_dashboard_load.py --limits lifted --seconds 30

For each run, on loopback and in processes of their own:

- the service: gunicorn, 1 worker, 8 threads, on a temporary SQLite file seeded with the demo
  (--queries in its main project), rate limits in memory (one worker, so one budget): the
  defaults (10/s, 300/min, 10,000/h per organization) or lifted; a fresh service per run, so
  every run starts with an empty budget;
- the dashboard: gunicorn, --workers gthread workers with --threads threads each, talking to
  the service (TAGDESK_API_URL), sessions in files shared by the workers;
- Locust, headless: --users people sign in with the same organization key (so they share its
  budget), wait until all are signed in, then click for --seconds seconds (--think seconds
  between a page and the next click); a busy notice (the dashboard's 429) is waited out and the
  view loaded again, as the page does in a browser.

Printed per run: pages delivered per second; answer times p50/p95 (pages, busy notices, and a
click's time until its page arrived, waits included); busy notices and their Retry-After;
errors by kind (anything but a page or a busy notice); the service's requests and 429s (from its
access log) and requests per page view; CPU per page view; each dashboard worker's resident
memory (VmRSS) when booted, at the start of the measured part, 10 s into it, at its peak and
at its end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from sqlalchemy import select  # noqa: E402

from bench.loadkit import children, free_port, percentile  # noqa: E402
from service import create_app as create_service_app  # noqa: E402
from service import schema  # noqa: E402
from service.config import DEFAULT_LIMITS  # noqa: E402
from service.demo import demo  # noqa: E402
from service.store.db import session_scope  # noqa: E402
from service.store.models import Project  # noqa: E402
from tests.support.scaleout import Process  # noqa: E402

LIFTED = (1_000_000, 10_000_000, 100_000_000)
PROJECT = "Online shop search"
TICKS = os.sysconf("SC_CLK_TCK")


def seed(folder: Path, queries: int) -> tuple[str, str, str]:
    """(database URL, the demo organization's key, the main project's id)."""
    url = f"sqlite:///{folder / 'service.sqlite3'}"
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None})
    schema.upgrade(app.extensions["tagdesk_engine"])
    key = demo.seed(app, queries)
    with session_scope(app) as session:
        project_id = session.scalar(select(Project.id).where(Project.name == PROJECT))
    app.extensions["tagdesk_engine"].dispose()
    return url, key, project_id


def answers_200(url: str) -> bool:
    return requests.get(url, timeout=5).status_code == 200


def clean_environment(**extra: str) -> dict[str, str]:
    """This machine's environment without Tagdesk settings (they would change what runs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAGDESK_")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


class Sampler(threading.Thread):
    """Every 0.2 s: each dashboard worker's VmRSS, CPU of the dashboard and the service, and
    the service's answers by status (read from its access log as they are written)."""

    def __init__(self, workers: list[int], service_pids: list[int], access_log: Path):
        super().__init__(daemon=True)
        self.workers, self.service_pids, self.access_log = workers, service_pids, access_log
        self.samples: list[dict] = []
        self.statuses: dict[str, int] = {}
        self._offset = 0
        self._done = threading.Event()

    def _read_log(self) -> None:
        with open(self.access_log, "rb") as log:
            log.seek(self._offset)
            chunk = log.read()
        complete = chunk.rfind(b"\n") + 1
        self._offset += complete
        for line in chunk[:complete].decode("utf-8", "replace").splitlines():
            status = line.split(" ", 1)[0]
            self.statuses[status] = self.statuses.get(status, 0) + 1

    def sample(self) -> None:
        self._read_log()
        self.samples.append({
            "at": time.time(),
            "rss": {pid: rss_kib(pid) for pid in self.workers},
            "dashboard_cpu": sum(cpu_seconds(pid) for pid in self.workers),
            "service_cpu": sum(cpu_seconds(pid) for pid in self.service_pids),
            "statuses": dict(self.statuses),
        })

    def run(self) -> None:
        while not self._done.is_set():
            self.sample()
            self._done.wait(0.2)

    def finish(self) -> None:
        self._done.set()
        self.join()
        self.sample()

    def at(self, moment: float) -> dict:
        """The last sample taken at or before `moment` (or the first one)."""
        earlier = [s for s in self.samples if s["at"] <= moment]
        return earlier[-1] if earlier else self.samples[0]


def run(args, limits: tuple[int, int, int], label: str, seeded: tuple[str, str, str],
        folder: Path) -> dict:
    database_url, key, project_id = seeded
    run_folder = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=folder))
    access_log = run_folder / "service-access.log"  # the logs: service.log, dashboard.log
    access_log.touch()
    service_port, dashboard_port = free_port(), free_port()
    service_config = {"DATABASE_URL": database_url, "REDIS_URL": None, "DEFAULT_LIMITS": limits}
    service = Process("service", [
        sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", "8",
        "--no-control-socket", "--graceful-timeout", "5", "--bind", f"127.0.0.1:{service_port}",
        "--access-logfile", str(access_log), "--access-logformat", "%(s)s %(U)s",
        f"service:create_app({service_config!r})"], clean_environment(), run_folder).start()
    service_url = f"http://127.0.0.1:{service_port}"
    dashboard_config = {"INSTANCE_PATH": str(run_folder / "dashboard"),
                        "SIGNIN_LIMIT": "10000/minute", "SERVER_TIMING": True}
    dashboard = Process("dashboard", [
        sys.executable, "-m", "gunicorn", "--workers", str(args.workers),
        "--worker-class", "gthread", "--threads", str(args.threads),
        "--no-control-socket", "--graceful-timeout", "5", "--bind", f"127.0.0.1:{dashboard_port}",
        f"app:create_app({dashboard_config!r})"],
        clean_environment(TAGDESK_API_URL=service_url, TAGDESK_SECRET_KEY="load-benchmark"),
        run_folder).start()
    dashboard_url = f"http://127.0.0.1:{dashboard_port}"
    out = run_folder / "locust.json"
    try:
        service.wait_until(lambda: answers_200(service_url + "/api/openapi.json"), "start")
        dashboard.wait_until(lambda: answers_200(dashboard_url + "/signin"), "start")
        for _ in range(200):  # every worker booted
            workers = children(dashboard.process.pid)
            if len(workers) == args.workers:
                break
            time.sleep(0.05)
        sampler = Sampler(workers, [service.process.pid, *children(service.process.pid)],
                          access_log)
        sampler.sample()
        sampler.start()
        locust_env = clean_environment(
            TAGDESK_LOAD_KEY=key, TAGDESK_LOAD_PROJECT=project_id,
            TAGDESK_LOAD_USERS=str(args.users), TAGDESK_LOAD_SECONDS=str(args.seconds),
            TAGDESK_LOAD_THINK=args.think, TAGDESK_LOAD_OUT=str(out))
        with open(run_folder / "locust.log", "wb") as locust_log:
            subprocess.run([sys.executable, "-m", "locust", "-f", str(ROOT / "bench/locustfile.py"),
                            "--headless", "--users", str(args.users),
                            "--spawn-rate", str(args.users), "--run-time",
                            f"{int(args.seconds) + 120}s", "--host", dashboard_url,
                            "--only-summary", "--stop-timeout", "0"],
                           cwd=ROOT, env=locust_env, stdout=locust_log,
                           stderr=subprocess.STDOUT, check=False)
        sampler.finish()
    finally:  # all is read: nothing left for the servers to finish
        dashboard.kill()
        service.kill()
    result = json.loads(out.read_text()) if out.exists() else None
    if not result or not result.get("start"):
        raise SystemExit(f"Locust did not measure anything; see {run_folder}/locust.log")
    result.update(sampler=sampler, folder=run_folder, limits=limits, label=label)
    return result


def report(args, result: dict) -> dict:
    start_at, end_at = result["start"], result["end"]
    seconds = end_at - start_at
    sampler: Sampler = result["sampler"]
    answers = [(click, answer) for click in result["clicks"] for answer in click["answers"]]
    pages = [a for _, a in answers if a["kind"] == "page"]
    busy = [a for _, a in answers if a["kind"] == "busy"]
    errors: dict[str, int] = {}
    for _, answer in answers:
        if answer["kind"] not in ("page", "busy", "hung up"):
            errors[answer["kind"]] = errors.get(answer["kind"], 0) + 1
    hung_up = sum(1 for _, answer in answers if answer["kind"] == "hung up")
    finished = [c for c in result["clicks"] if "done" in c and c["answers"][-1]["kind"] == "page"]
    waited = [c for c in finished if any(a["kind"] == "busy" for a in c["answers"])]
    to_page = [(c["done"] - c["at"]) * 1000 for c in finished]
    first, last = sampler.at(start_at), sampler.at(end_at)
    service_answers = {status: last["statuses"].get(status, 0) - first["statuses"].get(status, 0)
                       for status in last["statuses"]}
    service_total = sum(service_answers.values())
    service_429 = service_answers.get("429", 0)
    window = [s for s in sampler.samples if start_at <= s["at"] <= end_at] or [last]
    limits = result["limits"]

    title = ("default limits (" + f"{limits[0]}/s, {limits[1]}/min, {limits[2]:,}/h"
             + ")" if limits == DEFAULT_LIMITS else "limits lifted")
    print(f"\n— {title}: {args.users} users, think {args.think} s, {seconds:.0f} s measured, "
          f"dashboard {args.workers} gthread workers × {args.threads} threads —")
    print(f"  clicks {len(result['clicks']):,}; pages delivered {len(pages):,} "
          f"({len(pages) / seconds:.1f} per second); clicks that met a busy notice "
          f"{len(waited):,}")
    print(f"  errors (anything but a page or a busy notice): "
          f"{', '.join(f'{k}: {v}' for k, v in sorted(errors.items())) or 'none'}")
    for detail in sorted({a["detail"] for _, a in answers
                          if a["kind"] in errors and a.get("detail")})[:5]:
        print(f"    e.g. {detail}")
    if hung_up:
        print(f"  idle kept-alive connections closed by the dashboard as a click went out "
              f"(sent again, as browsers do): {hung_up}")

    def line(name: str, values: list[float]) -> None:
        if values:
            print(f"    {name:<34}{statistics.median(values):9.1f}{percentile(values, .95):9.1f}"
                  f"{max(values):9.1f}{len(values):8,}")

    print(f"  times (ms)                          {'p50':>9}{'p95':>9}{'max':>9}{'n':>8}")
    line("page answers", [a["ms"] for a in pages])
    line("  of which in API calls", [a["api"] for a in pages if a.get("api") is not None])
    line("  dashboard CPU (Server-Timing)", [a["cpu"] for a in pages if a.get("cpu") is not None])
    line("busy notices (429)", [a["ms"] for a in busy])
    line("click -> page, waits included", to_page)
    line("  clicks that met a busy notice", [(c["done"] - c["at"]) * 1000 for c in waited])
    if busy:
        waits = [a["retry_after"] for a in busy]
        print(f"  busy notices: {len(busy):,} ({len(busy) / seconds:.1f} per second, "
              f"{len(busy) / (len(busy) + len(pages)):.0%} of answers); Retry-After "
              f"p50 {statistics.median(waits):.0f} s, max {max(waits):.0f} s")
    print(f"  service: {service_total:,} requests ({service_total / seconds:.1f} per second), "
          f"429s {service_429:,} ({service_429 / seconds:.1f} per second); "
          f"{service_total / max(len(pages), 1):.2f} service requests per page delivered; "
          f"answers by status {dict(sorted(service_answers.items()))}")
    dashboard_cpu = last["dashboard_cpu"] - first["dashboard_cpu"]
    service_cpu = last["service_cpu"] - first["service_cpu"]
    print(f"  CPU: dashboard {dashboard_cpu:.1f} s ({dashboard_cpu * 1000 / max(len(pages), 1):.1f}"
          f" ms per page), service {service_cpu:.1f} s, over {seconds:.0f} s on 2 shared cores")
    print("  dashboard worker RSS (MiB)    boot    start   +10 s     peak      end")
    boot, settled = sampler.samples[0], sampler.at(start_at + 10)
    for pid in sampler.workers:
        peak = max((s["rss"].get(pid) or 0) for s in window)
        print(f"    worker {pid:<10}{(boot['rss'][pid] or 0) / 1024:12.1f}"
              f"{(first['rss'][pid] or 0) / 1024:9.1f}{(settled['rss'][pid] or 0) / 1024:8.1f}"
              f"{peak / 1024:9.1f}{(last['rss'][pid] or 0) / 1024:9.1f}")
    print(f"  (logs and Locust's own records in {result['folder']})")
    return {"title": title, "pages_per_second": len(pages) / seconds,
            "p50": statistics.median([a["ms"] for a in pages]) if pages else None,
            "p95": percentile([a["ms"] for a in pages], .95) if pages else None,
            "errors": errors, "busy": len(busy), "service_429_per_second": service_429 / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limits", choices=("default", "lifted", "both"), default="both")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0, help="measured part of each run")
    parser.add_argument("--think", default="0", help='seconds between clicks: "0" or "1-3"')
    parser.add_argument("--queries", type=int, default=20_000,
                        help="queries in the demo's main project")
    parser.add_argument("--workers", type=int, default=4, help="dashboard gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per dashboard worker")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-load-"))
    try:
        print(f"Seeding the demo with {args.queries:,} queries in {PROJECT} …", flush=True)
        seeded = seed(folder, args.queries)
        runs = {"default": [("default", DEFAULT_LIMITS)], "lifted": [("lifted", LIFTED)],
                "both": [("default", DEFAULT_LIMITS), ("lifted", LIFTED)]}[args.limits]
        summaries = [report(args, run(args, limits, label, seeded, folder))
                     for label, limits in runs]
        print("\nsummary: pages/s, page answer p50/p95 (ms), busy notices, errors")
        for summary in summaries:
            print(f"  {summary['title']:<40}{summary['pages_per_second']:7.1f}"
                  f"{summary['p50'] or 0:9.1f}{summary['p95'] or 0:9.1f}{summary['busy']:8,}"
                  f"   {summary['errors'] or 'none'}")
        failed = any(summary["errors"] for summary in summaries)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
