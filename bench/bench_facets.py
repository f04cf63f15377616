"""The service's queries/facets against Datasette's facet page, on the same rows.

    uv run python bench/bench_facets.py --queries 1000000
    uv run python bench/bench_facets.py --queries 100000 --runs 5         # a quick check
    uv run python bench/bench_facets.py --database-url sqlite:////tmp/x.sqlite3
    uv run python bench/bench_facets.py --floor     # where one shape's time goes

The service's database is the one bench_service.py uses (/tmp/tagdesk-bench-<queries>.sqlite3,
seeded with `seed-demo` when it has no organization yet); it runs under gunicorn (1 worker,
4 threads). Datasette cannot facet the service's normalized tags (a link table), so its copy
is one table `queries(pk, query, language, country, tags)` of the largest project, `tags` a
JSON array of tag names ('[]' for none), with indexes on language and country and a trigram
full-text index on query (sqlite-utils). The copy is built once, next to the source
(/tmp/tagdesk-bench-<queries>-datasette.sqlite3), and again whenever the source's project
has changed (its row and link counts, largest key and engine stamp, kept in the copy's
user_version). Datasette serves it with limits that let every facet finish (facet and SQL
time limits of 60 s, 1,000 rows) and answers its table page as JSON:
`queries.json?_size=0&_facet=language&_facet=country&_facet_array=tags&_facet_size=max`
plus the filters (`_nosuggest=1`: the service suggests no facets either). The text filter is
Datasette's full-text search (`_search`), the tag filters `tags__arraycontains`,
`tags__arraynotcontains` and `tags__exact=[]`.

Each shape is checked first: the service's totalRecords against Datasette's
filtered_table_rows_count, and each field's counts where both mean the same (the service's
counts are disjunctive, Datasette's are not: a field's counts are compared only when the
shape does not filter on it); a mismatch or a timed-out facet is printed loudly. Then the two
systems are asked in turn, the first of each round rotating, after a warm-up. Figures: p50
and p95 of sequential requests in ms (a timing covers the request and the decoding of its
JSON body), and the server's CPU time per request. Both systems are asked over a kept-alive
connection of their own with http.client (bench/loadkit.py's KeptAlive): requests' own work,
~1.3 ms a call on the machine of docs/benchmarks.md, was a quarter of the service's time.

`--floor` times, for the shape FLOOR_SHAPE, requests that do less and less of the service's
work, each asked right after Datasette's answer to that shape (as the service's facets are in
the rounds): a bare WSGI callable and an empty Flask app under the same gunicorn
(bench/floor_apps.py), the service refusing a request without a key (no database), an
authenticated request that counts nothing (projects/list), then the facets, and the facets
again at once (warm).
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sqlite_utils  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench import bench_datasette  # noqa: E402
from bench.bench_service import load_average, prepare, start_service  # noqa: E402
from bench.loadkit import HTTPFailure, KeptAlive, free_port, percentile, serve  # noqa: E402

SERVICE, DATASETTE = "service", "Datasette"
TEXT = "schu"
FACETS = [("_size", "0"), ("_facet", "language"), ("_facet", "country"),
          ("_facet_array", "tags"), ("_facet_size", "max"), ("_nosuggest", "1")]
DATASETTE_SETTINGS = {"facet_time_limit_ms": "60000", "sql_time_limit_ms": "60000",
                      "max_returned_rows": "1000"}
TARGETS = "facets p95 ≤ 50 ms; ≤ 0.05× Datasette"
TARGET_MS, TARGET_RATIO = 50.0, 0.05
FLOOR_SHAPE = "untagged + language + text"


def fingerprint(source: Path, project_id: str) -> int:
    """What the copy is of: the project's rows, links, largest key and engine stamp."""
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as connection:
        found = connection.execute(
            "SELECT (SELECT count(*) FROM queries WHERE project_id = :p),"
            " (SELECT max(pk) FROM queries WHERE project_id = :p),"
            " (SELECT count(*) FROM query_tags qt JOIN tags t ON t.id = qt.tag_id"
            "  WHERE t.project_id = :p),"
            " (SELECT engine_stamp FROM projects WHERE id = :p)", {"p": project_id}).fetchone()
    connection.close()
    return zlib.crc32(repr((str(source), project_id, *found)).encode()) & 0x7FFFFFFF


def datasette_copy(source: Path, project_id: str) -> Path:
    """The project's queries as Datasette can facet them, built unless already current."""
    target = source.with_name(f"{source.stem}-datasette.sqlite3")
    wanted = fingerprint(source, project_id)
    if target.exists():
        with sqlite3.connect(target) as connection:
            current = connection.execute("PRAGMA user_version").fetchone()[0]
        connection.close()
        if current == wanted:
            print(f"Datasette's copy: {target} (current)")
            return target
    started = time.perf_counter()
    building = target.with_name(target.name + ".building")
    building.unlink(missing_ok=True)
    connection = sqlite3.connect(f"file:{building}?mode=rwc", uri=True)
    try:
        connection.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        connection.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
        connection.executescript(
            "CREATE TABLE queries (pk INTEGER PRIMARY KEY, query TEXT, language TEXT,"
            " country TEXT, tags TEXT);")
        connection.execute(
            "INSERT INTO queries SELECT q.pk, q.query, q.language, q.country,"
            " CASE WHEN count(t.name) = 0 THEN '[]' ELSE json_group_array(t.name) END"
            " FROM src.queries q"
            " LEFT JOIN src.query_tags qt ON qt.query_pk = q.pk"
            " LEFT JOIN src.tags t ON t.id = qt.tag_id"
            " WHERE q.project_id = ? GROUP BY q.pk ORDER BY q.pk", (project_id,))
        connection.commit()
        connection.execute("DETACH DATABASE src")
        connection.executescript(
            "CREATE INDEX idx_queries_language ON queries (language);"
            " CREATE INDEX idx_queries_country ON queries (country);")
        sqlite_utils.Database(connection)["queries"].enable_fts(["query"], tokenize="trigram")
        connection.execute("ANALYZE")
        connection.execute(f"PRAGMA user_version = {wanted}")
        connection.commit()
        rows = connection.execute("SELECT count(*) FROM queries").fetchone()[0]
    finally:
        connection.close()
    os.replace(building, target)
    print(f"Datasette's copy: {target}, {rows:,} rows, built in "
          f"{time.perf_counter() - started:.1f} s")
    return target


def start_datasette_with_settings(path: Path, port: int) -> subprocess.Popen:
    settings = [part for name, value in DATASETTE_SETTINGS.items()
                for part in ("--setting", name, value)]
    return bench_datasette.start_datasette(path, port, *settings)


def shapes(popularity: list) -> dict[str, tuple[dict, list[tuple[str, str]]]]:
    """Each shape as (the service's filter body, Datasette's filter parameters)."""
    (common_id, common, common_count), (second_id, second, _) = popularity[0], popularity[1]
    rare_id, rare, rare_count = popularity[-1]
    codes = [("language", "de"), ("country", "DE")]
    return {
        "unfiltered": ({}, []),
        "language de": ({"languages": ["de"]}, [("language", "de")]),
        "language + country (de, DE)": ({"languages": ["de"], "countries": ["DE"]}, codes),
        f"one tag (common, {common_count:,})": (
            {"tagIds": [common_id]}, [("tags__arraycontains", common)]),
        f"one tag (rare, {rare_count:,})": (
            {"tagIds": [rare_id]}, [("tags__arraycontains", rare)]),
        f"substring '{TEXT}'": ({"query": TEXT}, [("_search", TEXT)]),
        "text + codes + tag": (
            {"query": TEXT, "languages": ["de"], "countries": ["DE"], "tagIds": [common_id]},
            [("_search", TEXT), *codes, ("tags__arraycontains", common)]),
        "untagged": ({"untagged": True}, [("tags__exact", "[]")]),
        "untagged + language + text": (
            {"untagged": True, "languages": ["de"], "query": TEXT},
            [("tags__exact", "[]"), ("language", "de"), ("_search", TEXT)]),
        "exclude one tag (common)": (
            {"excludeTagIds": [common_id]}, [("tags__arraynotcontains", common)]),
        "all of two tags (most common)": (
            {"tagIds": [common_id, second_id], "tagMatch": "all"},
            [("tags__arraycontains", common), ("tags__arraycontains", second)]),
    }


class Systems:
    """The two systems' calls for a shape, each over a kept-alive connection of its own."""

    def __init__(self, service_base: str, key: str, project_id: str, datasette_base: str,
                 datasette_path: str) -> None:
        self.service = KeptAlive(service_base, {"x-api-key": key, "x-project-id": project_id})
        self.datasette = KeptAlive(datasette_base)
        self.datasette_path = datasette_path

    def calls(self, body: dict, parameters: list[tuple[str, str]]) -> dict:
        def service() -> dict:
            return self.service.post("/api/queries/facets", body)

        def datasette() -> dict:
            return self.datasette.get(self.datasette_path, FACETS + parameters)

        return {SERVICE: service, DATASETTE: datasette}


def timed_out(answer: dict) -> list[str]:
    """Datasette's facets that gave up or are missing."""
    missing = [name for name in ("language", "country", "tags")
               if name not in answer.get("facet_results", {})]
    return sorted(set(answer.get("facets_timed_out") or []) | set(missing))


def compare(body: dict, ours: dict, theirs: dict, tag_names: dict[int, str]) -> list[str]:
    """What differs between the two answers, where they mean the same thing."""
    differences = []
    if ours["totalRecords"] != theirs["filtered_table_rows_count"]:
        differences.append(f"totalRecords {ours['totalRecords']:,} against Datasette's "
                           f"{theirs['filtered_table_rows_count']:,}")
    results = theirs.get("facet_results", {})
    tag_filtered = any(body.get(field) for field in (
        "tagIds", "tagNames", "excludeTagIds", "excludeTagNames", "untagged"))
    fields = [("languages", "language", "value", not body.get("languages")),
              ("countries", "country", "value", not body.get("countries")),
              ("tags", "tags", "id", not tag_filtered)]
    for field, column, key, comparable in fields:
        if not comparable or column not in results:
            continue
        counts = {(tag_names.get(item[key], f"#{item[key]}") if key == "id" else item[key]):
                  item["count"] for item in ours[field] if item["count"]}
        their_counts = {item["value"]: item["count"] for item in results[column]["results"]}
        if counts != their_counts:
            wrong = sorted(value for value in counts.keys() | their_counts.keys()
                           if counts.get(value) != their_counts.get(value))
            differences.append(f"{field}: {len(wrong)} values differ, e.g. " + ", ".join(
                f"{value}: {counts.get(value, 0):,} against {their_counts.get(value, 0):,}"
                for value in wrong[:3]))
    return differences


def start_floor_app(app: str, port: int) -> subprocess.Popen:
    """One of bench/floor_apps.py's servers under gunicorn as start_service runs the service."""
    return serve(
        [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-w", "1", "--threads", "4",
         "--log-level", "warning", f"bench.floor_apps:{app}"], f"http://127.0.0.1:{port}/",
        app, cwd=ROOT)


def floor(systems: Systems, service_base: str, project_id: str, shape: tuple,
          runs: int, warm_up: int) -> None:
    """FLOOR_SHAPE's time taken apart (see the module's docstring)."""
    body, parameters = shape
    ports = {"bare": free_port(), "flask_app": free_port()}
    servers = {app: start_floor_app(app, port) for app, port in ports.items()}
    try:
        bare, flask = (KeptAlive(f"http://127.0.0.1:{ports[app]}") for app in ports)
        keyless = KeptAlive(service_base, {"x-project-id": project_id})

        def refused() -> None:
            try:
                keyless.post("/api/queries/facets", body)
            except HTTPFailure as failure:
                assert failure.status == 401, failure
            else:
                raise AssertionError("a request without a key was answered")

        facets = systems.calls(body, parameters)[SERVICE]
        probes = {
            "bare WSGI callable, same gunicorn": lambda: bare.get("/"),
            "empty Flask app, same gunicorn": lambda: flask.get("/"),
            "service: refused, no key (no database)": refused,
            "service: projects/list (authenticated, counts nothing)":
                lambda: systems.service.get("/api/projects/list"),
            "service: facets": facets,
        }
        datasette = systems.calls(body, parameters)[DATASETTE]
        for _ in range(warm_up):
            for probe in probes.values():
                datasette(), probe()
        timings = {name: [] for name in [*probes, "service: facets again at once (warm)"]}
        theirs = []
        for _ in range(runs):
            for name, probe in probes.items():
                started = time.perf_counter()
                datasette()
                theirs.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                probe()
                timings[name].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            facets()
            timings["service: facets again at once (warm)"].append(
                (time.perf_counter() - started) * 1000)
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(10)
    their_p95 = percentile(theirs, 0.95)
    print(f"\n{FLOOR_SHAPE}, each request right after {DATASETTE}'s answer ({runs} each; "
          f"{DATASETTE} p50 {statistics.median(theirs):.1f} / p95 {their_p95:.1f} ms, so "
          f"{TARGET_RATIO:g}× is {TARGET_RATIO * their_p95:.2f} ms)\n")
    print("| request | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for name, values in timings.items():
        print(f"| {name} | {statistics.median(values):.2f} | {percentile(values, 0.95):.2f} |")


def run_shape(calls: dict, cpu: dict, runs: int, warm_up: int):
    """The systems in turn (`rounds`). A failed request is counted; so is a Datasette answer
    with a facet that timed out."""
    timings, cpu_ms, outcomes = bench_datasette.rounds(calls, cpu, runs, warm_up, attempt)
    problems = {name: [] for name in outcomes}
    for name, results in outcomes.items():
        for answer, error in results:
            if error:
                problems[name].append(error)
            elif name == DATASETTE and timed_out(answer):
                problems[name].append("facets timed out: " + ", ".join(timed_out(answer)))
    return timings, cpu_ms, problems


def attempt(call) -> tuple[dict | None, str | None]:
    try:
        return call(), None
    except HTTPFailure as error:
        return None, str(error)


def revision() -> str:
    changed = bench_datasette.git("status", "--porcelain", "--", "service")
    return bench_datasette.git("rev-parse", "--short", "HEAD") + (
        " with uncommitted changes in service/" if changed else "")


def machine() -> str:
    return (f"{platform.platform()}, {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores; Python {platform.python_version()}, SQLite "
            f"{sqlite3.sqlite_version}, {bench_datasette.datasette_version()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--database-url",
                        help="SQLite URL (default sqlite:////tmp/tagdesk-bench-<queries>.sqlite3)")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warm-up", type=int, default=3)
    parser.add_argument("--floor", action="store_true",
                        help=f"take the time of {FLOOR_SHAPE!r} apart instead")
    args = parser.parse_args()

    url = args.database_url or f"sqlite:////tmp/tagdesk-bench-{args.queries}.sqlite3"
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        sys.exit("Datasette reads SQLite files only: give a sqlite:/// URL of a file")
    source = Path(parsed.database)
    print(f"load average before: {load_average()}")
    print(f"machine: {machine()}")
    print(f"git revision: {revision()}")
    print(f"database: {source}")
    key, project_id, total, popularity = prepare(url, args.queries)
    if len(popularity) < 2:
        sys.exit("the largest project needs at least two tags in use")
    tag_names = {tag_id: name for tag_id, name, _count in popularity}
    print(f"project: {total:,} queries, {len(popularity)} tags in use; common tag "
          f"{popularity[0][1]!r} on {popularity[0][2]:,}, rare tag {popularity[-1][1]!r} on "
          f"{popularity[-1][2]:,}")
    copy = datasette_copy(source, project_id)

    service_port, datasette_port = free_port(), free_port()
    service = start_service(url, service_port)
    datasette = start_datasette_with_settings(copy, datasette_port)
    systems = Systems(f"http://127.0.0.1:{service_port}", key, project_id,
                      f"http://127.0.0.1:{datasette_port}", f"/{copy.stem}/queries.json")
    cpu = {SERVICE: lambda: bench_datasette.process_cpu_ms(service.pid),
           DATASETTE: lambda: bench_datasette.process_cpu_ms(datasette.pid)}
    rows, alarms = [], []
    try:
        if args.floor:
            floor(systems, f"http://127.0.0.1:{service_port}", project_id,
                  shapes(popularity)[FLOOR_SHAPE], args.runs, args.warm_up)
            print(f"\nload average after: {load_average()}")
            return
        for name, (body, parameters) in shapes(popularity).items():
            calls = systems.calls(body, parameters)
            ours, theirs = calls[SERVICE](), calls[DATASETTE]()
            notes = compare(body, ours, theirs, tag_names)
            if timed_out(theirs):
                notes.append("Datasette's facets timed out: " + ", ".join(timed_out(theirs)))
            for note in notes:
                alarm = f"!!! {name}: MISMATCH: {note}" if "timed out" not in note else \
                    f"!!! {name}: {note}"
                alarms.append(alarm)
                print(alarm, flush=True)
            timings, cpu_ms, problems = run_shape(calls, cpu, args.runs, args.warm_up)
            print(f"\n{name}: {ours['totalRecords']:,} matches "
                  f"({'agree' if not notes else 'DIFFER'}), {args.runs} requests each")
            figures = {}
            for system, values in timings.items():
                p50, p95 = statistics.median(values), percentile(values, 0.95)
                figures[system] = (p50, p95)
                failed = problems[system]
                print(f"  {system:<10} p50 {p50:8.1f} ms   p95 {p95:8.1f} ms   server CPU "
                      f"{cpu_ms[system]:7.1f} ms" + (
                          f"   {len(failed)} failed: {failed[0]}" if failed else ""), flush=True)
                if failed:
                    alarms.append(f"!!! {name}: {system}: {len(failed)} of {args.runs} timed "
                                  f"requests failed: {failed[0]}")
            rows.append((name, ours["totalRecords"], not notes, figures))
    finally:
        for process in (service, datasette):
            process.terminate()
            process.wait(10)

    print(f"\nload average after: {load_average()}")
    print(f"git revision after the run: {revision()}")
    print(f"targets: {TARGETS}")
    print(f"\n| shape | matches | service facets p50 / p95 ms | {DATASETTE} p50 / p95 ms "
          "| ratio p95 (service / Datasette) |")
    print("|---|---:|---:|---:|---:|")
    met_ms = met_ratio = 0
    for name, matches, agree, figures in rows:
        (p50, p95), (their_p50, their_p95) = figures[SERVICE], figures[DATASETTE]
        ratio = p95 / their_p95
        met_ms += p95 <= TARGET_MS
        met_ratio += ratio <= TARGET_RATIO
        print(f"| {name} | {matches:,}{'' if agree else ' MISMATCH'} | {p50:.1f} / {p95:.1f} "
              f"| {their_p50:.1f} / {their_p95:.1f} | {ratio:.3f} |")
    print(f"\nservice p95 ≤ {TARGET_MS:g} ms: {met_ms} of {len(rows)} shapes; "
          f"ratio ≤ {TARGET_RATIO:g}: {met_ratio} of {len(rows)} shapes")
    if alarms:
        print(f"\n{len(alarms)} problems (see above):")
        for alarm in alarms:
            print(alarm)


if __name__ == "__main__":
    main()
