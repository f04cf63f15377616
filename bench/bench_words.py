"""The common words of a view (POST /api/queries/words) at scale, beside queries/list.

    uv run python bench/bench_words.py                      # the 1M SQLite database of
                                                            # bench_service.py (seeded if new)
    uv run python bench/bench_words.py --queries 100000 --runs 50

The service runs under gunicorn (1 worker, 4 threads) as in bench_service.py. For each view:
the first words call of a fresh service process (the bitmaps of the candidate words and
phrases read from the database); p50 and p95 of words calls each after a write to the
project (one query's tags changed, untimed: the answer kept for the view is then stale), and
of the same call repeated (the answer kept); and queries/list (50 rows, exact total) of the
same filter as the anchor.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_service import database_for, load_average, prepare, start_service  # noqa: E402
from bench.loadkit import free_port, percentile  # noqa: E402

VIEWS = {
    "untagged": {"untagged": True},
    "whole project": {},
    "language de": {"languages": ["de"]},
    "untagged + text 'schu'": {"untagged": True, "query": "schu"},
}
TARGET_MS = 100


def timed(call) -> tuple[float, dict]:
    started = time.perf_counter()
    response = call()
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--database-url")
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    url = args.database_url or database_for(None, args.queries)
    key, project_id, total, _popularity = prepare(url, args.queries)
    print(f"project: {total:,} queries; load average before: {load_average()}")
    port = free_port()
    service = start_service(url, port)
    try:
        session = requests.Session()
        session.headers.update({"x-api-key": key, "x-project-id": project_id})
        base = f"http://127.0.0.1:{port}/api"
        print(f"{'view':<26}{'first':>8}{'written p50':>12}{'p95':>7}{'repeated p95':>13}"
              f"{'list p50':>9}{'p95':>7}  matches, first words")
        one = session.post(f"{base}/queries/list", json={"limit": 1}).json()["results"][0]
        tag_ids = [tag["id"] for tag in session.post(f"{base}/tags/list", json={}).json()[
            "results"]]
        toggled = [tag_ids[0]] if one["tags"] != [tag_ids[0]] else [tag_ids[1]]

        def write(turn: int) -> None:
            item = {"query": one["query"], "language": one["language"],
                    "country": one["country"], "tagIds": toggled if turn % 2 else one["tags"]}
            session.patch(f"{base}/queries/many/tags-only",
                          json={"queries": [item]}).raise_for_status()

        for name, body in VIEWS.items():
            def words(body=body):
                return session.post(f"{base}/queries/words", json={**body, "limit": 20})

            def listed(body=body):
                return session.post(f"{base}/queries/list", json={**body, "limit": 50})

            first, answer = timed(words)
            for _ in range(3):
                words()
                listed()
            written = []
            for turn in range(args.runs):
                write(turn)
                written.append(timed(words)[0])
            write(0)
            repeated = [timed(words)[0] for _ in range(args.runs)]
            list_times = [timed(listed)[0] for _ in range(args.runs)]
            shown = ", ".join(f"{item['text']} {item['count']:,}"
                              for item in answer["words"][:3])
            print(f"{name:<26}{first:>8.0f}{percentile(written, 0.5):>12.1f}"
                  f"{percentile(written, 0.95):>7.1f}{percentile(repeated, 0.95):>13.1f}"
                  f"{percentile(list_times, 0.5):>9.1f}{percentile(list_times, 0.95):>7.1f}"
                  f"  {answer['totalRecords']:,}: {shown}", flush=True)
        print(f"target: words p95 <= {TARGET_MS} ms for the untagged view; "
              f"load average after: {load_average()}")
    finally:
        service.terminate()
        service.wait()


if __name__ == "__main__":
    main()
