"""Suggested tags in the service at scale: learning a project's suggestions through the
service's job, filters and facets by suggestion (POST /api/queries/list and facets with
`suggestedTagIds`), and the queries of an import scored after it ends.

    flock /tmp/team/bench.lock uv run python bench/bench_suggestion_filters.py
    uv run python bench/bench_suggestion_filters.py --queries 100000 --runs 30   # quick
    … --queries 10000000 --postgres postgresql+psycopg://postgres@127.0.0.1:5432

The database is a copy of bench_service.py's (/tmp/tagdesk-bench-<queries>.sqlite3, seeded
if new) made once (…-suggestions.sqlite3), so the suggestions written never change the
database other benchmarks time. The job learns and scores the largest project in this
process (the time of its three steps: the snapshot read, learning and scoring, the write);
then the service runs under gunicorn (1 worker, 4 threads) as in bench_service.py and each
shape is asked `--runs` times after a warm-up (p50 and p95 in ms, over a kept-alive
session). Last, 10,000 new queries are inserted as an import adds them and the job scores
them (the seconds from the import's end to its suggestions written).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, func, select, text  # noqa: E402

from bench.bench_service import database_for, load_average, prepare, start_service  # noqa: E402
from bench.loadkit import free_port, percentile  # noqa: E402
from service import create_app  # noqa: E402
from service.engine import suggested  # noqa: E402
from service.learning.learner import Learner  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402

TARGET_MS = 50
IMPORTED = 10_000


def copy_of(url: str, count: int) -> str:
    """A copy of the benchmarks' database (seeded first if there is none), by SQLite's backup:
    whole whatever its write-ahead log holds."""
    source = Path(url.removeprefix("sqlite:///"))
    copy = source.with_name(source.stem + "-suggestions.sqlite3")
    if not copy.exists():
        if not source.exists():
            prepare(url, count)
        with sqlite3.connect(source) as reading, sqlite3.connect(copy) as writing:
            reading.backup(writing)
    return f"sqlite:///{copy}"


def postgres_copy_of(server: str, count: int) -> str:
    """A copy of the benchmarks' PostgreSQL database of this size (seeded first if there is
    none), made by CREATE DATABASE … TEMPLATE (nobody may be connected to it meanwhile)."""
    source = database_for(server, count)
    prepare(source, count)
    name = f"tagdesk_bench_{count}_suggestions"
    admin_engine = create_engine(server + "/postgres", isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as connection:
        if not connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"),
                                 {"name": name}):
            started = time.perf_counter()
            connection.execute(text(f"CREATE DATABASE {name} TEMPLATE tagdesk_bench_{count}"))
            print(f"copied the database in {time.perf_counter() - started:.0f} s")
    admin_engine.dispose()
    return f"{server}/{name}"


def resident_mb(field: str) -> float:
    """This process's resident memory of a kind (/proc/self/status: VmRSS, RssAnon), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PeakMemory:
    """The most anonymous memory (RssAnon: the heap, what can run a machine out of memory)
    the process held while the block ran, read every 20 ms. The database file SQLite maps
    (mmap_size) counts in VmRSS too, but the kernel drops those pages when memory is short."""

    def __enter__(self) -> PeakMemory:
        self.before = self.peak = resident_mb("RssAnon")
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(0.02):
            self.peak = max(self.peak, resident_mb("RssAnon"))

    def __exit__(self, *_exc) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, resident_mb("RssAnon"))


def learned(url: str, project_id: str):
    """The app and its learner, the project learned and scored: the time of each step and
    the job's peak resident memory."""
    from service.suggestions import learning

    app = create_app({"DATABASE_URL": url})
    learner = Learner(app.extensions["tagdesk_sessionmaker"])
    learner.settings  # noqa: B018  (scikit-learn imported before the peak is measured)
    steps: dict[str, float] = {}
    longest: dict[str, float] = {}  # the longest call: a write holds the project's writers
    originals = {(suggested, "links"): "read", (suggested, "tagged_queries"): "read",
                 (learning, "learn"): "learn", (suggested, "write_part"): "write",
                 (suggested, "replace"): "write"}
    saved = {place: getattr(*place) for place in originals}

    def timed(name, function):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                took = time.perf_counter() - started
                steps[name] = steps.get(name, 0.0) + took
                longest[name] = max(longest.get(name, 0.0), took)
        return run

    for (module, attribute), name in originals.items():
        setattr(module, attribute, timed(name, saved[module, attribute]))
    started = time.perf_counter()
    with PeakMemory() as memory:
        assert learner.refresh(project_id)
        learner.wait()
    total = time.perf_counter() - started
    for (module, attribute), function in saved.items():
        setattr(module, attribute, function)
    with session_scope(app) as session:
        row = suggested.state(session.connection(), project_id)
        kept = session.scalar(text("SELECT count(*) FROM query_suggestions"))
    score = total - sum(steps.values())
    print(f"learned from {row.learned_from:,} tagged queries: {total:.1f} s (read "
          f"{steps['read']:.1f} s, learn {steps['learn']:.1f} s, read and score every query "
          f"{score:.1f} s, write {steps['write']:.1f} s, the longest transaction "
          f"{longest['write']:.2f} s); peak heap {memory.peak:,.0f} MB "
          f"({memory.peak - memory.before:,.0f} MB over the {memory.before:,.0f} MB before; "
          "target ≤ 1 GB at 1M); "
          f"default confidence {row.default_confidence}, held back right "
          f"{row.held_back_right}; {kept:,} suggestions kept")
    return app, learner


def imported(app, learner: Learner, project_id: str) -> None:
    with session_scope(app) as session:
        base = session.scalar(select(func.max(text("pk"))).select_from(text("queries")))
        rows = [(*admin.normalize_query(f"bench import {base} {n} schuhe laufen", "de", "DE"),
                 [], None) for n in range(IMPORTED)]
        admin.insert_queries(session, project_id, rows)
    started = time.perf_counter()
    scored = learner.score_new(project_id)
    print(f"an import of {scored:,} queries scored {time.perf_counter() - started:.2f} s after "
          "it ended (target ≤ 5 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--postgres", metavar="SERVER",
                        help="a PostgreSQL server (postgresql+psycopg://postgres@127.0.0.1:5432) "
                             "instead of SQLite: a copy of bench_service.py's database there")
    args = parser.parse_args()
    url = (postgres_copy_of(args.postgres, args.queries) if args.postgres
           else copy_of(database_for(None, args.queries), args.queries))
    key, project_id, total, popularity = prepare(url, args.queries)
    print(f"project: {total:,} queries; load average before: {load_average()}")
    app, learner = learned(url, project_id)
    port = free_port()
    service = start_service(url, port)
    try:
        session = requests.Session()
        session.headers.update({"x-api-key": key, "x-project-id": project_id})
        base = f"http://127.0.0.1:{port}/api"
        status = session.post(f"{base}/suggestions/status", json={}).json()
        tags = sorted(status["tags"], key=lambda tag: -tag["suggested"])
        print("suggested per tag:", [(tag["id"], tag["suggested"]) for tag in tags[:5]])
        first, second = tags[0]["id"], tags[min(1, len(tags) - 1)]["id"]
        shapes = {
            "list: suggested A": ("queries/list", {"suggestedTagIds": [first]}),
            "list: suggested A + language": ("queries/list", {"suggestedTagIds": [first],
                                                               "languages": ["de"]}),
            "list: suggested A or B, untagged": ("queries/list", {
                "suggestedTagIds": [first, second], "untagged": True}),
            "list: suggested A at 0.9": ("queries/list", {"suggestedTagIds": [first],
                                                           "minConfidence": 0.9}),
            "list: include suggestions": ("queries/list", {"include": ["suggestions"]}),
            "facets: whole project": ("queries/facets", {}),
            "facets: suggested A": ("queries/facets", {"suggestedTagIds": [first]}),
            "facets: suggested A + text": ("queries/facets", {"suggestedTagIds": [first],
                                                              "query": "schu"}),
        }
        print(f"{'shape':40} {'matches':>9} {'p50 ms':>8} {'p95 ms':>8}")
        for name, (path, body) in shapes.items():
            for _ in range(3):
                session.post(f"{base}/{path}", json=body).raise_for_status()
            times, answer = [], None
            for _ in range(args.runs):
                started = time.perf_counter()
                response = session.post(f"{base}/{path}", json=body)
                times.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                answer = response.json()
            matches = answer.get("totalRecords", answer.get("page", {}).get("totalRecords"))
            print(f"{name:40} {matches:>9,} {percentile(times, 0.5):8.1f} "
                  f"{percentile(times, 0.95):8.1f}")
        print(f"target: p95 ≤ {TARGET_MS} ms")
    finally:
        service.terminate()
        service.wait(30)
    imported(app, learner, project_id)
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
