"""Benchmark (not a test): many signed-in people at once on the dashboard under gunicorn
(several workers, sessions in Redis) against the service under gunicorn: the count of 5xx
answers, which must be zero, and the latency of each kind of page.

    uv run python bench/bench_load_dashboard_errors.py                 # 20 people, 20 s
    uv run python bench/bench_load_dashboard_errors.py --users 40 --seconds 30

Each person signs in with their organization's key (USERS people over ORGS organizations,
each with a project of 2,000 queries and limits high enough that the service never answers
429: this run is about the dashboard's own errors), then loops without pause over the queries
page (pages 1–5), a filtered queries page, the tags page, and the htmx partial of a search.
The dashboard sits behind a "proxy" (TAGDESK_TRUSTED_PROXIES=1, a distinct X-Forwarded-For
per person), so the sign-in throttle sees one address per person, as it would in production.

Printed: answers by kind and status, p50/p95 per kind, answers whose shape is wrong (a whole
page where a partial was asked, or the reverse), and tracebacks in either process's log. The
exit status is 0 when there is no 5xx, no unanswered request, no wrong shape and no traceback.
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
from dataclasses import dataclass
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import loadkit  # noqa: E402
from service.org import admin  # noqa: E402

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
HIGH_LIMITS = (100_000, 1_000_000, 10_000_000)
QUERIES_PER_PROJECT = 2000
WORDS = ("running shoes", "laufschuhe", "chaussures", "zapatillas", "trail", "sale", "kids",
         "waterproof", "boots", "sandals")
LANGUAGES = ("en", "de", "fr", "es")
COUNTRIES = ("US", "GB", "DE", "FR", "ES", "AT")
TAGS = (("brand", "#1f77b4"), ("sale", "#ff7f0e"), ("question", "#2ca02c"),
        ("local", "#d62728"), ("seasonal", "#9467bd"), ("kids", "#8c564b"))


@dataclass
class Person:
    index: int
    key: str
    project_id: str


def seed(folder: Path, orgs: int, users: int) -> tuple[str, list[Person]]:
    keys = []
    with loadkit.seeded_service_database(folder) as (url, session):
        for _index, key, project_id in loadkit.organizations(
                session, orgs, HIGH_LIMITS, "Dashboard load org"):
            tag_ids = [admin.create_tag(session, project_id, name, color)
                       for name, color in TAGS]
            rows = []
            for i in range(QUERIES_PER_PROJECT):
                text = f"{WORDS[i % len(WORDS)]} {i:05d}"
                tags = [tag_ids[j] for j in range(len(tag_ids)) if (i >> j) % 3 == 0]
                rows.append((*admin.normalize_query(text, LANGUAGES[i % 4], COUNTRIES[i % 6]),
                             tags, None))
            admin.insert_queries(session, project_id, rows)
            keys.append((key, project_id))
    return url, [Person(i, *keys[i % orgs]) for i in range(users)]


def views(project_id: str) -> list[tuple[str, str, bool]]:
    """(kind, path, htmx) in the order a person visits them."""
    base = f"/projects/{project_id}"
    return [
        *[("queries page", f"{base}/queries?page={page}", False) for page in range(1, 6)],
        ("filtered page", f"{base}/queries?q=shoe&lang=en&tag=brand", False),
        ("tags page", f"{base}/tags", False),
        ("search partial", f"{base}/queries?q=lauf&page=2", True),
    ]


class Crowd:
    def __init__(self, base_url: str, people: list[Person], seconds: float):
        self.base_url = base_url
        self.people = people
        self.seconds = seconds
        self.lock = threading.Lock()
        self.statuses: dict[str, Counter] = defaultdict(Counter)
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.wrong_shape = 0
        self.signin_failures = 0

    def _record(self, kind: str, status: int, seconds: float, wrong: bool = False) -> None:
        with self.lock:
            self.statuses[kind][status] += 1
            self.latency[kind].append(seconds * 1000)
            self.wrong_shape += wrong

    def _sign_in(self, browser: requests.Session, person: Person) -> bool:
        page = browser.get(self.base_url + "/signin", timeout=30)
        token = CSRF.search(page.text)
        if token is None:
            return False
        answer = browser.post(self.base_url + "/signin", timeout=30,
                              data={"csrf_token": token.group(1), "api_key": person.key})
        return answer.status_code == 200 and "Sign out" in answer.text

    def _person(self, person: Person, start: float) -> None:
        browser = requests.Session()
        # The proxy in front says who is asking: one address per person.
        browser.headers["X-Forwarded-For"] = f"10.0.{person.index // 250}.{person.index % 250 + 1}"
        try:
            signed_in = self._sign_in(browser, person)
        except requests.RequestException:
            signed_in = False
        if not signed_in:
            with self.lock:
                self.signin_failures += 1
            return
        deadline = start + self.seconds
        visits = views(person.project_id)
        step = person.index  # people start at different places in the loop
        while time.perf_counter() < deadline:
            kind, path, htmx = visits[step % len(visits)]
            step += 1
            headers = {"HX-Request": "true"} if htmx else {}
            began = time.perf_counter()
            try:
                answer = browser.get(self.base_url + path, headers=headers, timeout=30,
                                     allow_redirects=False)
            except requests.RequestException:
                self._record(kind, 0, time.perf_counter() - began)
                continue
            whole = "</html>" in answer.text
            wrong = answer.status_code == 200 and whole == htmx
            self._record(kind, answer.status_code, time.perf_counter() - began, wrong)

    def run(self) -> None:
        start = time.perf_counter()
        loadkit.run_each_in_a_thread(self._person, [(person, start) for person in self.people])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--orgs", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=3, help="dashboard gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per dashboard worker")
    parser.add_argument("--service-workers", type=int, default=2)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="tagdesk-bench-dash-errors-"))
    load_before = os.getloadavg()[0]
    try:
        print(f"Seeding {args.orgs} organizations × {QUERIES_PER_PROJECT:,} queries …",
              flush=True)
        database_url, people = seed(folder, args.orgs, args.users)
        instance = str(folder / "dashboard-instance")
        with loadkit.Redis(folder) as redis, loadkit.service_under_gunicorn(
                database_url, redis, args.service_workers, 4, folder) as service, loadkit.Gunicorn(
                f"app:create_app({{'INSTANCE_PATH': {instance!r}}})",
                {"TAGDESK_API_URL": service.url, "TAGDESK_REDIS_URL": redis.url,
                 "TAGDESK_SECRET_KEY": "bench-load", "TAGDESK_TRUSTED_PROXIES": "1"},
                args.workers, args.threads, "/signin", folder / "dashboard.log") as dashboard:
            print(f"Dashboard: gunicorn {args.workers} workers × {args.threads} threads, "
                  f"sessions in Redis; service: gunicorn {args.service_workers} workers × 4 "
                  f"threads, SQLite", flush=True)
            crowd = Crowd(dashboard.url, people, args.seconds)
            crowd.run()
            tracebacks = service.errors_logged() + dashboard.errors_logged()
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"\n{args.users} people signed in over {args.orgs} organizations "
          f"(sign-in failures: {crowd.signin_failures}), {args.seconds:g} s without pause")
    print(f"Load average (1 min) before / after: {load_before:.1f} / {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs\n")
    print(f"{'kind':16} {'answers':>8} {'200':>7} {'4xx':>5} {'5xx':>5} {'none':>5} "
          f"{'p50 ms':>8} {'p95 ms':>8}")
    totals: Counter = Counter()
    for kind in ("queries page", "filtered page", "tags page", "search partial"):
        counts = crowd.statuses[kind]
        row = {"all": sum(counts.values()), "200": counts[200],
               "4xx": sum(n for s, n in counts.items() if 400 <= s < 500),
               "5xx": sum(n for s, n in counts.items() if s >= 500),
               "none": counts[0]}
        totals.update(row)
        print(f"{kind:16} {row['all']:8d} {row['200']:7d} {row['4xx']:5d} {row['5xx']:5d} "
              f"{row['none']:5d} {loadkit.percentile(crowd.latency[kind], 0.5):8.1f} "
              f"{loadkit.percentile(crowd.latency[kind], 0.95):8.1f}")
    everything = [ms for values in crowd.latency.values() for ms in values]
    print(f"{'all':16} {totals['all']:8d} {totals['200']:7d} {totals['4xx']:5d} "
          f"{totals['5xx']:5d} {totals['none']:5d} {loadkit.percentile(everything, 0.5):8.1f} "
          f"{loadkit.percentile(everything, 0.95):8.1f}")
    print(f"\nThroughput: {totals['all'] / args.seconds:.0f} answers/s")
    print(f"Answers of the wrong shape: {crowd.wrong_shape}")
    print(f"Tracebacks in the service's and the dashboard's logs: {tracebacks}")
    passed = (totals["5xx"] == 0 and totals["none"] == 0 and crowd.wrong_shape == 0
              and tracebacks == 0 and crowd.signin_failures == 0 and totals["all"] > 0)
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
