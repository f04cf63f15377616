"""The service's queries/list against Datasette's JSON table API, on the same SQLite rows.

    uv run python bench/bench_datasette.py --queries 1000000
    uv run python bench/bench_datasette.py --database /tmp/x.sqlite3 --runs 100
    uv run python bench/bench_datasette.py --only "rare" --runs 300    # one view, more requests

The database is the one bench_service.py uses (seeded with `seed-demo` when it has no
organization yet). The service runs under gunicorn (1 worker, 4 threads); Datasette serves the
same file with `datasette serve` (its defaults: read-only connections, 3 SQL threads). The
service keeps no full-text table (its count engine's bitmaps are its own), so Datasette's text
filter is its `query__contains` (LIKE, which folds ASCII case as the service folds these
ASCII terms). Nothing is written to the database for Datasette.

Each view of the largest project is asked of four systems in turn, the first of each round
rotating: the service, which always returns an exact `totalRecords`; Datasette as shipped
(exact `count(*)` under its 1 s SQL time limit, plus facet suggestions); Datasette with
`_nofacet=1` (the count, no facets); and Datasette with `_nocount=1&_nofacet=1` (rows only).
Every view checks first that both systems return the same rows and the same total. Figures:
p50 and p95 of sequential requests after a warm-up (a timing covers the request and the
decoding of its JSON body), and the server's CPU time per request, which drifts far less than
wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from bench.bench_service import prepare, start_service  # noqa: E402
from bench.loadkit import free_port, percentile, serve  # noqa: E402

SERVICE = "service"
DATASETTE_SYSTEMS = {
    "Datasette, defaults": {},
    "Datasette, _nofacet": {"_nofacet": "1"},
    "Datasette, _nocount _nofacet": {"_nocount": "1", "_nofacet": "1"},
}
PAGE = 50
DATASETTE_COMMAND = Path(sys.executable).with_name("datasette")


def datasette_metadata(database: str, directory: Path) -> Path:
    """Datasette's metadata: nothing of its own for the service's tables."""
    path = directory / "metadata.json"
    path.write_text(json.dumps({"databases": {database: {}}}))
    return path


def start_datasette(path: Path, port: int, *options: str) -> subprocess.Popen:
    """Datasette serving `path` on `port`, with more of `datasette serve`'s `options`."""
    return serve([str(DATASETTE_COMMAND), "serve", str(path), "--host", "127.0.0.1",
                  "--port", str(port), *options],
                 f"http://127.0.0.1:{port}/-/versions.json", "Datasette",
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def views(project_id: str, common_tag, rare_tag) -> dict[str, tuple[dict, dict]]:
    """Each view as (service body, Datasette query string). The service's default order is
    updatedAt DESC, so Datasette is asked for `_sort_desc=updated_at`."""
    project = {"project_id": project_id}
    newest = {**project, "_sort_desc": "updated_at"}

    def through(tag_id: int) -> dict:
        # Datasette 0.65 names the `_through` parameter p0 whatever the column filters have
        # already named p0, so `project_id=…&_through=…` silently matches nothing; the
        # project goes in as `_where=` instead (same SQL as a correct filter would give).
        return {"_where": f"project_id = '{project_id}'", "_sort_desc": "updated_at",
                "_through": json.dumps(
                    {"table": "query_tags", "column": "tag_id", "value": str(tag_id)})}

    return {
        "first page, no filter": ({}, newest),
        "language + country": (
            {"languages": ["de"], "countries": ["DE"]},
            {"language": "de", "country": "DE", **newest}),
        f"one tag (common, {common_tag[2]:,})": (
            {"tagIds": [common_tag[0]]}, through(common_tag[0])),
        f"one tag (rare, {rare_tag[2]:,})": (
            {"tagIds": [rare_tag[0]]}, through(rare_tag[0])),
        "substring 'schu'": ({"query": "schu"}, {"query__contains": "schu", **newest}),
        "sorted by query text": (
            {"sort": [{"field": "query", "direction": "ASC"}]}, {**project, "_sort": "query"}),
    }


class Systems:
    """One callable per system for a view; each returns (texts on the page, total or None).
    The service is asked at `endpoint` (another benchmark's subclass asks another)."""

    endpoint = "/api/queries/list"

    def __init__(self, service_base: str, key: str, project_id: str, datasette_table: str):
        self.service_url = service_base + self.endpoint
        self.service = requests.Session()
        self.service.headers.update({"x-api-key": key, "x-project-id": project_id})
        self.datasette_url = datasette_table
        self.datasette = requests.Session()

    def calls(self, body: dict, query: dict) -> dict:
        def service():
            response = self.service.post(self.service_url, json={"limit": PAGE, **body})
            response.raise_for_status()
            data = response.json()
            return [sort_key(r["query"], r["updatedAt"]) for r in data["results"]], \
                data["page"]["totalRecords"]

        def datasette(extra: dict):
            params = {"_size": str(PAGE), "_shape": "objects", **query, **extra}

            def call():
                response = self.datasette.get(self.datasette_url, params=params)
                response.raise_for_status()
                data = response.json()
                # Stored as '2026-11-21 14:44:43.262000'; the API writes '…T14:44:43.262Z'.
                return [sort_key(r["query"], r["updated_at"][:23].replace(" ", "T") + "Z")
                        for r in data["rows"]], data["filtered_table_rows_count"]
            return call

        return {SERVICE: service,
                **{name: datasette(extra) for name, extra in DATASETTE_SYSTEMS.items()}}


def sort_key(text: str, updated_at: str) -> tuple[str, str]:
    return text, updated_at


def check_equivalent(name: str, calls: dict, by_text: bool) -> int:
    """Same total, and the same sort keys page for page. Rows that tie on the sort key may
    differ: the service breaks ties by id, Datasette sorts on one column only."""
    ours, total = calls[SERVICE]()
    for _ in range(3):  # Datasette answers 400 when a statement passes its time limit
        try:
            theirs, counted = calls["Datasette, _nofacet"]()
            break
        except requests.HTTPError:
            continue
    else:
        raise SystemExit(f"{name}: Datasette failed three times")
    position = 0 if by_text else 1
    if [k[position] for k in ours] != [k[position] for k in theirs] or not ours:
        raise SystemExit(f"{name}: the service and Datasette return different pages")
    if counted is not None and counted != total:
        raise SystemExit(f"{name}: totals differ ({total:,} against {counted:,})")
    return total


def rounds(calls: dict, cpu: dict, runs: int, warm_up: int, attempt):
    """Round-robin over the systems, the first of each round rotating, so that drift on a
    shared machine reaches every system alike; `attempt(call)` makes one request and gives
    (answer, error), so a failed request is timed like any other. Each request's server CPU
    time is read around it from /proc (whole clock ticks, so only the sum over a view means
    anything). Returns each system's timings in ms, its server CPU ms per request and its
    (answer, error) of each request."""
    names = list(calls)
    for _ in range(warm_up):
        for name in names:
            attempt(calls[name])
    timings = {name: [] for name in names}
    cpu_ms = dict.fromkeys(names, 0.0)
    outcomes = {name: [] for name in names}
    for round_number in range(runs):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            cpu_before = cpu[name]()
            started = time.perf_counter()
            outcome = attempt(calls[name])
            timings[name].append((time.perf_counter() - started) * 1000)
            cpu_ms[name] += cpu[name]() - cpu_before
            outcomes[name].append(outcome)
    return timings, {name: ms / runs for name, ms in cpu_ms.items()}, outcomes


def run_view(calls: dict, cpu: dict, runs: int, warm_up: int):
    """The systems in turn (`rounds`); each system's totals returned and its failed requests
    (Datasette answers 400 when a statement passes its SQL time limit)."""
    timings, cpu_ms, outcomes = rounds(calls, cpu, runs, warm_up, attempt)
    totals = {name: {total for total, error in results if not error}
              for name, results in outcomes.items()}
    errors = {name: [error for _, error in results if error]
              for name, results in outcomes.items()}
    return timings, cpu_ms, totals, errors


def process_cpu_ms(pid: int) -> float:
    """User + system CPU of a process and its children (gunicorn's worker), in ms."""
    total, pids = 0.0, [pid]
    while pids:
        current = pids.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
        pids += [int(child) for child in children]
    return total


def attempt(call) -> tuple[int | None, str | None]:
    try:
        return call()[1], None
    except requests.HTTPError as error:
        try:
            reason = error.response.json().get("error", "")
        except ValueError:
            reason = error.response.text[:80]
        return None, f"{error.response.status_code} {reason}".strip()


def describe_count(values: set) -> str:
    """None is Datasette's answer when `_nocount` is given or its count passed the time limit."""
    if not values:
        return "-"
    if values == {None}:
        return "none"
    counted = ", ".join(f"{v:,}" for v in sorted(v for v in values if v is not None))
    return f"{counted} or none (count timed out)" if None in values else counted


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def service_version() -> str:
    """The last commit that changed the service's code, and whether the code differs from it."""
    changed = git("status", "--porcelain", "--", "service")
    last = git("log", "-1", "--format=%h", "--", "service")
    return last + (" with uncommitted changes in service/" if changed else "")


def machine() -> str:
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores, Python {platform.python_version()}, SQLite "
            f"{sqlite3.sqlite_version}, {datasette_version()}; load average {load[0]:.2f}")


def datasette_version() -> str:
    return subprocess.run([str(DATASETTE_COMMAND), "--version"], capture_output=True,
                          text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--database", type=Path,
                        help="SQLite file (default /tmp/tagdesk-bench-<queries>.sqlite3)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warm-up", type=int, default=5)
    parser.add_argument("--only", help="run only the views whose name contains this text")
    args = parser.parse_args()

    path = args.database or Path(f"/tmp/tagdesk-bench-{args.queries}.sqlite3")
    url = f"sqlite:///{path}"
    print(f"database: {path}")
    key, project_id, total, popularity = prepare(url, args.queries)
    common_tag, rare_tag = popularity[0], popularity[-1]
    print(f"project: {total:,} queries; common tag {common_tag[1]!r} on {common_tag[2]:,}, "
          f"rare tag {rare_tag[1]!r} on {rare_tag[2]:,}")
    print(f"machine: {machine()}")
    print(f"service code: {service_version()}")

    with tempfile.TemporaryDirectory() as directory:
        metadata = datasette_metadata(path.stem, Path(directory))
        service_port, datasette_port = free_port(), free_port()
        service = start_service(url, service_port)
        datasette = start_datasette(path, datasette_port, "--metadata", str(metadata))
        systems = Systems(f"http://127.0.0.1:{service_port}", key, project_id,
                          f"http://127.0.0.1:{datasette_port}/{path.stem}/queries.json")
        cpu = {SERVICE: lambda: process_cpu_ms(service.pid),
               **dict.fromkeys(DATASETTE_SYSTEMS, lambda: process_cpu_ms(datasette.pid))}
        summary = []
        try:
            for name, (body, query) in views(project_id, common_tag, rare_tag).items():
                if args.only and args.only not in name:
                    continue
                calls = systems.calls(body, query)
                matches = check_equivalent(name, calls, by_text="_sort" in query)
                timings, cpu_ms, counts, errors = run_view(calls, cpu, args.runs, args.warm_up)
                print(f"\n{name}: {matches:,} matches, {args.runs} requests per system")
                print(f"  {'system':<30}{'p50 ms':>8}{'p95 ms':>8}{'ratio p50':>11}{'p95':>6}"
                      f"{'server CPU ms':>15}   total returned")
                ours = timings[SERVICE]
                for system, values in timings.items():
                    p50, p95 = statistics.median(values), percentile(values, 0.95)
                    ratios = ("" if system == SERVICE else
                              f"{statistics.median(ours) / p50:>11.2f}"
                              f"{percentile(ours, 0.95) / p95:>6.2f}")
                    failed = errors[system]
                    print(f"  {system:<30}{p50:>8.1f}{p95:>8.1f}{ratios:>17}"
                          f"{cpu_ms[system]:>15.1f}   {describe_count(counts[system])}"
                          + (f"; {len(failed)} failed: {failed[0]}" if failed else ""))
                    summary.append((name, system, p50, p95, cpu_ms[system]))
        finally:
            for process in (service, datasette):
                process.terminate()
                process.wait(10)

    print(f"\nmachine after the run: {machine()}")
    print(f"service code after the run: {service_version()}")
    print("\nratio = service / Datasette; CPU = server CPU ms per request")
    print("\n| view | service p50 / p95 (CPU) | " + " | ".join(
        f"{system} p50 / p95 (CPU) | ratio p50 / p95" for system in DATASETTE_SYSTEMS) + " |")
    print("|---|---:|" + "---:|---:|" * len(DATASETTE_SYSTEMS))
    by_view: dict[str, dict] = {}
    for name, system, p50, p95, cpu_ms in summary:
        by_view.setdefault(name, {})[system] = (p50, p95, cpu_ms)
    for name, figures in by_view.items():
        ours = figures[SERVICE]
        cells = [f"{ours[0]:.1f} / {ours[1]:.1f} ({ours[2]:.0f})"]
        for system in DATASETTE_SYSTEMS:
            p50, p95, cpu_ms = figures[system]
            cells += [f"{p50:.1f} / {p95:.1f} ({cpu_ms:.0f})",
                      f"{ours[0] / p50:.2f} / {ours[1] / p95:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
