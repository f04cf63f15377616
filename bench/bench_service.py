"""Service latency at scale: queries/list views and a 1,000-item set-tags over loopback HTTP.

    uv run python bench/bench_service.py --queries 1000000                 # SQLite file in /tmp
    uv run python bench/bench_service.py --queries 10000000 --postgres     # 100k, 1M and 10M
    uv run python bench/bench_service.py --queries 1000000 --only          # that size alone
    uv run python bench/bench_service.py --database-url sqlite:////tmp/x.sqlite3
    uv run python bench/bench_service.py --queries 1000000 --postgres --explain
    uv run python bench/bench_service.py --queries 1000000 --tuned-postgres  # its own cluster
    uv run python bench/bench_service.py --queries 100000 --only --views pattern  # those alone

Every size from 100,000 up to `--queries` (100k, 1M, 10M; or `--sizes`) is measured in turn,
each in its own database (PostgreSQL: tagdesk_bench_<size>; SQLite:
/tmp/tagdesk-bench-<size>.sqlite3),
seeded with `seed-demo` in a child process when it has no organization yet (its time and peak
memory printed) and reused after. With more than one size, a table of p95 by size is printed
and plotted to `--plot` (an SVG). The service runs under gunicorn (1 worker, 4 threads) in its
own process; this script is the client. Figures: p50 and p95 of sequential requests, after a
warm-up; the service's memory (resident set of its processes) after each part of the run; the
database's size on disk and its largest tables and indexes; the load average.
`--explain` also prints, per view, the plan and time of every statement the service runs for
it (EXPLAIN ANALYZE on PostgreSQL, EXPLAIN QUERY PLAN and a timing on SQLite), and the time
of every statement of one set-tags call.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests
from sqlalchemy import create_engine, event, func, select, text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.loadkit import free_port, percentile, serve  # noqa: E402
from service import create_app, schema  # noqa: E402
from service import engine as count_engine  # noqa: E402
from service.api import query_filters  # noqa: E402
from service.bodies.validation import QueryListBody, SetTagsItem  # noqa: E402
from service.demo import demo  # noqa: E402
from service.engine import tagging  # noqa: E402
from service.engine.tables import Query, query_tags  # noqa: E402
from service.org import admin  # noqa: E402
from service.store.db import session_scope  # noqa: E402
from service.store.models import Organization, Tag  # noqa: E402
from tests.faults.stores import PrivatePostgres  # noqa: E402

# PostgreSQL as docs/deploy.md recommends: shared buffers that hold the queries tables and
# their indexes (1.3 GB at a million queries), not the packaged default of 128 MB.
TUNED_FOLDER = Path("/tmp/tagdesk-bench-pg")
TUNED_SETTINGS = {"shared_buffers": "2GB"}

# Substrings of the demo data, each asked for once ("first request"): what a person types.
# Terms of up to two characters are counted from the count engine's bitmaps of the texts' short
# strings, longer ones from those of their words (service/engine), on both databases. Matches
# at a million queries in brackets.
FIRST_TIME_TERMS = {
    # 1–2 characters: 86,000–941,000 matches.
    "1–2 letters": ["a", "e", "s", "o", "i", "er", "en", "in", "sh", "ch", "ma", "st", "ll",
                    "gr", "ho", "ki", "nd", "ve", "at", "ro"],
    # 3 characters: 10,000–46,000.
    "3 letters": ["ren", "sho", "ige", "pen", "ran", "zmi", "rka", "ver", "hir", "anc", "win",
                  "rec", "lpe", "bre", "bro", "dal", "rot", "ark", "ipp", "tte"],
    # 4 characters: 12,044–44,613.
    "4 letters": [
        "pant", "cres", "cycl", "able", "fest", "jung", "eece", "flee", "chuh", "cket", "solv",
        "eggi", "rain", "mare", "hiki", "nord", "lsta", "asse", "irls", "este", "homb", "amen",
        "tagl", "aill", "estr", "lark", "ussu", "fort", "oria", "euro", "vega", "agli", "king",
        "ille", "shor", "ival", "ecre", "kini", "ning", "anda",
    ],
    # Words of 5–9 characters: 6,000–35,000.
    "5–9 letters": ["unter", "walking", "damen", "tamanho", "solvik", "pointure", "botas",
                    "alpenrot", "donna", "taglia", "womens", "talla", "kinder", "enfant",
                    "bergwelt", "girls", "ostwind", "unisex", "boots", "running"],
}


# Patterns, each asked for once: literal alternatives (text searches of the words) and
# regular expressions (run by RE2 on the texts the other filters let through).
FIRST_TIME_PATTERNS = {
    "alternatives": ["schuhe|shoes|chaussures", "damen|women|femme", "kinder|kids|enfant",
                     "boots|stiefel|botas", "running|laufen", "rot|red|rouge", "sale|angebot",
                     "größe|size|taille", "jacke|jacket|veste", "winter|hiver|inverno"],
    "regex": ["^damen .*schuh", "shoes?$", "sch.h", "[0-9]{2}", "^(damen|herren) ", "(rot|blau)e?n? ",
              "^[a-z]+ [a-z]+$", "gr(ö|oe)ße", "ei(ch|g)", "\\bboot"],
}


def seed_in_child(url: str, count: int) -> None:
    """Seed the demo organization in a process of its own: its wall time and peak memory are
    the load's alone."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--seed-into", url,
                              "--queries", str(count)], cwd=ROOT)
    _pid, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"seed-demo failed with exit code {child.returncode}")
    print(f"seed-demo --queries {count:,}: {time.perf_counter() - started:.1f} s, "
          f"peak memory {usage.ru_maxrss / 1024:.0f} MiB", flush=True)


def seed(url: str, count: int) -> None:
    app = create_app({"DATABASE_URL": url})
    schema.upgrade(app.extensions["tagdesk_engine"])
    demo.seed(app, count, progress=lambda m: print("  seeded", m, flush=True))


def prepare(url: str, count: int):
    """Seed when empty; return (key, project id, tag ids by popularity) with limits lifted."""
    app = create_app({"DATABASE_URL": url})
    engine = app.extensions["tagdesk_engine"]
    schema.upgrade(engine)
    with session_scope(app) as session:
        has_org = session.scalar(select(func.count()).select_from(Organization))
    if not has_org:
        seed_in_child(url, count)
    with session_scope(app) as session:
        org_id = session.scalar(select(Organization.id).order_by(Organization.created_at))
        project_id = session.scalar(
            select(Query.project_id).group_by(Query.project_id)
            .order_by(func.count().desc()).limit(1))
        total = session.scalar(select(func.count()).where(Query.project_id == project_id))
        popularity = session.execute(
            select(Tag.id, Tag.name, func.count(query_tags.c.query_pk))
            .join(query_tags, query_tags.c.tag_id == Tag.id)
            .where(Tag.project_id == project_id)
            .group_by(Tag.id, Tag.name).order_by(func.count(query_tags.c.query_pk).desc())
        ).all()
        admin.set_limits(session, org_id, 1_000_000, 10_000_000, 100_000_000)
        key = admin.create_key(session, org_id, "tdk", name="benchmark")
        if engine.dialect.name == "sqlite":
            session.execute(text("ANALYZE"))
    engine.dispose()
    return key, project_id, total, popularity


def disk_sizes(url: str) -> tuple[int, list[tuple[str, int, list[tuple[str, int]]]]]:
    """(the database's bytes on disk, [(table, its bytes, [(index, bytes), …]), …]), largest
    tables first."""
    engine = create_engine(url)
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            total = connection.scalar(text("SELECT pg_database_size(current_database())"))
            rows = connection.execute(text(
                "SELECT t.relname, pg_table_size(t.oid), i.relname, pg_relation_size(i.oid)"
                " FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace"
                " LEFT JOIN pg_index x ON x.indrelid = t.oid"
                " LEFT JOIN pg_class i ON i.oid = x.indexrelid"
                " WHERE n.nspname = 'public' AND t.relkind = 'r'")).all()
        else:
            total = Path(engine.url.database).stat().st_size
            # dbstat: the pages of every table and index (index → its table from the schema).
            rows = connection.execute(text(
                "SELECT coalesce(m.tbl_name, s.name),"
                " sum(CASE WHEN m.type = 'index' THEN 0 ELSE s.pgsize END),"
                " CASE WHEN m.type = 'index' THEN s.name END,"
                " sum(CASE WHEN m.type = 'index' THEN s.pgsize END)"
                " FROM dbstat s LEFT JOIN sqlite_schema m ON m.name = s.name"
                " GROUP BY s.name")).all()
    engine.dispose()
    tables: dict[str, list] = {}
    for table_name, size, index_name, index_size in rows:
        entry = tables.setdefault(table_name, [0, []])
        entry[0] = max(entry[0], size or 0)
        if index_name:
            entry[1].append((index_name, index_size or 0))
    found = [(name, size, sorted(indexes, key=lambda i: -i[1]))
             for name, (size, indexes) in tables.items()]
    return total, sorted(found, key=lambda t: -(t[1] + sum(i[1] for i in t[2])))


def print_disk_sizes(url: str, smallest_mib: float = 1.0) -> None:
    total, tables = disk_sizes(url)
    mib = 1024 * 1024
    print(f"\ndatabase on disk: {total / mib:,.0f} MiB (tables and indexes of "
          f"{smallest_mib:g} MiB or more)")
    for name, size, indexes in tables:
        whole = size + sum(index_size for _name, index_size in indexes)
        if whole < smallest_mib * mib:
            continue
        print(f"  {name}: {whole / mib:,.0f} MiB, of which the table {size / mib:,.0f}")
        for index_name, index_size in indexes:
            if index_size >= smallest_mib * mib:
                print(f"    {index_name}: {index_size / mib:,.0f}")


def start_service(url: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "TAGDESK_DATABASE_URL": url}
    env.pop("TAGDESK_REDIS_URL", None)
    return serve([sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "-w", "1",
                  "--threads", "4", "--log-level", "warning", "service:create_app()"],
                 f"http://127.0.0.1:{port}/api/openapi.json", "the service", cwd=ROOT, env=env)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def resident_mib(pid: int) -> list[tuple[int, float, float, float]]:
    """(pid, current, peak, anonymous) resident set in MiB of a process and each of its
    descendants. Anonymous memory is the process's own; the rest is mapped files (libraries,
    and on SQLite the memory-mapped database, shared with the page cache)."""
    found, pids = [], [pid]
    while pids:
        pid = pids.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        found.append((pid, *(int(fields[name].split()[0]) / 1024
                             for name in ("VmRSS", "VmHWM", "RssAnon"))))
        pids += [int(child) for child in children]
    return found


class StatementLog:
    """Every statement an engine runs while recording, with its parameters and time."""

    def __init__(self, engine):
        self.engine = engine
        self.entries: list[tuple[str, object, float]] = []
        self.recording = False
        event.listen(engine, "before_cursor_execute", self._before)
        event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, conn, _cursor, _statement, _parameters, _context, _executemany):
        conn.info["bench_started"] = time.perf_counter()

    def _after(self, conn, _cursor, statement, parameters, _context, executemany):
        if self.recording:
            elapsed = (time.perf_counter() - conn.info.pop("bench_started")) * 1000
            self.entries.append((statement, None if executemany else parameters, elapsed))

    def record(self):
        self.entries, self.recording = [], True
        return self

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        self.recording = False


def one_line(statement: str, width: int = 110) -> str:
    flat = " ".join(statement.split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def explain_view(app, log: StatementLog, project_id: str, body: dict) -> None:
    """Run the view in this process, then explain each statement it ran, in order."""
    engine = app.extensions["tagdesk_engine"]
    postgres = engine.dialect.name == "postgresql"
    with app.app_context(), session_scope(app) as session, log.record():
        query_filters.list_queries(session, project_id, QueryListBody(**{"limit": 50, **body}),
                             count_engine.held())
    for statement, parameters, _elapsed in log.entries:
        if statement.startswith("BEGIN"):  # SQLite's sessions begin their transaction so
            continue
        prefix = "EXPLAIN (ANALYZE, BUFFERS) " if postgres else "EXPLAIN QUERY PLAN "
        with engine.connect() as connection:
            if postgres:
                plan = [row[0] for row in connection.exec_driver_sql(
                    prefix + statement, parameters or {})]
                took = ""
            else:
                plan = [row[-1] for row in connection.exec_driver_sql(
                    prefix + statement, parameters or ())]
                started = time.perf_counter()
                connection.exec_driver_sql(statement, parameters or ()).all()
                took = f"  [{(time.perf_counter() - started) * 1000:.1f} ms]"
        print(f"    {one_line(statement)}{took}")
        for line in plan:
            print(f"      {line}")


def explain_set_tags(app, log: StatementLog, project_id: str, bodies: list[list[dict]]) -> None:
    """Each statement of set-tags calls with its time (the calls commit, as the API's do)."""
    for body in bodies:
        items = [SetTagsItem(**item) for item in body]
        started = time.perf_counter()
        with app.app_context(), session_scope(app) as session, log.record():
            tagging.set_tags(session, project_id, items)
        total = (time.perf_counter() - started) * 1000
        print(f"    set-tags, {len(items):,} items: {total:.1f} ms in this process")
        for statement, _parameters, elapsed in log.entries:
            print(f"      {elapsed:8.1f} ms  {one_line(statement, 96)}")


def measure(call, runs: int) -> tuple[list[float], object]:
    for _ in range(3):
        result = call()
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        result = call()
        timings.append((time.perf_counter() - started) * 1000)
    return timings, result


STANDARD_SIZES = (100_000, 1_000_000)
PLOT = ROOT / "docs" / "service-p95-by-size.svg"
TARGET_LIST_MS, TARGET_SET_TAGS_MS = 50, 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000,
                        help="the largest size; 100,000 and 1,000,000 are measured too if smaller")
    parser.add_argument("--only", action="store_true", help="measure --queries alone")
    parser.add_argument("--sizes", type=lambda value: [int(size) for size in value.split(",")],
                        help="the sizes to measure instead, as 100000,1000000")
    parser.add_argument("--sqlite-folder", type=Path, default=Path("/tmp"),
                        help="where the SQLite databases are kept (default /tmp)")
    parser.add_argument("--database-url")
    parser.add_argument("--postgres", action="store_true",
                        help="use postgresql+psycopg://postgres@127.0.0.1/tagdesk_bench_<size>")
    parser.add_argument("--tuned-postgres", action="store_true",
                        help=f"a PostgreSQL cluster of this benchmark's own in {TUNED_FOLDER}, "
                             "kept between runs, with the settings docs/deploy.md recommends")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--plot", type=Path, default=PLOT,
                        help="where to draw p95 against size, when more than one size is run")
    parser.add_argument("--smallest-mib", type=float, default=1.0,
                        help="list the tables and indexes of at least this size on disk")
    parser.add_argument("--explain", action="store_true",
                        help="print the plan and time of every statement of every view")
    parser.add_argument("--views", help="measure only the views whose name holds this (list "
                        "and facets, and the first requests of the same kind), no set-tags")
    parser.add_argument("--seed-into", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_into:
        seed(args.seed_into, args.queries)
        return

    sizes = args.sizes or ([args.queries] if args.only or args.database_url else [
        size for size in STANDARD_SIZES if size < args.queries] + [args.queries])
    cluster = None
    server = None
    if args.postgres or args.tuned_postgres:
        server = "postgresql+psycopg://postgres@127.0.0.1:5432"
        if args.tuned_postgres:
            cluster = PrivatePostgres(TUNED_FOLDER, TUNED_SETTINGS)
            if not cluster.data.exists():
                cluster.init()
            cluster.start()
            server = f"postgresql+psycopg://postgres@127.0.0.1:{cluster.port}"
    try:
        results = {}
        for size in sizes:
            url = args.database_url or database_for(server, size, args.sqlite_folder)
            print(f"\n=== {size:,} queries; database: {url.split('@')[-1]}", flush=True)
            results[size] = run(args, url, size)
        if len(results) > 1:
            summarize(results, args.plot, "PostgreSQL" if server else "SQLite")
    finally:
        if cluster is not None:
            cluster.stop()


def database_for(server: str | None, size: int, sqlite_folder: Path = Path("/tmp")) -> str:
    """The URL of this size's database, created on PostgreSQL if missing."""
    if server is None:
        return f"sqlite:///{sqlite_folder.resolve() / f'tagdesk-bench-{size}.sqlite3'}"
    name = f"tagdesk_bench_{size}"
    admin_engine = create_engine(server + "/postgres", isolation_level="AUTOCOMMIT")
    with admin_engine.connect() as connection:
        if not connection.scalar(text("SELECT 1 FROM pg_database WHERE datname = :name"),
                                 {"name": name}):
            connection.execute(text(f"CREATE DATABASE {name}"))
        print("shared_buffers:", connection.scalar(text("SHOW shared_buffers")))
    admin_engine.dispose()
    return f"{server}/{name}"


def summarize(results: dict[int, dict[str, tuple]], plot: Path, database: str) -> None:
    """p95 of every view at every size, as a table and as a plot."""
    sizes = sorted(results)
    names = list(results[sizes[-1]])
    print(f"\n{'p95 ms by size':<34}" + "".join(f"{size:>12,}" for size in sizes))
    for name in names:
        print(f"{name:<34}" + "".join(
            f"{results[size][name][1]:>12.1f}" if name in results[size] else f"{'':>12}"
            for size in sizes))

    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    figure, (lists, writes) = plt.subplots(1, 2, figsize=(11, 5.5),
                                           gridspec_kw={"width_ratios": [3, 1]})
    # Ten colours repeat: the line style tells the views apart after them.
    for position, name in enumerate(names):
        measured = [size for size in sizes if name in results[size]]
        axis = writes if name.startswith("set-tags") else lists
        axis.plot(measured, [results[size][name][1] for size in measured], marker="o",
                  linestyle=("-", "--", ":", "-.")[position // 10 % 4], label=name)
    for axis, target in ((lists, TARGET_LIST_MS), (writes, TARGET_SET_TAGS_MS)):
        axis.axhline(target, color="black", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        axis.set_xticks(sizes, [f"{size:,}" for size in sizes])
        axis.set_xlabel("queries in the project")
        axis.grid(alpha=0.3)
    # Logarithmic: a view whose cost grows with the project rises; one bound by its page
    # stays level.
    lists.set_yscale("log")
    writes.set_ylim(bottom=0)
    lists.set_ylabel("p95 ms, logarithmic (dashed: target)")
    lists.set_title(f"queries/list, 50 results, exact totals ({database})")
    writes.set_title("set-tags, 1,000 items")
    lists.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(plot, metadata={"Date": None})
    print(f"\nplot: {plot}")


def run(args, url: str, size: int) -> dict[str, tuple]:
    """Measure one database (seeded with `size` queries if empty); returns
    {view: (p50, p95, matches)}."""
    key, project_id, total, popularity = prepare(url, size)
    common_tag = popularity[0]
    rare_tag = popularity[-1]
    print(f"project: {total:,} queries; common tag {common_tag[1]!r} on {common_tag[2]:,}, "
          f"rare tag {rare_tag[1]!r} on {rare_tag[2]:,}")
    print_disk_sizes(url, args.smallest_mib)

    print(f"\nload average before: {load_average()}")
    port = free_port()
    service = start_service(url, port)
    base = f"http://127.0.0.1:{port}/api"
    session = requests.Session()
    session.headers.update({"x-api-key": key, "x-project-id": project_id})
    memory = [sum(p[1] for p in resident_mib(service.pid))]

    views = {
        "first page, no filter": {},
        "language + country": {"languages": ["de"], "countries": ["DE"]},
        "one tag (common)": {"tagIds": [common_tag[0]]},
        "one tag (rare)": {"tagIds": [rare_tag[0]]},
        "substring 'schu' (4 letters)": {"query": "schu"},
        "substring 'shoe' (4 letters)": {"query": "shoe"},
        "text + codes + tag": {"query": "schu", "languages": ["de"], "countries": ["DE"],
                               "tagIds": [common_tag[0]]},
        "sorted by query text": {"sort": [{"field": "query", "direction": "ASC"}]},
        "deep page (by text, page 100)": {"sort": [{"field": "query"}], "page": 100},
        "untagged": {"untagged": True},
        "untagged + language + text": {"untagged": True, "languages": ["de"], "query": "schu"},
        "exclude one tag (common)": {"excludeTagIds": [common_tag[0]]},
        "all of two tags (common)": {"tagIds": [common_tag[0], popularity[1][0]],
                                     "tagMatch": "all"},
        # Literal alternatives are text searches; any other pattern is run on the texts the
        # other filters let through, then remembered (the first requests below show its cost).
        "pattern: 3 words": {"pattern": "schuh|shoe|chaussure"},
        "pattern: 3 words, de": {"pattern": "schuh|shoe|chaussure", "languages": ["de"]},
        "pattern: ^damen.*schuh, de": {"pattern": "^damen.*schuh", "languages": ["de"]},
    }
    if args.views:
        views = {name: body for name, body in views.items() if args.views in name}
    # The facets of every filter above (sorting and paging aside: the same filter).
    facets = {name: {field: value for field, value in body.items()
                     if field not in ("sort", "page")}
              for name, body in views.items() if "sort" not in body}
    results: dict[str, tuple] = {}

    def record(name, timings, matches, note=""):
        results[name] = (statistics.median(timings), percentile(timings, 0.95), matches)
        shown = f"{matches:>11,.0f}" if matches is not None else f"{'':>11}"
        print(f"{name:<34}{statistics.median(timings):>9.1f}"
              f"{percentile(timings, 0.95):>9.1f}{shown}{note}", flush=True)

    try:
        print(f"\n{'queries/list, 50 results':<34}{'p50 ms':>9}{'p95 ms':>9}{'matches':>11}")
        for name, body in views.items():
            def call(body=body):
                response = session.post(base + "/queries/list", json={"limit": 50, **body})
                response.raise_for_status()
                return response.json()
            timings, result = measure(call, args.runs)
            record(name, timings, result["page"]["totalRecords"])
        print(f"\n{'queries/facets':<34}{'p50 ms':>9}{'p95 ms':>9}{'matches':>11}")
        for name, body in facets.items():
            def counted(body=body):
                response = session.post(base + "/queries/facets", json=body)
                response.raise_for_status()
                return response.json()
            timings, result = measure(counted, args.runs)
            record("facets: " + name, timings, result["totalRecords"])
        memory.append(sum(p[1] for p in resident_mib(service.pid)))

        # The views above repeat one request, so a text filter's count is remembered after
        # the first (service/engine/held.py). Here each request is a term's first.
        first_times = {label: ({}, terms, "query")
                       for label, terms in FIRST_TIME_TERMS.items()}
        first_times["text + codes + tag"] = (
            {"languages": ["de"], "countries": ["DE"], "tagIds": [common_tag[0]]},
            FIRST_TIME_TERMS["4 letters"][:20] + FIRST_TIME_TERMS["5–9 letters"], "query")
        first_times["pattern words"] = ({}, FIRST_TIME_PATTERNS["alternatives"], "pattern")
        first_times["pattern regex, de"] = (
            {"languages": ["de"]}, FIRST_TIME_PATTERNS["regex"], "pattern")
        first_times["pattern regex alone"] = (
            {}, FIRST_TIME_PATTERNS["regex"][:3], "pattern")
        if args.views:
            first_times = {label: value for label, value in first_times.items()
                           if args.views in label}
        for label, (rest, terms, field) in first_times.items():
            timings, matches = [], []
            for term in terms:
                started = time.perf_counter()
                response = session.post(base + "/queries/list",
                                        json={"limit": 50, field: term, **rest})
                timings.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                matches.append(response.json()["page"]["totalRecords"])
            record("first request, " + label, timings, statistics.median(matches),
                   f"   ({len(terms)} terms, {min(matches):,}–{max(matches):,} matches, "
                   "median shown)")
        memory.append(sum(p[1] for p in resident_mib(service.pid)))
        if args.views:
            return results

        page = session.post(base + "/queries/list",
                            json={"limit": 1000, "page": 7}).json()["results"]
        tag = rare_tag[0]
        with_tag = [{"query": r["query"], "language": r["language"], "country": r["country"],
                     "tagIds": sorted(set(r["tags"]) | {tag})} for r in page]
        original = [{"query": r["query"], "language": r["language"], "country": r["country"],
                     "tagIds": r["tags"]} for r in page]
        flip = {"state": False}

        def update():
            flip["state"] = not flip["state"]
            body = {"queries": with_tag if flip["state"] else original}
            response = session.patch(base + "/queries/many/tags-only", json=body)
            response.raise_for_status()
            return response.json()

        timings, _ = measure(update, max(10, args.runs // 5))
        print()
        record("set-tags, 1,000 items", timings, None)
        # The same with the common tag, which about a third of the project carries: its
        # bitmap's pieces are dense.
        tag = common_tag[0]
        with_tag = [{"query": r["query"], "language": r["language"], "country": r["country"],
                     "tagIds": sorted(set(r["tags"]) ^ {tag})} for r in page]
        timings, _ = measure(update, max(10, args.runs // 5))
        record("set-tags, 1,000 items, common tag", timings, None)
        session.patch(base + "/queries/many/tags-only", json={"queries": original})
        processes = resident_mib(service.pid)
        memory.append(sum(p[1] for p in processes))
        print("\nservice memory: " + " → ".join(f"{m:.0f}" for m in memory)
              + " MiB resident (started, after the views, the first requests, set-tags); now ("
              + ", ".join(f"{'master' if pid == service.pid else 'worker'} {rss:.0f}, peak "
                          f"{peak:.0f}, anonymous {anonymous:.0f}"
                          for pid, rss, peak, anonymous in processes) + ")")
        print(f"load average after: {load_average()}")
    finally:
        # Its figures taken, the service stops at once (SIGINT: gunicorn's quick stop); a
        # graceful stop (SIGTERM) lingered 2 s on the client's kept-alive connection, at
        # every size.
        session.close()
        service.send_signal(signal.SIGINT)
        service.wait(10)

    if args.explain:
        app = create_app({"DATABASE_URL": url})
        log = StatementLog(app.extensions["tagdesk_engine"])
        for name, body in views.items():
            print(f"\n{name}")
            explain_view(app, log, project_id, body)
        print("\nset-tags")
        explain_set_tags(app, log, project_id, [with_tag, original])
        app.extensions["tagdesk_engine"].dispose()
    return results


if __name__ == "__main__":
    main()
