"""Importing a CSV of N queries with tags, side by side with sqlite-utils on the same file.

    uv run python bench/bench_import.py --rows 100000        # a quick run
    uv run python bench/bench_import.py --rows 1000000
    uv run python bench/bench_import.py --rows 1000000 --no-postgres --no-seed
    uv run python bench/bench_import.py --rows 1000000 --no-sqlite --no-seed
    uv run python bench/bench_import.py --rows 1000000 --no-import    # seed-demo only

The file: N distinct queries as keyword research exports them (query, language, country,
tags joined by ";"), made by the demo's generator (service/demo/demo_data.py) and kept in the work
folder for the next run of the same size. Timed, one after the other, each on a database of
its own:

- `import-queries` (the service's command line) into a fresh SQLite file, and into a fresh
  PostgreSQL database (TAGDESK_BENCH_POSTGRES_URL, default the local server as `postgres`)
  — the project and its tags made beforehand, untimed; the time includes the command's own
  start and its statistics refresh after the import;
- the anchor: `sqlite-utils insert db queries file.csv --csv` followed by `sqlite-utils
  enable-fts db queries query --tokenize trigram`: a plain table and a trigram index, none of
  the other indexes and counters Tagdesk keeps;
- `seed-demo --queries N` on SQLite and PostgreSQL (the schema made beforehand, untimed).

Figures: wall seconds, rows a second, the ratio to the anchor, the CPU time of the command
(user + system, its own process; PostgreSQL's server work is not in it), its peak resident
set and its peak private memory (the resident set less the database pages SQLite maps). After each import the project's counters are checked against the file. The machine may
be shared: the load average is printed before and after, and only figures of one run should
be compared.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service import create_app  # noqa: E402
from service.demo.demo_data import TAGS, assign_tags, generate_queries  # noqa: E402
from service.engine import sizes  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402

POSTGRES_ADMIN_URL = os.environ.get("TAGDESK_BENCH_POSTGRES_URL",
                                    "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
ANCHOR = "sqlite-utils (insert + enable-fts)"


@dataclass
class Timing:
    name: str
    seconds: float
    cpu: float
    peak_rss_mb: float
    peak_private_mb: float
    rows: int


def write_csv(path: Path, rows: int) -> None:
    """`rows` distinct queries, about 65 % of them with 1 to 3 tags."""
    rng = random.Random(11)
    partial = path.with_suffix(".partial")
    with partial.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["query", "language", "country", "tags"])
        for index, (query, language, country) in enumerate(generate_queries(rows, 5)):
            tags = assign_tags(index, query, language, country, rng)
            writer.writerow([query, language, country, ";".join(TAGS[t][0] for t in tags)])
    partial.rename(path)


def run(name: str, commands: list[list[str]], env: dict, rows: int) -> Timing:
    """Run the commands one after the other; their summed wall and CPU time, the largest
    peak resident set of any of them, and the largest private (anonymous) memory seen. The
    resident set also counts the pages of the database file SQLite maps into memory (up to
    its mmap_size), which the kernel can drop at will; the private memory is what the
    process itself holds, sampled every 50 ms."""
    seconds = cpu = peak = private = 0.0
    for command in commands:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            private = max(private, private_mb(process.pid))
            time.sleep(0.05)
        seconds += time.perf_counter() - started
        out, err = process.stdout.read(), process.stderr.read()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} failed:\n{out}\n{err}")
        cpu += usage.ru_utime + usage.ru_stime
        peak = max(peak, usage.ru_maxrss / 1024)
    return Timing(name, seconds, cpu, peak, private, rows)


def private_mb(pid: int) -> float:
    """The process's anonymous resident memory (RssAnon), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


def flask(*args: str) -> list[str]:
    return [sys.executable, "-m", "flask", "--app", "service", *args]


def service_env(url: str) -> dict:
    env = {**os.environ, "TAGDESK_DATABASE_URL": url}
    env.pop("TAGDESK_REDIS_URL", None)
    return env


def prepared(url: str) -> str:
    """The schema, an organization and a project with the demo's tags; the project's id."""
    subprocess.run(flask("init-db"), cwd=ROOT, env=service_env(url), check=True,
                   capture_output=True)
    app = create_app({"DATABASE_URL": url})
    try:
        with session_scope(app) as session:
            org_id = admin.create_org(session, "Import benchmark")
            project_id = admin.create_project(session, org_id, "Keyword research")
            for name, color in TAGS:
                admin.create_tag(session, project_id, name, color)
    finally:
        app.extensions["tagdesk_engine"].dispose()
    return project_id


def check(url: str, project_id: str | None, rows: int, links: int | None) -> None:
    """The project's counts (the count engine's bitmaps) agree with its rows and with the file
    (every row is new)."""
    engine = create_engine(url)
    try:
        with Session(engine) as session:
            if project_id is None:  # seed-demo: its largest project
                project_id = session.execute(text(
                    "SELECT project_id FROM queries GROUP BY project_id "
                    "ORDER BY count(*) DESC LIMIT 1")).scalar_one()
            project_id = str(project_id)
            counted = sizes.query_counts(session, [project_id])[project_id]
            tag_total = sum(sizes.tag_counts(session, project_id).values())
            stored, tagged = session.execute(text(
                "SELECT (SELECT count(*) FROM queries q WHERE q.project_id = p.id), "
                "(SELECT count(*) FROM query_tags l JOIN tags t ON t.id = l.tag_id "
                "WHERE t.project_id = p.id) FROM projects p WHERE p.id = :p"),
                {"p": project_id}).one()
            codes = session.execute(text(
                "SELECT sum(size) FROM engine_pieces WHERE project_id = :p AND kind = 3"),
                {"p": project_id}).scalar_one()
    finally:
        engine.dispose()
    assert counted == stored == rows == codes, (counted, stored, rows, codes)
    assert tagged == tag_total and (links is None or tagged == links), (tagged, tag_total, links)


@contextmanager
def postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for one timing, dropped afterwards."""
    name = "tagdesk_bench_import_" + secrets.token_hex(4)
    engine = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


@contextmanager
def sqlite_database(folder: Path, name: str) -> Iterator[str]:
    """A new SQLite file in the work folder (kept afterwards, for a look)."""
    yield f"sqlite:///{fresh_sqlite(folder, name)}"


def fresh_sqlite(folder: Path, name: str) -> Path:
    path = folder / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tagdesk-bench-import"))
    parser.add_argument("--no-postgres", action="store_true", help="SQLite and the anchor only")
    parser.add_argument("--no-seed", action="store_true", help="no seed-demo timings")
    parser.add_argument("--no-import", action="store_true", help="no import-queries timings")
    parser.add_argument("--no-sqlite", action="store_true",
                        help="PostgreSQL and the anchor only")
    args = parser.parse_args()
    folder, rows = args.folder, args.rows
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"queries-{rows}.csv"
    if not source.exists():
        started = time.perf_counter()
        write_csv(source, rows)
        print(f"wrote {source} ({source.stat().st_size / 1e6:.1f} MB) "
              f"in {time.perf_counter() - started:.1f} s")
    with source.open(encoding="utf-8", newline="") as file:
        links = sum(len([t for t in row["tags"].split(";") if t])
                    for row in csv.DictReader(file))
    print(f"{rows:,} rows, {links:,} tags; load average before: {load_average()}", flush=True)

    timings: list[Timing] = []
    sqlite_utils = str(Path(sys.executable).with_name("sqlite-utils"))
    anchor_db = fresh_sqlite(folder, "anchor.sqlite3")
    timings.append(run(ANCHOR, [
        [sqlite_utils, "insert", str(anchor_db), "queries", str(source), "--csv"],
        [sqlite_utils, "enable-fts", str(anchor_db), "queries", "query",
         "--tokenize", "trigram"]], dict(os.environ), rows))
    report(timings[-1], timings[0])

    databases = [] if args.no_sqlite else [("SQLite", lambda name: sqlite_database(folder, name))]
    if not args.no_postgres:
        databases.append(("PostgreSQL", lambda _name: postgres_database()))
    for label, database in [] if args.no_import else databases:
        with database("import.sqlite3") as url:
            project_id = prepared(url)
            timings.append(run(f"import-queries, {label}",
                               [flask("import-queries", project_id, str(source))],
                               service_env(url), rows))
            check(url, project_id, rows, links)
            report(timings[-1], timings[0])
    for label, database in [] if args.no_seed else databases:
        with database("seed.sqlite3") as url:
            subprocess.run(flask("init-db"), cwd=ROOT, env=service_env(url), check=True,
                           capture_output=True)
            timings.append(run(f"seed-demo, {label}",
                               [flask("seed-demo", "--queries", str(rows))],
                               service_env(url), rows))
            check(url, None, rows, None)
            report(timings[-1], timings[0])

    print(f"\nload average after: {load_average()}\n")
    print(f"| {rows:,} rows | seconds | rows/s | × anchor | CPU s (client) | peak RSS MB "
          "| peak private MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for timing in timings:
        print(f"| {timing.name} | {timing.seconds:.1f} | {timing.rows / timing.seconds:,.0f} | "
              f"{timing.seconds / timings[0].seconds:.2f} | {timing.cpu:.1f} | "
              f"{timing.peak_rss_mb:.0f} | {timing.peak_private_mb:.0f} |")


def report(timing: Timing, anchor: Timing) -> None:
    print(f"  {timing.name}: {timing.seconds:.1f} s, {timing.rows / timing.seconds:,.0f} rows/s, "
          f"{timing.seconds / anchor.seconds:.2f} × anchor, CPU {timing.cpu:.1f} s, "
          f"peak RSS {timing.peak_rss_mb:.0f} MB, private {timing.peak_private_mb:.0f} MB",
          flush=True)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
