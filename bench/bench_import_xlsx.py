"""An Excel workbook beside the same rows as CSV: `import-queries` of each into a fresh SQLite
file (a project with the demo's tags made beforehand, untimed).

    uv run python bench/bench_import_xlsx.py                 # 100,000 rows
    uv run python bench/bench_import_xlsx.py --rows 20000

The rows are bench_import.py's file (N distinct queries, about 65 % with tags), kept in the
work folder; the workbook holds them in one sheet (text cells), made once next to it.
Figures: wall seconds of each import and the ratio (target: the workbook ≤ 3× the CSV).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_import import flask, prepared, run, service_env, sqlite_database, write_csv  # noqa: E402
from bench.bench_service import load_average  # noqa: E402
from tests.support.xlsx import workbook  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tagdesk-bench-import"))
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    source = args.folder / f"queries-{args.rows}.csv"
    if not source.exists():
        write_csv(source, args.rows)
    book = source.with_suffix(".xlsx")
    if not book.exists():
        with source.open(encoding="utf-8", newline="") as file:
            book.write_bytes(workbook({"Keywords": list(csv.reader(file))}))
    print(f"{args.rows:,} rows; load average before: {load_average()}", flush=True)
    seconds = {}
    for label, path in (("CSV", source), ("Excel workbook", book)):
        with sqlite_database(args.folder, f"xlsx-{label[:3]}.sqlite3") as url:
            project_id = prepared(url)
            timing = run(label, [flask("import-queries", project_id, str(path))],
                         service_env(url), args.rows)
            seconds[label] = timing.seconds
            print(f"  {label}: {timing.seconds:.1f} s", flush=True)
    print(f"\nload average after: {load_average()}\n")
    print(f"| import-queries, {args.rows:,} rows | seconds | × CSV |\n|---|---:|---:|")
    for label, value in seconds.items():
        print(f"| {label} | {value:.1f} | {value / seconds['CSV']:.2f} |")


if __name__ == "__main__":
    main()
