"""Benchmark (not a test): the Report page (/projects/<id>/report) of a project of QUERIES
queries with numbers — target p95 ≤ 300 ms at 1M.

    flock /tmp/team/bench.lock uv run python bench/bench_report.py --queries 1000000
    flock /tmp/team/bench.lock uv run python bench/bench_report.py --queries 100000 --runs 10

The SQLite file (/tmp/tagdesk-report-<queries>.sqlite3) is seeded once and kept: one project,
eight tags (a query has each with its own probability, 0 to 3 of them), clicks, impressions,
position, volume, CPC and difficulty drawn at random (a fifth of the queries without clicks,
impressions and position, a tenth without volume). The service runs under gunicorn (1 worker,
4 threads), as deployed; the dashboard in this process (Flask's test client, signed in), talking
to it over loopback HTTP. For each view, after one warm-up request: RUNS requests of the whole
page one after another (p50 and p95, ms), and the same number of its one facets call with
sums made directly (the service's part).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine  # noqa: E402

from app import create_app  # noqa: E402
from bench import loadkit  # noqa: E402
from queryapi import Client, QueryFilters  # noqa: E402
from service import create_app as create_service_app  # noqa: E402
from service import schema  # noqa: E402
from service.engine.numbers import BY_NAME  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402

LANGUAGES = ["de", "en", "fr", "es", "it", "nl", "pl", "sv"]
COUNTRIES = ["DE", "US", "FR", "ES", "IT", "NL", "PL", "SE", "AT"]
# Tag name, colour, the share of queries that carry it.
TAGS = [("brand", "#1f77b4", .30), ("sale", "#ff7f0e", .15), ("question", "#2ca02c", .10),
        ("local", "#d62728", .08), ("price", "#9467bd", .05), ("review", "#8c564b", .03),
        ("size", "#e377c2", .02), ("gift", "#7f7f7f", .005)]
UNLIMITED = (100_000, 1_000_000, 10_000_000)
VIEWS = [("whole project, share of clicks", ""),
         ("whole project, share of volume", "by=volume"),
         ("one language", "lang=de"),
         ("one tag", "tag=brand"),
         ("any of two tags", "tag=sale&tag=question"),
         ("a volume range", "volume_min=1000"),
         ("text + language, by name", "q=query+1&lang=en&order=tag")]
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def numbers_of(rng: random.Random) -> dict[str, int]:
    values: dict[str, float] = {}
    if rng.random() < .8:
        impressions = rng.randint(10, 50_000)
        values.update(impressions=impressions, clicks=rng.randint(0, impressions // 5),
                      position=round(rng.uniform(1, 60), 1))
    if rng.random() < .9:
        values.update(volume=rng.choice((10, 20, 50, 90, 170, 320, 880, 1600, 5400, 22200)),
                      cpc=round(rng.uniform(0, 4), 2), difficulty=rng.randint(0, 100))
    return {name: BY_NAME[name].stored(value) for name, value in values.items()}


def seed(path: Path, queries: int) -> None:
    url = f"sqlite:///{path}"
    engine = create_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None})
    rng = random.Random(48)
    try:
        with session_scope(app) as session:
            org_id = admin.create_org(session, "Report bench")
            admin.set_limits(session, org_id, *UNLIMITED)
            admin.create_key(session, org_id, "tdk")
            project_id = admin.create_project(session, org_id, "Shop search")
            tags = [(admin.create_tag(session, project_id, name, color), share)
                    for name, color, share in TAGS]
            rows = ((*admin.normalize_query(f"bench query {i:07d}", LANGUAGES[i % 8],
                                            COUNTRIES[i % 9]),
                     [tag for tag, share in tags if rng.random() < share], None,
                     numbers_of(rng))
                    for i in range(queries))
            admin.insert_queries(session, project_id, rows, batch_size=5000)
    finally:
        app.extensions["tagdesk_engine"].dispose()


def new_key(path: Path) -> tuple[str, str]:
    """A key of the seeded organization, made for this run (keys are kept hashed), and the
    project's id."""
    app = create_service_app({"DATABASE_URL": f"sqlite:///{path}", "REDIS_URL": None})
    try:
        with session_scope(app) as session:
            from service.store.models import Organization, Project

            org = session.query(Organization).filter_by(name="Report bench").one()
            project = session.query(Project).filter_by(org_id=org.id).one()
            return admin.create_key(session, org.id, "tdk"), project.id
    finally:
        app.extensions["tagdesk_engine"].dispose()


def timed(call, runs: int) -> tuple[float, float]:
    call()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return loadkit.percentile(times, .5), loadkit.percentile(times, .95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    options = parser.parse_args()
    path = Path(tempfile.gettempdir()) / f"tagdesk-report-{options.queries}.sqlite3"
    if not path.exists():
        start = time.perf_counter()
        seed(path, options.queries)
        print(f"seeded {options.queries:,} queries in {time.perf_counter() - start:.0f} s")
    key, project_id = new_key(path)
    with tempfile.TemporaryDirectory() as folder, loadkit.Redis(Path(folder)) as redis, \
            loadkit.service_under_gunicorn(f"sqlite:///{path}", redis, 1, 4,
                                           Path(folder)) as service:
        app = create_app({"API_URL": service.url, "SECRET_KEY": "bench-report",
                          "INSTANCE_PATH": str(Path(folder) / "instance")})
        client = app.test_client()
        token = CSRF.search(client.get("/signin").get_data(as_text=True)).group(1)
        client.post("/signin", data={"csrf_token": token, "api_key": key})
        api = Client(service.url, key)
        numbers = ("clicks", "impressions", "ctr", "position", "volume", "cpc", "difficulty")
        print(f"{options.queries:,} queries, {options.runs} runs a view; ms p50 / p95")
        print(f"{'view':34} {'page':>15} {'facets call':>15}")
        for label, query in VIEWS:
            def page(query=query):
                response = client.get(f"/projects/{project_id}/report?{query}")
                assert response.status_code == 200, response.status_code

            filters = QueryFilters(**({"languages": ("de",)} if "lang=de" in query else {}))
            page_times = timed(page, options.runs)
            facets_times = timed(lambda filters=filters: api.facets(project_id, filters,
                                                                    sums=numbers),
                                 options.runs) if query in ("", "lang=de") else None
            facets_text = (f"{facets_times[0]:6.1f} / {facets_times[1]:6.1f}"
                           if facets_times else "")
            print(f"{label:34} {page_times[0]:6.1f} / {page_times[1]:6.1f} {facets_text:>15}")


if __name__ == "__main__":
    main()
