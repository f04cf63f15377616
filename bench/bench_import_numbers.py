"""Importing a keyword tool's export of N queries with its seven number columns, against the
same file without them: the cost of keeping the numbers.

    uv run python bench/bench_import_numbers.py --rows 100000
    uv run python bench/bench_import_numbers.py --rows 1000000 --runs 2 --no-postgres

The files: N distinct queries (the demo's generator) as "Keyword,Country,Clicks,Impressions,
CTR,Position,Volume,CPC,KD" (values as Search Console and Semrush write them: "1,234",
"3.51%", "7.2") and as "Keyword,Country" — both of another shape than Tagdesk's own, so both
go through the columns' reading (service/imports/import_sources.py). Each run imports each
file with `import-queries --language en` into a fresh database, the two alternating; the
median of each is compared. Also: the cells a second of one number column's reader
(service/imports/number_values.py), one by one and a column at once.
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_import import (  # noqa: E402
    flask,
    load_average,
    postgres_database,
    prepared,
    run,
    service_env,
    sqlite_database,
)

from service.demo.demo_data import generate_queries  # noqa: E402
from service.engine.numbers import BY_NAME  # noqa: E402
from service.imports import number_values  # noqa: E402

COUNTRIES = {"US": "United States", "DE": "Germany", "FR": "France", "GB": "United Kingdom"}
NUMBER_HEADER = ["Clicks", "Impressions", "CTR", "Position", "Volume", "CPC", "KD"]


def write_files(folder: Path, rows: int) -> tuple[Path, Path]:
    with_numbers = folder / f"numbers-{rows}.csv"
    without = folder / f"plain-{rows}.csv"
    if with_numbers.exists() and without.exists():
        return with_numbers, without
    rng = random.Random(7)
    with with_numbers.open("w", newline="", encoding="utf-8") as full, \
            without.open("w", newline="", encoding="utf-8") as plain:
        full_writer, plain_writer = csv.writer(full), csv.writer(plain)
        full_writer.writerow(["Keyword", "Country", *NUMBER_HEADER])
        plain_writer.writerow(["Keyword", "Country"])
        countries = list(COUNTRIES.values())
        for index, (query, _language, _country) in enumerate(generate_queries(rows, 5)):
            country = countries[index % len(countries)]
            impressions = rng.randrange(1, 200_000)
            clicks = rng.randrange(0, impressions // 10 + 1)
            full_writer.writerow([
                f"{query} {index}", country, f"{clicks:,}", f"{impressions:,}",
                f"{clicks / impressions:.2%}", f"{rng.uniform(1, 80):.1f}",
                f"{rng.choice((10, 90, 1300, 22200, 135000)):,}",
                f"{rng.uniform(0, 4):.2f}", rng.randrange(0, 101)])
            plain_writer.writerow([f"{query} {index}", country])
    return with_numbers, without


def reader_speed() -> list[str]:
    """Cells a second of a column's reader, per kind of cell: one by one (`stored`, as the
    Columns page's preview reads) and a column at once (`stored_all`, as an import reads)."""
    lines = []
    for name, cell in (("clicks", "1,234"), ("impressions", "48213"), ("ctr", "3.51%"),
                       ("position", "7.2"), ("volume", "1K – 10K")):
        column = number_values.decided(BY_NAME[name], [cell])
        stored = column.stored
        cells = [cell] * 200_000
        started = time.perf_counter()
        for text in cells:
            stored(text, 2)
        seconds = time.perf_counter() - started
        lines_of = [2] * len(cells)
        started = time.perf_counter()
        column.stored_all(cells, lines_of)
        at_once = time.perf_counter() - started
        lines.append(f"| {name} | `{cell}` | {len(cells) / seconds / 1e6:.2f} M | "
                     f"{len(cells) / at_once / 1e6:.2f} M |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tagdesk-bench-import"))
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    with_numbers, without = write_files(args.folder, args.rows)
    print("| number | cell | cells/s one by one | at once |\n|---|---|---:|---:|\n"
          + "\n".join(reader_speed()))
    print(f"\n{args.rows:,} rows; load average before: {load_average()}", flush=True)
    databases = [] if args.no_sqlite else [("SQLite", lambda: sqlite_database(
        args.folder, "numbers.sqlite3"))]
    if not args.no_postgres:
        databases.append(("PostgreSQL", postgres_database))
    for label, database in databases:
        seconds: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(args.runs):
            for kind, path in (("without", without), ("with", with_numbers)):
                with database() as url:
                    project_id = prepared(url)
                    timing = run(f"{label} {kind}", [flask(
                        "import-queries", project_id, str(path), "--language", "en")],
                        service_env(url), args.rows)
                seconds[kind].append(timing.seconds)
                print(f"{label}, {kind} numbers: {timing.seconds:.1f} s "
                      f"(CPU {timing.cpu:.1f} s)", flush=True)
        plain, full = statistics.median(seconds["without"]), statistics.median(seconds["with"])
        print(f"| {label} | {plain:.1f} s | {full:.1f} s | **{full / plain:.2f}×** |")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
