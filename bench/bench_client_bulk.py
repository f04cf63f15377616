"""Benchmark (not a test): bulk tagging through queryapi in BACKGROUND mode under the default
rate limits, against the wall-clock floor those limits impose.

    uv run python bench/bench_client_bulk.py                   # 10,000 queries, batches of 1000
    uv run python bench/bench_client_bulk.py --batch-size 100  # 100 calls: rate-limit bound

A temporary SQLite service with the service's DEFAULT limits (10/s, 300/min, 10,000/h) runs
on a loopback port from a thread; the client sets one tag on every query, in batches. Printed:
calls made, 429s received, wall time, the rate-limit floor, and wall time ÷ floor.

The floor is the earliest moment the limits would let the next call after the last one start
if calls took no time at all — "calls ÷ allowed rate" with every window (sliding, as the
service counts them) taken into account. With 100 calls under 10/s it is 10 s. With few calls
(10 calls of 1000 items) the floor is tiny and the work itself dominates; the ratio then
measures the service, not the pacing.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import create_engine, func, select  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from queryapi import Client, Mode, TagAssignment  # noqa: E402
from service import create_app as create_service_app  # noqa: E402
from service import schema  # noqa: E402
from service.config import DEFAULT_LIMITS  # noqa: E402
from service.engine.tables import query_tags  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402

WINDOWS = (1, 60, 3600)
LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "sv")
COUNTRIES = ("US", "GB", "DE", "FR", "ES", "NL", "IT", "PL", "SE")


def rate_limit_floor(calls: int, limits: tuple[int, int, int]) -> float:
    """Seconds before call number `calls` + 1 could start, calls taking no time."""
    starts: list[float] = []
    for k in range(calls + 1):
        start = 0.0
        for seconds, limit in zip(WINDOWS, limits, strict=True):
            if k >= limit:
                start = max(start, starts[k - limit] + seconds)
        starts.append(start)
    return starts[calls]


def build_service(directory: Path, queries: int):
    url = f"sqlite:///{directory / 'bench.sqlite3'}"
    engine = create_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None,
                              "DEFAULT_LIMITS": DEFAULT_LIMITS})
    with session_scope(app) as session:
        org_id = admin.create_org(session, "Bench org")
        key = admin.create_key(session, org_id, "tdk")
        project_id = admin.create_project(session, org_id, "Bench project")
        tag_ids = [admin.create_tag(session, project_id, name, color) for name, color in
                   (("brand", "#1f77b4"), ("sale", "#ff7f0e"), ("question", "#2ca02c"))]
        rows = [admin.normalize_query(f"bench query {i:06d}", LANGUAGES[i % len(LANGUAGES)],
                                      COUNTRIES[i % len(COUNTRIES)]) for i in range(queries)]
        admin.insert_queries(session, project_id, [(*row, [], None) for row in rows])
    return app, key, project_id, tag_ids, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=1000,
                        help="items per set-tags call (at most 1000)")
    args = parser.parse_args()
    if not 1 <= args.batch_size <= 1000:
        parser.error("--batch-size must be between 1 and 1000")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)

    with tempfile.TemporaryDirectory(prefix="tagdesk-bench-") as tmp:
        print(f"Preparing a service with {args.queries:,} queries …", flush=True)
        app, key, project_id, tag_ids, rows = build_service(Path(tmp), args.queries)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{server.server_port}"
        items = [TagAssignment(query, language, country, (tag_ids[i % len(tag_ids)],))
                 for i, (query, language, country) in enumerate(rows)]
        try:
            with Client(url, key, Mode.BACKGROUND) as client:
                started = time.perf_counter()
                if args.batch_size == 1000:
                    updated = client.set_tags(project_id, items)  # the client's own batching
                else:
                    updated = []
                    for at in range(0, len(items), args.batch_size):
                        updated += client.set_tags(project_id, items[at:at + args.batch_size])
                wall = time.perf_counter() - started
                stats = client.stats
        finally:
            server.shutdown()
            server.server_close()
        with session_scope(app) as session:
            links = session.scalar(select(func.count()).select_from(query_tags))
        app.extensions["tagdesk_engine"].dispose()

    needed = -(-args.queries // args.batch_size)
    floor = rate_limit_floor(needed, DEFAULT_LIMITS)
    ok = len(updated) == args.queries and links == args.queries
    print(f"limits                 {DEFAULT_LIMITS[0]}/s, {DEFAULT_LIMITS[1]}/min, "
          f"{DEFAULT_LIMITS[2]:,}/h")
    print(f"queries tagged         {len(updated):,} (in the database: {links:,})")
    print(f"batch size             {args.batch_size}")
    print(f"calls made             {stats.requests} (needed: {needed})")
    print(f"429s received          {stats.rate_limited}")
    print(f"503s received          {stats.unavailable}")
    print(f"wall time              {wall:.2f} s (of which waiting for the limits: "
          f"{stats.slept:.2f} s)")
    print(f"rate-limit floor       {floor:.2f} s")
    print(f"wall time / floor      {wall / floor:.3f}" if floor else "wall time / floor      -")
    return 0 if ok and stats.rate_limited == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
