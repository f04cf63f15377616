"""The numbers per query at scale: pages sorted by each number, facets with sums, "clicks per
tag" against Datasette and pandas, and the memory the numbers' bitmaps take.

    uv run --with pandas python bench/bench_numbers.py --queries 1000000
    uv run --with pandas python bench/bench_numbers.py --queries 1000000 --postgres
    uv run python bench/bench_numbers.py --queries 100000 --runs 5      # a quick check
    uv run python bench/bench_numbers.py --postgres --queries 10000000 --parts 1 --settle 120

The service's database is the one bench_service.py uses (/tmp/tagdesk-bench-<queries>.sqlite3,
or tagdesk_bench_<queries> on PostgreSQL with `--postgres`), seeded with `seed-demo` when it
has no organization yet: every query of the demo carries the numbers a Search Console and a
keyword tool give (service/demo/demo_data.py). The service runs under gunicorn (1 worker,
4 threads) and is asked over a kept-alive connection (bench/loadkit.py's KeptAlive); figures
are p50 and p95 of sequential requests after a warm-up, and the server's CPU per request.

1. Sorted pages: queries/list (50 results, `include: ["metrics"]`, as a page showing the
   numbers asks) under each filter of FILTERS, page 1 and page 200, sorted by each number in
   both directions and, as the anchor, by updatedAt (the default order): the fifteen orders of
   a filter and page asked in turn, the first of each round rotating. Each page is checked
   first: its numbers in order, unknown ones last.
2. Facets with three sums (clicks, impressions, volume) and the same facets without, in turn,
   for each filter; before them, once, the sums as computed (they are then kept until the
   next write).
3. "Clicks per tag", the whole project: the service's facets with the three sums; Datasette
   (SQLite only) on a copy of the project's rows in one table (`tags` a JSON array, with the
   clicks, impressions and volume columns), its facet page (`_facet_array=tags`: counts only)
   and its JSON SQL endpoint summing over `json_each(tags)`; pandas' groupby on a DataFrame of
   the rows exploded by tag, loaded beforehand and timed in this process (needs pandas: run
   with `uv run --with pandas`). The per-tag sums are checked equal across the three.
4. Memory: the numbers' bitmaps (kind 6) a process holds for the project, read here as the
   service reads them (service/engine/held.py), in bytes as held (pyroaring's container
   statistics) and serialized, and the dense arrays the facets' sums of the three numbers
   make (service/engine/number_sums.py), per million queries.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench import bench_datasette  # noqa: E402
from bench.bench_facets import fingerprint, machine, revision  # noqa: E402
from bench.bench_facets import start_datasette_with_settings as start_datasette  # noqa: E402
from bench.bench_service import (  # noqa: E402
    database_for,
    load_average,
    prepare,
    resident_mib,
    start_service,
)
from bench.loadkit import HTTPFailure, KeptAlive, free_port, percentile  # noqa: E402
from service.engine import number_sums  # noqa: E402
from service.engine.held import Held, header  # noqa: E402
from service.engine.kinds import NUMBER  # noqa: E402
from service.engine.numbers import BY_NAME, NAMES  # noqa: E402

PAGE_SIZE, DEEP_PAGE = 50, 200
TEXT = "schu"
SUMS = ["clicks", "impressions", "volume"]
ANCHOR = "updatedAt ↓"
TARGET_MS, TARGET_RATIO, MEMORY_TARGET_MIB = 50.0, 1.5, 60.0
POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
CLICKS_PER_TAG_SQL = (
    "select j.value as tag, count(*) as queries, sum(clicks) as clicks,"
    " sum(impressions) as impressions, sum(volume) as volume"
    " from queries, json_each(queries.tags) j group by j.value")


def filters(common_tag: tuple) -> dict[str, dict]:
    tag_id, name, count = common_tag
    return {
        "none": {},
        "untagged": {"untagged": True},
        f"one tag ({name}, {count:,})": {"tagIds": [tag_id]},
        "language de": {"languages": ["de"]},
        "volume 100–5,000": {"metricRanges": {"volume": {"min": 100, "max": 5000}}},
        f"text '{TEXT}'": {"query": TEXT},
    }


def orders() -> dict[str, list[dict]]:
    """Each order's sort, the anchor first; ↓ is descending."""
    found = {ANCHOR: [{"field": "updatedAt", "direction": "DESC"}]}
    for name in NAMES:
        for arrow, direction in (("↓", "DESC"), ("↑", "ASC")):
            found[f"{name} {arrow}"] = [{"field": name, "direction": direction}]
    return found


def timed_rounds(calls: dict, cpu, runs: int, warm_up: int):
    """bench_datasette.rounds over the calls (the first of each round rotating); a failed
    request stops the run, since every call here is one that must be answered."""
    def attempt(call):
        try:
            return call(), None
        except HTTPFailure as failure:
            raise SystemExit(f"a request failed: {failure}") from failure

    timings, cpu_ms, _outcomes = bench_datasette.rounds(
        calls, dict.fromkeys(calls, cpu), runs, warm_up, attempt)
    return {name: (statistics.median(values), percentile(values, 0.95))
            for name, values in timings.items()}, cpu_ms


def check_order(answer: dict, sort: list[dict]) -> str | None:
    """What is wrong with a page sorted by a number, or None."""
    field, direction = sort[0]["field"], sort[0]["direction"]
    if field not in BY_NAME:
        return None
    values = [item["metrics"].get(field) for item in answer["results"]]
    known = [value for value in values if value is not None]
    if values[:len(known)] != known:
        return "a query without the number comes before one with it"
    wanted = sorted(known, reverse=direction == "DESC")
    return None if known == wanted else "the numbers are out of order"


def settle(service: KeptAlive, seconds: float) -> None:
    """Page 200 of each number's ascending order asked, round after round, for `seconds`:
    the first deep page among ties has the project's ids read in a thread of the service's
    own (service/engine/id_keys.py; a minute at ten million queries), meanwhile answered
    without them."""
    deadline, rounds = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        for name in NAMES:
            service.post("/api/queries/list", {
                "sort": [{"field": name, "direction": "ASC"}], "page": DEEP_PAGE,
                "limit": PAGE_SIZE})
        rounds += 1
    print(f"settled: {rounds} rounds of deep pages in {seconds:g} s", flush=True)


def sorted_pages(service: KeptAlive, cpu, shapes: dict, runs: int, warm_up: int) -> list:
    """Part 1: [(filter, page, matches, {order: (p50, p95)}, CPU ms per request)]."""
    rows = []
    for name, body in shapes.items():
        for page in (1, DEEP_PAGE):
            calls, matches = {}, set()
            for order, sort in orders().items():
                request = {**body, "sort": sort, "page": page, "limit": PAGE_SIZE,
                           "include": ["metrics"]}
                answer = service.post("/api/queries/list", request)
                matches.add(answer["page"]["totalRecords"])
                wrong = check_order(answer, sort)
                if wrong:
                    raise SystemExit(f"{name}, page {page}, {order}: {wrong}")
                calls[order] = lambda request=request: service.post("/api/queries/list",
                                                                    request)
            if len(matches) != 1:
                raise SystemExit(f"{name}: the orders count different matches: {matches}")
            figures, cpu_ms = timed_rounds(calls, cpu, runs, warm_up)
            (total,) = matches
            rows.append((name, page, total, figures,
                         statistics.fmean(cpu_ms.values())))
            numbers = [p95 for order, (_p50, p95) in figures.items() if order != ANCHOR]
            slowest = max(figures, key=lambda order: figures[order][1])
            print(f"{name}, page {page} ({total:,} matches): number orders p95 "
                  f"{min(numbers):.1f}–{max(numbers):.1f} ms (slowest {slowest}), "
                  f"{ANCHOR} {figures[ANCHOR][0]:.1f} / {figures[ANCHOR][1]:.1f} ms", flush=True)
    return rows


def print_sorted_pages(rows: list) -> None:
    names = list(orders())
    print(f"\nsorted pages, p95 ms ({PAGE_SIZE} results; ↓ descending, ↑ ascending)")
    print("| filter | page | matches | " + " | ".join(names) + " |")
    print("|---|---:|---:|" + "---:|" * len(names))
    for name, page, total, figures, _cpu in rows:
        print(f"| {name} | {page} | {total:,} | "
              + " | ".join(f"{figures[order][1]:.1f}" for order in names) + " |")
    print("\nsorted pages, summary (ms; p50 / p95)")
    print(f"| filter | page | matches | {ANCHOR} | numbers: median p50 | numbers: worst p95 "
          "| slowest order | server CPU per request |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    met = cells = 0
    for name, page, total, figures, cpu_ms in rows:
        numbers = {order: value for order, value in figures.items() if order != ANCHOR}
        slowest = max(numbers, key=lambda order: numbers[order][1])
        met += sum(p95 <= TARGET_MS for _p50, p95 in numbers.values())
        cells += len(numbers)
        anchor = figures[ANCHOR]
        print(f"| {name} | {page} | {total:,} | {anchor[0]:.1f} / {anchor[1]:.1f} | "
              f"{statistics.median(p50 for p50, _ in numbers.values()):.1f} | "
              f"{numbers[slowest][1]:.1f} | {slowest} | {cpu_ms:.1f} |")
    print(f"\nsorted by a number, p95 ≤ {TARGET_MS:g} ms: {met} of {cells} pages")


def facets_with_sums(service: KeptAlive, cpu, shapes: dict, runs: int, warm_up: int) -> None:
    """Part 2: each filter's facets without and with three sums, in turn; first, once, the
    sums as computed (a filter's are kept until the next write), the arrays they are summed
    from made beforehand."""
    print(f"\nfacets with sums of {', '.join(SUMS)} against the same facets without (ms; "
          "server CPU ms per request)")
    print("| filter | matches | facets p50 / p95 | with sums p50 / p95 | ratio p95 | "
          "sums computed | CPU facets / with sums |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    service.post("/api/queries/facets", {"query": "arrays", "sums": SUMS})
    met = 0
    for name, body in shapes.items():
        plain, summed = body, {**body, "sums": SUMS}
        total = service.post("/api/queries/facets", plain)["totalRecords"]
        started = time.perf_counter()
        service.post("/api/queries/facets", summed)
        computed = (time.perf_counter() - started) * 1000
        figures, cpu_ms = timed_rounds(
            {"facets": lambda plain=plain: service.post("/api/queries/facets", plain),
             "sums": lambda summed=summed: service.post("/api/queries/facets", summed)},
            cpu, runs, warm_up)
        (p50, p95), (sums_p50, sums_p95) = figures["facets"], figures["sums"]
        ratio = sums_p95 / p95
        met += ratio <= TARGET_RATIO and sums_p95 <= TARGET_MS
        print(f"| {name} | {total:,} | {p50:.1f} / {p95:.1f} | {sums_p50:.1f} / {sums_p95:.1f}"
              f" | {ratio:.2f} | {computed:.1f} | {cpu_ms['facets']:.1f} / "
              f"{cpu_ms['sums']:.1f} |", flush=True)
    print(f"\nwith sums p95 ≤ {TARGET_RATIO:g}× without and ≤ {TARGET_MS:g} ms: "
          f"{met} of {len(shapes)} filters")


def numbers_copy(source: Path, project_id: str) -> Path:
    """The project's queries in one table as Datasette can facet and sum them (`tags` a JSON
    array of names, '[]' for none), built unless already current."""
    target = source.with_name(f"{source.stem}-numbers-datasette.sqlite3")
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
            " country TEXT, tags TEXT, clicks INTEGER, impressions INTEGER, volume INTEGER);")
        connection.execute(
            "INSERT INTO queries SELECT q.pk, q.query, q.language, q.country,"
            " CASE WHEN count(t.name) = 0 THEN '[]' ELSE json_group_array(t.name) END,"
            " q.clicks, q.impressions, q.volume"
            " FROM src.queries q"
            " LEFT JOIN src.query_tags qt ON qt.query_pk = q.pk"
            " LEFT JOIN src.tags t ON t.id = qt.tag_id"
            " WHERE q.project_id = ? GROUP BY q.pk ORDER BY q.pk", (project_id,))
        connection.commit()
        connection.execute("DETACH DATABASE src")
        connection.execute(f"PRAGMA user_version = {wanted}")
        connection.commit()
    finally:
        connection.close()
    os.replace(building, target)
    print(f"Datasette's copy: {target}, built in {time.perf_counter() - started:.1f} s")
    return target


def exploded(url: str, project_id: str):
    """The project's queries, a row per tag they carry, as a pandas DataFrame (or None
    without pandas), and the seconds its loading took."""
    try:
        import pandas
    except ImportError:
        return None, 0.0
    started = time.perf_counter()
    engine = create_engine(url)
    with engine.connect() as connection:
        frame = pandas.read_sql(text(
            "SELECT q.pk, t.name AS tag, q.clicks, q.impressions, q.volume FROM queries q"
            " JOIN query_tags qt ON qt.query_pk = q.pk JOIN tags t ON t.id = qt.tag_id"
            " WHERE q.project_id = :project"), connection, params={"project": project_id})
    engine.dispose()
    return frame, time.perf_counter() - started


def in_process(call, runs: int, warm_up: int) -> tuple[tuple[float, float], object]:
    for _ in range(warm_up):
        call()
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        result = call()
        timings.append((time.perf_counter() - started) * 1000)
    return (statistics.median(timings), percentile(timings, 0.95)), result


def clicks_per_tag(service: KeptAlive, cpu, url: str, project_id: str, tag_names: dict,
                   datasette: tuple | None, runs: int, warm_up: int) -> None:
    """Part 3: per-tag sums of the whole project from the service, Datasette and pandas."""
    answers, figures = {}, {}
    calls = {"service: facets with 3 sums": lambda: service.post(
        "/api/queries/facets", {"sums": SUMS})}
    if datasette is not None:
        client, database = datasette
        calls["Datasette: facet page (_facet_array=tags, counts only)"] = lambda: client.get(
            f"/{database}/queries.json", [("_size", "0"), ("_facet_array", "tags"),
                                          ("_facet_size", "max"), ("_nosuggest", "1")])
        calls["Datasette: SQL sum over json_each(tags)"] = lambda: client.get(
            f"/{database}.json", [("sql", CLICKS_PER_TAG_SQL), ("_shape", "array")])
    for name, call in calls.items():
        answers[name] = call()
    timed, _cpu = timed_rounds(calls, cpu, runs, warm_up)
    figures.update(timed)

    ours = answers["service: facets with 3 sums"]
    sums = {"service: facets with 3 sums": {
        tag_names.get(item["id"], f"#{item['id']}"): (item["count"], item["sums"]["clicks"])
        for item in ours["tags"] if item["count"]}}
    if datasette is not None:
        sums["Datasette: SQL sum over json_each(tags)"] = {
            row["tag"]: (row["queries"], row["clicks"] or 0)
            for row in answers["Datasette: SQL sum over json_each(tags)"]}
        facet = answers["Datasette: facet page (_facet_array=tags, counts only)"]
        counts = {item["value"]: item["count"]
                  for item in facet["facet_results"]["tags"]["results"]}
        theirs = {tag: count for tag, (count, _clicks) in sums[
            "service: facets with 3 sums"].items()}
        print("Datasette's facet counts " + ("agree" if counts == theirs else "DIFFER")
              + " with the service's")
    frame, loading = exploded(url, project_id)
    if frame is None:
        print("pandas is not installed: run with `uv run --with pandas` for its figures")
    else:
        print(f"pandas: {len(frame):,} rows (a query per tag it carries) loaded in "
              f"{loading:.1f} s, {frame.memory_usage(deep=True).sum() / 2**20:,.0f} MiB")
        name = 'pandas: df.groupby("tag")[…].sum() (in process)'
        figures[name], grouped = in_process(
            lambda: frame.groupby("tag")[SUMS].sum(), runs, warm_up)
        sizes = frame.groupby("tag").size()
        sums[name] = {tag: (int(sizes[tag]), int(row["clicks"]))
                      for tag, row in grouped.iterrows()}
    reference = sums["service: facets with 3 sums"]
    for name, found in sums.items():
        if found != reference:
            wrong = sorted(tag for tag in found.keys() | reference.keys()
                           if found.get(tag) != reference.get(tag))
            print(f"!!! {name}: per-tag clicks DIFFER from the service's for {len(wrong)} "
                  f"tags, e.g. {wrong[0]}: {found.get(wrong[0])} against "
                  f"{reference.get(wrong[0])}")
    agree = all(found == reference for found in sums.values())
    print(f"\nclicks per tag, the whole project ({len(reference)} tags; per-tag counts and "
          f"clicks {'equal across ' + str(len(sums)) if agree else 'DIFFER'})")
    print("| system | p50 / p95 ms | service p95 ÷ its p95 |")
    print("|---|---:|---:|")
    service_p95 = figures["service: facets with 3 sums"][1]
    for name, (p50, p95) in figures.items():
        print(f"| {name} | {p50:.1f} / {p95:.1f} | {service_p95 / p95:.3f} |")


def held_bytes(bitmap) -> int:
    found = bitmap.get_statistics()
    return (found["n_bytes_array_containers"] + found["n_bytes_run_containers"]
            + found["n_bytes_bitset_containers"])


def memory(url: str, project_id: str, total: int) -> None:
    """Part 4: what a process holds of the numbers for the project, read as the service reads
    them: the numbers' bitmaps, and the dense arrays the facets' sums of SUMS make (their
    values, and each query's group)."""
    engine = create_engine(url)
    started = time.perf_counter()
    with engine.connect() as connection:
        held = Held().project(connection, project_id, header(connection, project_id))
    took = time.perf_counter() - started
    engine.dispose()
    by_number: dict[str, list[int]] = {}
    for (kind, value), bitmap in held.whole.items():
        if kind != NUMBER:
            continue
        entry = by_number.setdefault(value.split(":")[0], [0, 0, 0])
        entry[0] += held_bytes(bitmap)
        entry[1] += len(bitmap.serialize())
        entry[2] += 1
    every = [sum(entry[i] for entry in by_number.values()) for i in range(3)]
    other = sum(held_bytes(bitmap) for (kind, _value), bitmap in held.whole.items()
                if kind != NUMBER)
    def array_bytes(summer) -> int:
        return sum({id(factor): factor.array.nbytes for summand in getattr(
            summer, "arrays", {}).values() for factor in summand.factors}.values())

    started = time.perf_counter()
    summer = number_sums.summing(held, tuple(SUMS))
    made = time.perf_counter() - started
    arrays, every_number = array_bytes(summer), array_bytes(number_sums.summing(held, NAMES))
    groups = summer.groups.codes.nbytes if hasattr(summer, "groups") else 0
    mib, per_million = 2**20, 1_000_000 / total
    print(f"\nthe numbers' bitmaps held per process ({total:,} queries, read in {took:.1f} s; "
          "MiB, and MiB per million queries)")
    print("| number (bitmaps) | as held | serialized |")
    print("|---|---:|---:|")
    for name, (whole, serialized, count) in sorted(by_number.items()):
        print(f"| {name} ({count}) | {whole / mib:.1f} | {serialized / mib:.1f} |")
    whole, serialized, count = every
    print(f"| all ({count}) | {whole / mib:.1f} | {serialized / mib:.1f} |")
    held_total = whole + arrays + groups
    print(f"dense arrays of {', '.join(SUMS)} ({type(summer).__name__}, made in {made:.1f} s): "
          f"values {arrays / mib:.1f} MiB, groups {groups / mib:.1f} MiB")
    print(f"per million queries: bitmaps {whole / mib * per_million:.1f} MiB, with the arrays "
          f"{held_total / mib * per_million:.1f} MiB (target ≤ {MEMORY_TARGET_MIB:g}); "
          f"estimate at 10M, proportional: {held_total / mib * per_million * 10:,.0f} MiB"
          f"; the other held kinds' whole bitmaps: {other / mib:.1f} MiB")
    print(f"with every number summed: arrays {every_number / mib:.1f} MiB, in all "
          f"{(whole + every_number + groups) / mib * per_million:.1f} MiB per million queries")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--database-url", help="default: bench_service.py's database of the "
                        "size (SQLite in /tmp, or PostgreSQL with --postgres)")
    parser.add_argument("--postgres", action="store_true",
                        help=f"use {POSTGRES_SERVER}/tagdesk_bench_<queries>")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warm-up", type=int, default=2)
    parser.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                        help="ask deep pages this long before part 1 (the project's ids "
                        "are read in the background: ~60 s at 10M)")
    parser.add_argument("--parts", default="1234",
                        help="which parts to run (of 1234; see the module's docstring)")
    args = parser.parse_args()

    url = args.database_url or database_for(POSTGRES_SERVER if args.postgres else None,
                                            args.queries)
    parsed = make_url(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    print(f"load average before: {load_average()}")
    print(f"machine: {machine()}")
    print(f"git revision: {revision()}")
    print(f"database: {url.split('@')[-1]}")
    key, project_id, total, popularity = prepare(url, args.queries)
    tag_names = {tag_id: name for tag_id, name, _count in popularity}
    print(f"project: {total:,} queries, {len(popularity)} tags in use")
    shapes = filters(popularity[0])

    service_port = free_port()
    server = start_service(url, service_port)
    service = KeptAlive(f"http://127.0.0.1:{service_port}",
                        {"x-api-key": key, "x-project-id": project_id})

    def cpu() -> float:
        return bench_datasette.process_cpu_ms(server.pid)

    datasette_server = None
    try:
        if "1" in args.parts:
            settle(service, args.settle)
            print_sorted_pages(sorted_pages(service, cpu, shapes, args.runs, args.warm_up))
        if "2" in args.parts:
            facets_with_sums(service, cpu, shapes, args.runs, args.warm_up)
        if "3" in args.parts:
            datasette = None
            if sqlite:
                copy = numbers_copy(Path(parsed.database), project_id)
                datasette_port = free_port()
                datasette_server = start_datasette(copy, datasette_port)
                datasette = (KeptAlive(f"http://127.0.0.1:{datasette_port}"), copy.stem)
            else:
                print("Datasette reads SQLite files only: left out on PostgreSQL")
            clicks_per_tag(service, cpu, url, project_id, tag_names, datasette, args.runs,
                           args.warm_up)
        print("\nservice memory: " + ", ".join(
            f"{'master' if pid == server.pid else 'worker'} {rss:.0f} MiB resident "
            f"({anonymous:.0f} anonymous)" for pid, rss, _peak, anonymous
            in resident_mib(server.pid)))
    finally:
        for process in (server, datasette_server):
            if process is not None:
                process.terminate()
                process.wait(10)
    if "4" in args.parts:
        memory(url, project_id, total)
    print(f"\nload average after: {load_average()}")
    print(f"git revision after the run: {revision()}")


if __name__ == "__main__":
    main()
