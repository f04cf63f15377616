"""Benchmark (not a test): "select all N matching, add a tag" — the whole dashboard path — under
the service's DEFAULT rate limits, against the wall-clock floor those limits impose.

    uv run python bench/bench_bulk.py                      # 10,000 queries
    uv run python bench/bench_bulk.py --queries 100000
    uv run python bench/bench_bulk.py --queries 10000 100000   # both, one after the other

The service runs in a process of its own (gunicorn, one worker, on a temporary SQLite file
seeded with N queries, default limits 10/s, 300/min, 10,000/h), so that the memory measured
is the dashboard's alone. The dashboard runs in this process with TAGDESK_API_URL pointing at
it: a person signs in, opens the project, selects all N matching, adds a tag and confirms;
the job runs in the dashboard's job thread, as in production. Printed per run:

- calls the job made (reads + writes), and the fewest that could do (2 × ⌈N/1000⌉);
- 429s received (the client paces itself, so the target is 0);
- the job's wall time, and the rate-limit floor: calls ÷ allowed rate ("calls needed ÷ rate",
  10 per second), and the exact sliding-window floor of bench_client_bulk.py;
- resident memory of this process before the job and at its peak during it (sampled every
  20 ms): flat means the job holds one page at a time, whatever N.
The exit status is 0 when every query got the tag and no 429 was received.
"""

from __future__ import annotations

import argparse
import logging
import math
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


from bench.bench_client_bulk import rate_limit_floor  # noqa: E402
from bench.loadkit import Gunicorn, seeded_service_database  # noqa: E402
from service.config import DEFAULT_LIMITS  # noqa: E402
from service.org import admin  # noqa: E402

LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "sv")
COUNTRIES = ("US", "GB", "DE", "FR", "ES", "NL", "IT", "PL", "SE")
CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
PLAN = re.compile(r'name="plan" value="([^"]+)"')


def rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def seed(directory: Path, queries: int) -> tuple[str, str, str, int]:
    with seeded_service_database(directory) as (url, session):
        org_id = admin.create_org(session, "Bench org")
        key = admin.create_key(session, org_id, "tdk")
        project_id = admin.create_project(session, org_id, "Bench project")
        tag_id = admin.create_tag(session, project_id, "brand", "#1f77b4")
        admin.create_tag(session, project_id, "sale", "#ff7f0e")
        rows = ((*admin.normalize_query(f"bench query {i:07d}", LANGUAGES[i % 8],
                                        COUNTRIES[i % 9]), [], None) for i in range(queries))
        admin.insert_queries(session, project_id, rows, batch_size=5000)
    return url, key, project_id, tag_id


def start_service(database_url: str, directory: Path) -> Gunicorn:
    config = {"DATABASE_URL": database_url, "REDIS_URL": None}
    return Gunicorn(f"service:create_app({config!r})", {}, workers=1, threads=8,
                    ready_path="/api/openapi.json", log=directory / "service.log").start()


def run(queries: int, keep: bool, pipeline: bool = True) -> bool:
    from app import create_app
    from jobs.store import Store
    from queryapi import Client

    directory = Path(tempfile.mkdtemp(prefix="tagdesk-bench-bulk-"))
    service = None
    try:
        print(f"\nPreparing a service with {queries:,} queries …", flush=True)
        database_url, key, project_id, tag_id = seed(directory, queries)
        service = start_service(database_url, directory)
        api_url = service.url
        app = create_app({"API_URL": api_url, "INSTANCE_PATH": str(directory / "instance"),
                          "SECRET_KEY": "bench", "TESTING": False,
                          "BULK_PIPELINE": pipeline})
        client = app.test_client()
        page = client.get("/signin").get_data(as_text=True)
        client.post("/signin", data={"csrf_token": CSRF.search(page).group(1),
                                     "api_key": key, "display_name": "Bench"})
        view = client.get(f"/projects/{project_id}/queries").get_data(as_text=True)
        token = CSRF.search(view).group(1)
        headers = {"HX-Request": "true", "X-CSRFToken": token}
        asked = client.post(f"/projects/{project_id}/bulk", headers=headers, data={
            "action": "add", "apply_tag": str(tag_id), "scope": "all"})
        plan = PLAN.search(asked.get_data(as_text=True)).group(1).replace("&#34;", '"')
        time.sleep(1.1)  # the calls above leave the per-second window
        store: Store = app.extensions["tagdesk_jobs"]

        samples = [rss_kib()]
        stop = threading.Event()

        def sample():
            while not stop.wait(0.02):
                samples.append(rss_kib())

        sampler = threading.Thread(target=sample, daemon=True)
        before = rss_kib()
        sampler.start()
        client.post(f"/projects/{project_id}/bulk/confirm", headers=headers,
                    data={"plan": plan})
        edit = store.for_project(project_id, limit=1)[0]
        while store.get(edit.id).state in ("queued", "running"):
            time.sleep(0.02)
        stop.set()
        sampler.join()
        edit = store.get(edit.id)
        app.extensions["tagdesk_runner"].shutdown(wait=True)

        with Client(api_url, key) as api:
            tagged = api.list_queries(project_id, __import__("queryapi").QueryFilters(
                tag_ids=(tag_id,)), limit=1).page.total_records
        wall = edit.finished_at - edit.started_at
        needed = 2 * math.ceil(queries / 1000)
        per_second = DEFAULT_LIMITS[0]
        floor_rate = edit.requests / per_second
        floor_needed = needed / per_second
        floor_window = rate_limit_floor(edit.requests, DEFAULT_LIMITS)
        peak = max(samples)
        print(f"mode                   {'pipelined' if pipeline else 'sequential'} calls")
        print(f"queries                {queries:,} (tagged afterwards: {tagged:,}; "
              f"job: {edit.changed:,} changed)")
        print(f"limits                 {DEFAULT_LIMITS[0]}/s, {DEFAULT_LIMITS[1]}/min, "
              f"{DEFAULT_LIMITS[2]:,}/h")
        print(f"calls made             {edit.requests} (fewest possible: {needed}; "
              f"batches: {edit.batches})")
        print(f"429s received          {edit.rate_limited}")
        print(f"job wall time          {wall:.2f} s")
        print(f"floor: calls ÷ rate    {floor_rate:.2f} s   -> wall / floor = "
              f"{wall / floor_rate:.3f}")
        print(f"floor: fewest ÷ rate   {floor_needed:.2f} s   -> wall / floor = "
              f"{wall / floor_needed:.3f}")
        print(f"floor: sliding windows {floor_window:.2f} s   -> wall / floor = "
              f"{wall / floor_window:.3f}" if floor_window else "")
        print(f"memory (RSS)           {before / 1024:.1f} MiB before, "
              f"{peak / 1024:.1f} MiB peak during the job (+{(peak - before) / 1024:.1f} MiB)")

        # The same view exported as CSV, streamed page by page. Its calls share the
        # organization's windows with the job's: when both would not fit in one minute's
        # window, wait until the job's calls have left it, so that the export meets its own
        # floor and not the job's (else 100,000 queries measured the minute window: 36 s).
        export_calls = 1 + math.ceil(queries / 1000)
        if edit.requests + export_calls > DEFAULT_LIMITS[1]:
            time.sleep(max(0.0, edit.started_at + 61 - time.time()))
        time.sleep(1.1)
        samples[:] = [rss_kib()]
        stop.clear()
        sampler = threading.Thread(target=sample, daemon=True)
        before_export = rss_kib()
        sampler.start()
        started = time.perf_counter()
        download = client.get(f"/projects/{project_id}/export.csv", buffered=False)
        size = lines = 0
        for chunk in download.response:
            size += len(chunk)
            lines += chunk.count(b"\n") if isinstance(chunk, bytes) else chunk.count("\n")
        download.close()
        export_wall = time.perf_counter() - started
        stop.set()
        sampler.join()
        print(f"export (streamed CSV)  {lines - 1:,} rows, {size / 1e6:.1f} MB in "
              f"{export_wall:.2f} s (floor {export_calls} calls ÷ rate = "
              f"{export_calls / per_second:.2f} s); memory {before_export / 1024:.1f} MiB "
              f"before, {max(samples) / 1024:.1f} MiB peak "
              f"(+{(max(samples) - before_export) / 1024:.1f} MiB)")
        Store.forget(app.config["JOBS_DATABASE_URL"])
        return (tagged == queries and edit.rate_limited == 0 and edit.state == "done"
                and lines - 1 == queries)
    finally:
        if service is not None:
            service.stop()
        if keep:
            print(f"(kept {directory})")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[10_000])
    parser.add_argument("--keep", action="store_true", help="keep the temporary files")
    parser.add_argument("--sequential", action="store_true",
                        help="no overlap of the job's reads and writes (BULK_PIPELINE off; "
                             "the dashboard's default is on)")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    ok = all([run(count, args.keep, not args.sequential) for count in args.queries])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
