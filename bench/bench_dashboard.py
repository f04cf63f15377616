"""Benchmark (not a test): dashboard page views of 50 and 200 rows — the dashboard's own
overhead over its API call.

    uv run python bench/bench_dashboard.py --queries 100000            # seeds a temporary file
    uv run python bench/bench_dashboard.py --database /tmp/big.sqlite3  # an already seeded one
    uv run python bench/bench_dashboard.py --sizes 200 --profile /tmp/dashboard-200.txt
    uv run python bench/bench_dashboard.py --embedded                  # the one-process setup

A million queries take a few minutes to seed:

    TAGDESK_DATABASE_URL=sqlite:////tmp/big.sqlite3 \\
        uv run flask --app service seed-demo --queries 1000000

As deployed: the service and the dashboard each run under gunicorn in a process of their own
(one worker with 4 threads each; the dashboard talks to the service over loopback HTTP), rate
limits lifted. With --embedded, as in the demo: the dashboard in this process on a threaded
werkzeug server, the service embedded in it (so both share this process's GIL with the
client). A person signs in with a key made for the run; views are requested one after another
over HTTP, as full pages and as htmx partials, after one warm-up round (steady state: the tag
and project lists are cached). For each view:

- total     the whole response, measured by the client (request sent -> body read);
- api       time the dashboard spent in API calls (its Server-Timing header);
- service   time inside the service (its access log's request time; embedded: measured
            around its WSGI callable);
- overhead  total - api: everything that is not the API call (routing, session, rendering,
            HTTP) — the dashboard's own cost; "in the request" is the part between the
            dashboard's first and last step (Server-Timing), the rest is HTTP both ways;
- cpu       CPU time of the thread serving the view, outside API calls (Server-Timing): the
            dashboard's own work, without the waits for a core a busy machine adds;
- API calls per view, counted at the service.

Each page size (--sizes, default 50 and 200 rows) is measured on its own, against its target
for the overhead's p95 (10 ms at 50 rows, 25 ms at 200). With --profile FILE, further rounds at
the largest size run under pyinstrument, through Flask's test client in the benchmark's own
thread (the service still answers from its own process, or thread), and the profile goes to
FILE as text.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from sqlalchemy import create_engine, select  # noqa: E402
from werkzeug.serving import WSGIRequestHandler, make_server  # noqa: E402

import app as dashboard_module  # noqa: E402
from bench.bench_dashboard_load import answers_200, clean_environment, cpu_seconds  # noqa: E402
from bench.loadkit import children, free_port, percentile  # noqa: E402
from service import create_app as create_service_app  # noqa: E402
from service import schema  # noqa: E402
from service.demo import demo  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402
from service.store.models import Organization  # noqa: E402
from tests.support.scaleout import Process  # noqa: E402

UNLIMITED = (1_000_000, 10_000_000, 100_000_000)
# Page size -> target for the p95 of the dashboard's own overhead (milliseconds).
TARGETS = {50: 10.0, 200: 25.0}
PROJECT = "Online shop search"
VIEWS = [
    ("default", ""),
    ("page 2", "page=2"),
    ("page 40", "page=40"),
    ("text", "q=running"),
    ("text (German)", "q=damen"),
    ("language", "lang=de"),
    ("2 languages", "lang=fr&lang=es"),
    ("country", "country=GB"),
    ("tag", "tag=high%20intent"),
    ("combined", "q=schuhe&lang=de&tag=product"),
    ("sort query", "sort=query"),
    ("sort country desc", "sort=-country"),
    ("sort updated asc", "sort=updated&page=3"),
]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
TIMING = re.compile(r"(\w+);dur=([0-9.]+)")


def prepared_setup(args) -> tuple[str, int, str]:
    """The database (prepare_database), how many queries it holds, and a key of its demo."""
    url = prepare_database(args)
    engine = create_engine(url)
    with engine.connect() as connection:
        total_queries = connection.exec_driver_sql("SELECT count(*) FROM queries").scalar()
    engine.dispose()
    return url, total_queries, bench_key(url)


def prepare_database(args) -> str:
    if args.database:
        return "sqlite:///" + str(Path(args.database).resolve())
    folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-"))
    url = f"sqlite:///{folder / 'bench.sqlite3'}"
    service_app = create_service_app({"DATABASE_URL": url})
    schema.upgrade(service_app.extensions["tagdesk_engine"])
    started = time.perf_counter()
    print(f"seeding {args.queries:,} queries into {folder} …", file=sys.stderr)
    demo.seed(service_app, args.queries)
    print(f"seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    service_app.extensions["tagdesk_engine"].dispose()
    return url


def bench_key(url: str) -> str:
    """A fresh key of the demo organization for this run."""
    service_app = create_service_app({"DATABASE_URL": url})
    with session_scope(service_app) as session:
        org_id = session.scalar(select(Organization.id).where(
            Organization.name == demo.DEMO_ORG_NAME))
        key = admin.create_key(session, org_id, service_app.config["KEY_PREFIX"],
                               name="benchmark")
    service_app.extensions["tagdesk_engine"].dispose()
    return key


class QuietHandler(WSGIRequestHandler):
    """No access log between the figures."""

    def log_request(self, code="-", size="-"):
        pass


class ServiceMeter:
    """Embedded: counts the service's requests (by path) and the time spent inside it."""

    def __init__(self, service_app):
        self.requests = 0
        self.paths: Counter = Counter()
        self.seconds: list[float] = []
        inner = service_app.wsgi_app

        def metered(environ, start_response):
            started = time.perf_counter()
            try:
                return list(inner(environ, start_response))
            finally:
                self.requests += 1
                self.paths[environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")] += 1
                self.seconds.append(time.perf_counter() - started)

        service_app.wsgi_app = metered

    def reset(self) -> None:
        self.requests, self.paths, self.seconds = 0, Counter(), []

    def read(self) -> None:
        pass


class AccessLogMeter:
    """Processes: the service's requests, their paths and times, from its access log
    ("%(D)s %(s)s %(U)s": microseconds, status, path)."""

    def __init__(self, path: Path):
        self.path = path
        self.requests = 0
        self.paths: Counter = Counter()
        self.seconds: list[float] = []
        self._offset = 0

    def reset(self) -> None:
        time.sleep(0.2)  # the last answer's line is written after the answer
        self._offset = self.path.stat().st_size
        self.requests, self.paths, self.seconds = 0, Counter(), []

    def read(self) -> None:
        time.sleep(0.2)
        with open(self.path, "rb") as log:
            log.seek(self._offset)
            lines = [line.split() for line in log.read().decode().splitlines()]
        self.requests = len(lines)
        self.paths = Counter(fields[2] for fields in lines if len(fields) > 2)
        self.seconds = [int(fields[0]) / 1e6 for fields in lines]


class Embedded:
    """The dashboard in this process (threaded werkzeug), the service embedded in it."""

    def __init__(self, url: str):
        dashboard_module._announced = True  # no start-up banner in the middle of the figures
        self.app = dashboard_module.create_app({
            "INSTANCE_PATH": tempfile.mkdtemp(prefix="tagdesk-bench-instance-"),
            "SECRET_KEY": "benchmark",
            "SERVER_TIMING": True,
            "SIGNIN_LIMIT": "1000/minute",
            "SERVICE_CONFIG": {"DATABASE_URL": url, "DEFAULT_LIMITS": UNLIMITED},
        })
        self.meter = ServiceMeter(self.app.extensions["tagdesk_embedded"].service_app)
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True,
                                  request_handler=QuietHandler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.api_url = self.app.extensions["tagdesk_embedded"].internal_url()
        self.label = ("the dashboard on werkzeug in the benchmark's process, the service "
                      "embedded in it")

    def profiled_app(self):
        return self.app

    def dashboard_cpu(self) -> float | None:
        return None  # one process for everything: not the dashboard's alone

    def close(self) -> None:
        self.server.shutdown()
        self.app.extensions["tagdesk_embedded"].stop()


class Processes:
    """The service and the dashboard under gunicorn, each in a process of its own."""

    def __init__(self, url: str):
        self.folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-dashboard-"))
        access_log = self.folder / "service-access.log"
        access_log.touch()
        service_port, dashboard_port = free_port(), free_port()
        service_config = {"DATABASE_URL": url, "REDIS_URL": None, "DEFAULT_LIMITS": UNLIMITED}
        self.service = Process("service", [
            sys.executable, "-m", "gunicorn", "--workers", "1", "--threads", "4",
            "--no-control-socket", "--graceful-timeout", "5",
            "--bind", f"127.0.0.1:{service_port}", "--access-logfile", str(access_log),
            "--access-logformat", "%(D)s %(s)s %(U)s", f"service:create_app({service_config!r})"],
            clean_environment(), self.folder).start()
        self.service_url = self.api_url = f"http://127.0.0.1:{service_port}"
        dashboard_config = {"INSTANCE_PATH": str(self.folder / "dashboard"),
                            "SIGNIN_LIMIT": "1000/minute", "SERVER_TIMING": True}
        self.dashboard = Process("dashboard", [
            sys.executable, "-m", "gunicorn", "--workers", "1", "--worker-class", "gthread",
            "--threads", "4", "--no-control-socket", "--graceful-timeout", "5",
            "--bind", f"127.0.0.1:{dashboard_port}", f"app:create_app({dashboard_config!r})"],
            clean_environment(TAGDESK_API_URL=self.service_url, TAGDESK_SECRET_KEY="benchmark"),
            self.folder).start()
        self.base = f"http://127.0.0.1:{dashboard_port}"
        self.meter = AccessLogMeter(access_log)
        self.label = ("the service and the dashboard under gunicorn, a process each "
                      "(1 worker × 4 threads)")
        try:
            self.service.wait_until(lambda: answers_200(self.service_url + "/api/openapi.json"),
                                    "start")
            self.dashboard.wait_until(lambda: answers_200(self.base + "/signin"), "start")
        except BaseException:
            self.close()
            raise

    def dashboard_cpu(self) -> float | None:
        """CPU seconds of the dashboard's processes so far (all of its work: HTTP, sessions,
        the API client, rendering)."""
        pid = self.dashboard.process.pid
        return sum(cpu_seconds(each) for each in [pid, *children(pid)])

    def profiled_app(self):
        os.environ["TAGDESK_API_URL"] = self.service_url
        try:
            return dashboard_module.create_app({
                "INSTANCE_PATH": str(self.folder / "profiled"), "SECRET_KEY": "benchmark",
                "SIGNIN_LIMIT": "1000/minute"})
        finally:
            del os.environ["TAGDESK_API_URL"]

    def close(self) -> None:
        self.dashboard.kill()
        self.service.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def profile_views(app, key: str, project_id: str, queries: list[str], rounds: int) -> str:
    """The views, `rounds` times each as page and partial, through Flask's test client in this
    thread, under pyinstrument: one tree for all of them. The embedded service answers from
    its own thread, so its work shows only as the wait for the API's answer."""
    from pyinstrument import Profiler

    browser = app.test_client()
    token = CSRF.search(browser.get("/signin").get_data(as_text=True)).group(1)
    browser.post("/signin", data={"csrf_token": token, "api_key": key})
    path = f"/projects/{project_id}/queries"

    def views():
        for query in queries:
            for headers in ({}, {"HX-Request": "true"}):
                response = browser.get(path + ("?" + query if query else ""), headers=headers)
                assert response.status_code == 200, (query, response.status_code)

    views()  # warm-up
    profiler = Profiler(interval=0.0005)
    profiler.start()
    for _ in range(rounds):
        views()
    profiler.stop()
    return profiler.output_text(unicode=True, color=False, show_all=False)


def learned(api_url: str, key: str, project_id: str, timeout: float = 900) -> tuple[str, float]:
    """The project's suggestions once no learning is at work, and the seconds waited. A
    project's first look starts its learning (docs/api.md), in the service's own threads when
    no queue is set: measured meanwhile, a page shares the processor with it (1M queries: rows
    painted p95 212.8 ms by the first kinds measured, 93.4 after)."""
    started = time.perf_counter()
    while True:
        state = requests.post(api_url + "/api/suggestions/status", json={}, timeout=30, headers={
            "x-api-key": key, "x-project-id": project_id}).json()["state"]
        waited = time.perf_counter() - started
        if state != "learning" or waited > timeout:
            return state, waited
        time.sleep(1)


def summary(samples) -> dict[str, tuple[float, float]]:
    """p50 and p95 of each figure; samples are (total, api, cpu, app) in milliseconds."""
    columns = {"total": [s[0] for s in samples], "api": [s[1] for s in samples],
               "overhead": [s[0] - s[1] for s in samples], "cpu": [s[2] for s in samples],
               "app": [s[3] for s in samples]}
    return {name: (statistics.median(values), percentile(values, .95))
            for name, values in columns.items()}


def setup_parser(description: str, queries: int) -> argparse.ArgumentParser:
    """The options of the dashboard benchmarks' setup: the database, or how many queries to
    seed, and one process (--embedded) or two."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database", help="an SQLite file already seeded with seed-demo")
    parser.add_argument("--queries", type=int, default=queries,
                        help="queries to seed into a temporary file (without --database)")
    parser.add_argument("--embedded", action="store_true",
                        help="one process: werkzeug, the service embedded (as in the demo)")
    return parser


def main() -> None:
    parser = setup_parser(__doc__.split("\n\n")[0], 100_000)
    parser.add_argument("--rounds", type=int, default=8, help="measured rounds over the views")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200],
                        choices=sorted(TARGETS), help="rows per page, measured one after another")
    parser.add_argument("--profile", metavar="FILE",
                        help="profile further rounds at the largest size; write the text here")
    args = parser.parse_args()

    url, total_queries, key = prepared_setup(args)

    setup = (Embedded if args.embedded else Processes)(url)
    try:
        bench(args, setup, key, total_queries)
    finally:
        setup.close()


def bench(args, setup, key: str, total_queries: int) -> None:
    meter, base = setup.meter, setup.base
    browser = requests.Session()
    # The browser's stand-in: no proxy look-ups in this process's environment on every
    # request (0.25 ms each in requests, counted as the dashboard's overhead otherwise).
    browser.trust_env = False
    token = CSRF.search(browser.get(base + "/signin").text).group(1)
    answer = browser.post(base + "/signin", data={"csrf_token": token, "api_key": key})
    assert answer.url.endswith("/projects"), answer.url
    project_id = re.search(r'href="/projects/([^/]+)/queries">' + PROJECT, answer.text).group(1)
    page_url = f"{base}/projects/{project_id}/queries"

    def view(query: str, partial: bool) -> tuple[float, float, float, float]:
        headers = {"HX-Request": "true"} if partial else {}
        started = time.perf_counter()
        response = browser.get(page_url + ("?" + query if query else ""), headers=headers)
        body = response.content
        total = time.perf_counter() - started
        assert response.status_code == 200 and body, (query, response.status_code)
        timing = dict(TIMING.findall(response.headers["Server-Timing"]))
        return (total * 1000, float(timing["api"]), float(timing["cpu"]),
                float(timing["app"]))

    def sized(query: str, size: int) -> str:
        if size == 50:  # the default: not in the URL
            return query
        return "&".join(part for part in (query, f"size={size}") if part)

    def measure(size: int, rounds: int) -> tuple[dict, int, float | None]:
        for _name, query in VIEWS:  # warm-up: caches, connections, SQLite's page cache
            view(sized(query, size), False)
            view(sized(query, size), True)
        results: dict[tuple[str, bool], list[tuple[float, float, float, float]]] = {}
        meter.reset()
        cpu_before = setup.dashboard_cpu()
        for _ in range(rounds):
            for name, query in VIEWS:
                for partial in (False, True):
                    results.setdefault((name, partial), []).append(
                        view(sized(query, size), partial))
        cpu_after = setup.dashboard_cpu()
        meter.read()
        views = sum(len(samples) for samples in results.values())
        process_cpu = None if cpu_before is None else (cpu_after - cpu_before) * 1000 / views
        return results, meter.requests, process_cpu

    verdicts = []
    for size in args.sizes:
        results, service_requests, process_cpu = measure(size, args.rounds)
        views = sum(len(samples) for samples in results.values())
        calls_per_view = service_requests / views
        service_ms = [s * 1000 for s in meter.seconds]
        print(f"\nTagdesk dashboard benchmark — {total_queries:,} queries (SQLite), "
              f"{setup.label}; {size} rows per view, {views} measured views "
              f"({len(VIEWS)} views × full page and htmx partial × {args.rounds} rounds)\n")
        print(f"{'view':<22}{'kind':<9}{'total p50':>10}{'p95':>8}{'api p50':>10}"
              f"{'overhead p50':>14}{'p95':>8}{'cpu p50':>9}")
        for (name, partial), samples in results.items():
            figures = summary(samples)
            print(f"{name:<22}{'partial' if partial else 'page':<9}"
                  f"{figures['total'][0]:>10.1f}{figures['total'][1]:>8.1f}"
                  f"{figures['api'][0]:>10.1f}{figures['overhead'][0]:>14.1f}"
                  f"{figures['overhead'][1]:>8.1f}{figures['cpu'][0]:>9.1f}")

        print(f"\nall views at {size} rows (milliseconds)      p50      p95")
        for label, partial in (("full pages", False), ("htmx partials", True), ("both", None)):
            samples = [s for (_, kind), group in results.items()
                       if partial is None or kind == partial for s in group]
            figures = summary(samples)
            shares = [s[1] / s[0] for s in samples]
            print(f"  {label}")
            print(f"    whole response        {figures['total'][0]:8.1f} "
                  f"{figures['total'][1]:8.1f}")
            print(f"    API call              {figures['api'][0]:8.1f} "
                  f"{figures['api'][1]:8.1f}   "
                  f"(share of the response: median {statistics.median(shares):.0%})")
            print(f"    dashboard overhead    {figures['overhead'][0]:8.1f} "
                  f"{figures['overhead'][1]:8.1f}")
            print(f"      of which in the request "
                  f"{figures['app'][0]:6.1f} {figures['app'][1]:8.1f}   (Server-Timing: "
                  f"the rest is HTTP, both ways)")
            print(f"    dashboard CPU         {figures['cpu'][0]:8.1f} "
                  f"{figures['cpu'][1]:8.1f}")
        print(f"  inside the service        {statistics.median(service_ms):8.1f} "
              f"{percentile(service_ms, .95):8.1f}")
        if process_cpu is not None:
            print(f"  dashboard process CPU    {process_cpu:8.1f} per view (everything: HTTP, "
                  f"session, API client, rendering)")
        print(f"\nAPI calls per view: {calls_per_view:.3f}")
        overall = summary([s for group in results.values() for s in group])
        verdicts.append((size, overall["overhead"][1], overall["cpu"][1], calls_per_view))

    print("\nTargets")
    for size, p95, cpu_p95, calls_per_view in verdicts:
        target = TARGETS[size]
        print(f"  {size:>3} rows: overhead p95 {p95:.1f} ms (target ≤ {target:.0f} ms: "
              f"{'met' if p95 <= target else 'MISSED'}, {p95 / target:.0%} of it; CPU p95 "
              f"{cpu_p95:.1f} ms); API calls per view {calls_per_view:.3f} "
              f"({'met' if calls_per_view == 1 else 'MISSED'})")

    if args.profile:
        size = max(args.sizes)
        text = profile_views(setup.profiled_app(), key, project_id,
                             [sized(q, size) for _, q in VIEWS], args.rounds)
        Path(args.profile).write_text(text, encoding="utf-8")
        print(f"\nprofile of {size}-row views written to {args.profile}")


if __name__ == "__main__":
    main()
