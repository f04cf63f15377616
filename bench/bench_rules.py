"""Rules at scale: a rule's preview, saving a rule that matches ~100k queries of a 1M project,
and an import into a project with 20 rules beside the same import with none.

    uv run python bench/bench_rules.py                              # 1M, every part
    uv run python bench/bench_rules.py --queries 100000 --import-rows 100000 --runs 10
    uv run python bench/bench_rules.py --no-import                  # preview and save only
    uv run python bench/bench_rules.py --postgres                   # the import on PostgreSQL too

- **Preview**: `POST /api/rules/preview` under gunicorn (1 worker, 4 threads) on the database
  bench_service.py uses (/tmp/tagdesk-bench-<queries>.sqlite3, seeded when empty), for
  conditions with and without a pattern; beside it, in the same rounds, `POST
  /api/queries/facets` of the same condition (a count of the engine, the anchor). p50 and p95
  of sequential requests, ms, after a warm-up.
- **Save**: a rule whose condition matches about 100k queries (the language whose count is
  nearest, with a tag few carry) is applied as the dashboard's job does it — `rules/apply`
  over HTTP, a part at a time, until its cursor ends — and then taken back (`rules/unapply`
  since the first part), which leaves the database as it was. Seconds for each.
- **Import**: `import-queries` of the same file (bench_import.py's, N rows with tags) into two
  fresh SQLite files (and PostgreSQL databases), one project each with the demo's tags, one
  of them with 20 active rules (texts, languages, countries, patterns, untagged); wall
  seconds and the ratio.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from bench.bench_import import (  # noqa: E402
    flask,
    postgres_database,
    prepared,
    run,
    service_env,
    sqlite_database,
    write_csv,
)
from bench.bench_service import database_for, load_average, prepare, start_service  # noqa: E402
from bench.loadkit import free_port, percentile  # noqa: E402
from service import create_app  # noqa: E402
from service.store.db import session_scope  # noqa: E402
from service.store.models import Rule, Tag, utcnow  # noqa: E402

TARGETS = ("preview p95 ≤ 50 ms at 1M; saving a rule of 100k matches ≤ 10 s; an import with 20 "
           "rules ≤ 1.2× the same import without")
PREVIEWS = {
    "text": {"query": "schuhe"},
    "text + language": {"query": "kaufen", "languages": ["de"]},
    "language + country + untagged": {"languages": ["de"], "countries": ["CH"],
                                      "untagged": True},
    "pattern of words": {"pattern": "günstig|billig|cheap|pas cher"},
    "pattern + language": {"pattern": "^(wo|wie|was) ", "languages": ["de"]},
}
# Twenty rules of an import: what a team keeps (their tags: the demo's, by name).
RULES = [
    ({"query": "kaufen"}, "transactional"), ({"query": "buy"}, "transactional"),
    ({"query": "cheap"}, "price"), ({"query": "günstig"}, "price"),
    ({"pattern": "billig|pas cher|barato"}, "price"), ({"query": "how"}, "informational"),
    ({"pattern": "^(wie|was|wo) "}, "informational"), ({"languages": ["de"],
                                                        "countries": ["CH"]}, "local"),
    ({"countries": ["AT"]}, "local"), ({"query": "near me"}, "local"),
    ({"query": "schuhe", "languages": ["de"]}, "product"), ({"query": "shoes"}, "product"),
    ({"query": "nike"}, "brand"), ({"query": "adidas"}, "brand"),
    ({"pattern": "\\d{2,}"}, "product"), ({"untagged": True, "languages": ["fr"]}, "product"),
    ({"query": "review"}, "informational"), ({"query": "sale"}, "price"),
    ({"languages": ["es"], "query": "zapatillas"}, "product"), ({"query": "best"}, "competitor"),
]


def post(session: requests.Session, url: str, path: str, body: dict) -> dict:
    response = session.post(url + path, json=body, timeout=120)
    response.raise_for_status()
    return response.json()


def figures(times: list[float]) -> str:
    return f"{percentile(times, 0.5):.1f} / {percentile(times, 0.95):.1f}"


def previews(session, url: str, runs: int) -> list[tuple[str, str, str, int]]:
    tags = post(session, url, "/api/tags/list", {"limit": 1000})["results"]
    tag_id = tags[-1]["id"]
    found = []
    for name, condition in PREVIEWS.items():
        body = {"condition": condition, "tagIds": [tag_id]}
        matching = post(session, url, "/api/rules/preview", body)["matching"]
        for _ in range(3):  # warm: the pattern's texts are read once
            post(session, url, "/api/rules/preview", body)
            post(session, url, "/api/queries/facets", condition)
        preview, facets = [], []
        for _ in range(runs):
            for path, times, sent in (("/api/rules/preview", preview, body),
                                      ("/api/queries/facets", facets, condition)):
                started = time.perf_counter()
                post(session, url, path, sent)
                times.append((time.perf_counter() - started) * 1000)
        found.append((name, figures(preview), figures(facets), matching))
        print(f"  preview {name}: {figures(preview)} ms (facets {figures(facets)}), "
              f"{matching:,} match", flush=True)
    return found


def save(session, url: str, target: int) -> tuple[int, float, int, float]:
    facets = post(session, url, "/api/queries/facets", {})
    language = min(facets["languages"], key=lambda item: abs(item["count"] - target))
    tag = min(facets["tags"], key=lambda item: item["count"])
    rule = post(session, url, "/api/rules/create", {
        "name": f"bench {time.time():.0f}", "condition": {"languages": [language["value"]]},
        "tagIds": [tag["id"]]})
    try:
        started, cursor, tagged, since = time.perf_counter(), 0, 0, None
        while True:
            part = post(session, url, "/api/rules/apply", {"id": rule["id"], "cursor": cursor})
            since = since or part["appliedAt"]
            tagged += part["tagged"]
            cursor = part["cursor"]
            if cursor is None:
                break
        applied = time.perf_counter() - started
        started, more, operation = time.perf_counter(), True, None
        while more:
            body = {"id": rule["id"], "since": since}
            if operation:
                body["operation"] = operation
            part = post(session, url, "/api/rules/unapply", body)
            operation, more = part["operation"], part["more"]
        taken_back = time.perf_counter() - started
    finally:
        post(session, url, "/api/rules/delete", {"id": rule["id"]})
    print(f"  save: {language['count']:,} matches ({language['value']}), {tagged:,} tagged in "
          f"{applied:.1f} s; taken back in {taken_back:.1f} s", flush=True)
    return language["count"], applied, tagged, taken_back


def add_rules(url: str, project_id: str) -> None:
    app = create_app({"DATABASE_URL": url})
    try:
        with session_scope(app) as session:
            tags = {name: tag_id for tag_id, name in session.execute(
                Tag.__table__.select().with_only_columns(Tag.id, Tag.name).where(
                    Tag.project_id == project_id))}
            now = utcnow()
            for number, (condition, tag) in enumerate(RULES, 1):
                tag_id = tags.get(tag) or next(iter(tags.values()))
                session.add(Rule(project_id=project_id, name=f"rule {number}",
                                 name_folded=f"rule {number}", condition=json.dumps(condition),
                                 tag_ids=json.dumps([tag_id]), paused=False, created_at=now,
                                 updated_at=now))
    finally:
        app.extensions["tagdesk_engine"].dispose()


def imports(rows: int, folder: Path, postgres: bool, pairs: int) -> list[tuple]:
    """Each database: `pairs` pairs of imports, without and with rules, in turn (ABBA: the
    order flips each pair, so a drift of the machine's speed weighs on both alike); the
    median seconds of each and the median of the pairs' ratios."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / f"queries-{rows}.csv"
    if not source.exists():
        write_csv(source, rows)
    databases = [("SQLite", lambda name: sqlite_database(folder, name))]
    if postgres:
        databases.append(("PostgreSQL", lambda _name: postgres_database()))
    found = []
    for label, database in databases:
        seconds = {False: [], True: []}
        ratios = []
        for pair in range(pairs):
            timings = {}
            for rules in ((False, True) if pair % 2 == 0 else (True, False)):
                with database(f"rules-{int(rules)}.sqlite3") as url:
                    project_id = prepared(url)
                    if rules:
                        add_rules(url, project_id)
                    timing = run(f"import, {label}", [flask("import-queries", project_id,
                                                            str(source))], service_env(url), rows)
                    timings[rules] = timing.seconds
                    seconds[rules].append(timing.seconds)
            ratios.append(timings[True] / timings[False])
            print(f"  import {label}, pair {pair + 1}: {timings[False]:.1f} s without rules, "
                  f"{timings[True]:.1f} s with 20 ({ratios[-1]:.2f}×)", flush=True)
        found.append((label, median(seconds[False]), median(seconds[True]), median(ratios),
                      min(ratios), max(ratios)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--import-rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tagdesk-bench-import"))
    parser.add_argument("--no-import", action="store_true")
    parser.add_argument("--no-service", action="store_true", help="the import only")
    parser.add_argument("--postgres", action="store_true", help="the import on PostgreSQL too")
    parser.add_argument("--pairs", type=int, default=3,
                        help="imports without and with rules, in turn, this many times")
    args = parser.parse_args()
    print(f"targets: {TARGETS}\nload average before: {load_average()}", flush=True)
    preview_rows, saved = [], None
    if not args.no_service:
        url = database_for(None, args.queries)
        key, project_id, total, _popularity = prepare(url, args.queries)
        port = free_port()
        service = start_service(url, port)
        try:
            session = requests.Session()
            session.headers.update({"x-api-key": key, "x-project-id": project_id})
            base = f"http://127.0.0.1:{port}"
            preview_rows = previews(session, base, args.runs)
            saved = save(session, base, args.queries // 10)
        finally:
            service.terminate()
            service.wait(timeout=30)
    import_rows = [] if args.no_import else imports(args.import_rows, args.folder, args.postgres,
                                                           args.pairs)
    print(f"\nload average after: {load_average()}\n")
    if preview_rows:
        print(f"| preview, {args.queries:,} queries | matches | preview p50 / p95 ms "
              "| facets p50 / p95 ms |\n|---|---:|---:|---:|")
        for name, preview, facets, matching in preview_rows:
            print(f"| {name} | {matching:,} | {preview} | {facets} |")
    if saved:
        matching, applied, tagged, taken_back = saved
        print(f"\n| save, {args.queries:,} queries | matches | tagged | seconds |\n"
              f"|---|---:|---:|---:|\n| rules/apply, every part | {matching:,} | {tagged:,} | "
              f"{applied:.1f} |\n| rules/unapply since (its undo) | | | {taken_back:.1f} |")
    if import_rows:
        print(f"\n| import, {args.import_rows:,} rows, median of {args.pairs} pairs "
              "| no rules s | 20 rules s | ratio (min–max) |\n|---|---:|---:|---:|")
        for label, without, with_rules, ratio, low, high in import_rows:
            print(f"| {label} | {without:.1f} | {with_rules:.1f} | "
                  f"{ratio:.2f}× ({low:.2f}–{high:.2f}) |")


if __name__ == "__main__":
    main()
