"""Benchmark (not a test): the queries page in a real browser — from a change of the view to
its new rows painted, then to the counts beside every picker option painted, and whole page
loads.

    uv run python bench/bench_browser.py --database /tmp/tagdesk-bench-1000000.sqlite3
    uv run python bench/bench_browser.py --queries 5000 --embedded    # the demo's setup
    uv run python bench/bench_browser.py --database … --changes 30 --loads 10
    uv run python bench/bench_browser.py --database … --trace language   # where the time goes

Playwright drives Debian's headless Chromium (/usr/bin/chromium) against the dashboard as
deployed: the service and the dashboard each under gunicorn in a process of their own (one
worker with 4 threads each, loopback HTTP between them, rate limits lifted, Server-Timing on);
with --embedded, the demo's shape (werkzeug in this process, the service inside it). One person
signs in, waits until the project's suggestions are no longer being learned (its first look
starts that, beside the pages: bench_dashboard.learned), and, on the main project's queries
page, makes --changes changes of each kind after --warmup unmeasured ones:

- language, country, tag   an option ticked or unticked in its picker (tick, untick, next);
- untagged                 the tag picker's Untagged ticked, then unticked;
- exclude tag              a tag's Exclude ticked or unticked;
- 2nd tag, all of          from a view of one tag with "All of" chosen, a second tag ticked or
                           unticked (the queries carrying both);
- any/all of               with two tags included, All of and Any of chosen in turn;
- text                     a search typed (measured from the end of its 300 ms pause, when the
                           request starts);
- next page, sort          Next page; a column's sort link.

Each change is waited for until its rows and its counts are painted, so that no change's
counts request is cut short by the next change.

A script added to every document (not part of the product) marks each step in the page's
Performance timeline: the person's click (its event time), htmx's request start, the answer's
swap, htmx's settle, then one animation frame and a task after it — the new rows painted. Meanwhile
static/counts.js sends its one counts request (htmx:afterSettle on #results) and paints its
answer a task after the rows' frame (paint), which ends by setting the form's `data-counted` to
the address counted: a MutationObserver sees that attribute name the change's address, then one
animation frame and a task after it — the counts painted. The address itself is pushed into
history after the rows are painted (static/address.js): the change's address is the one the
page says it shows (Tagdesk.viewSearch). Per change, rows:

- total        click (or the end of the typing pause) -> rows painted;
- to request   click -> request sent (the change event, htmx gathering the form);
- network      request sent -> answer in hand (loopback HTTP and the dashboard's work);
  server       of which inside the dashboard (its Server-Timing `total`);
  api          of which waiting on the service (its Server-Timing `api`): the rest of
               server is the dashboard's own work;
- swap         parsing the answer and putting it in the page (htmx:beforeSwap -> afterSwap);
- settle       htmx's settle step (afterSwap -> afterSettle, its settle delay included);
- paint        afterSettle -> the next frame painted (style, layout, paint).

and rows and counts side by side:

- rows          click -> rows painted (the total above);
- counts        click -> counts painted;
- rows->counts  rows painted -> counts painted;
- counts req    the counts request, sent -> answer in hand (Resource Timing), and counts
                server, the dashboard's time in it (its Server-Timing `total`);
- browser       the page's requests per change (XHR and fetch, by Resource Timing; expected:
                1 htmx request for the rows + 1 for the counts), and which;
- API           the service's requests per change, made by the dashboard (counted at the
                service: its access log, or around its WSGI callable with --embedded;
                expected 2: the rows, then the facets);
- load1         the machine's 1-minute load average after the kind's changes (also printed:
                the load averages at the start and the end of the run).

Targets printed beside the figures: rows painted p95 ≤ 75 ms and counts painted p95 ≤ 150 ms
after the change (worst kind), 2 API calls per change, page load p95 ≤ 300 ms.

Page loads: --loads whole-page navigations over a few views, navigation start -> load event
(Navigation Timing), with the dashboard's own time (Server-Timing). Sizes: the htmx answer of
the default view (50 rows) and the whole page, as the browser received them."""

from __future__ import annotations

import itertools
import os
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from bench.bench_dashboard import (  # noqa: E402
    PROJECT,
    Embedded,
    Processes,
    learned,
    prepared_setup,
    setup_parser,
)
from bench.loadkit import percentile  # noqa: E402
from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

# Marks each step of a change in the page's Performance timeline and keeps the figures in
# window.__bench. The benchmark "arms" it before each change: only armed changes count.
INSTRUMENT = """
(() => {
  const bench = window.__bench = {armed: null, pending: null, done: [], waiting: []};
  // The benchmark waits on a promise, not by polling the page (which would add work to
  // every frame it measures).
  bench.after = (count) => new Promise((resolve) => {
    if (bench.done.length > count) resolve();
    else bench.waiting.push([count, resolve]);
  });
  const now = () => performance.now();
  const server = (entry) => entry
    ? Object.fromEntries(entry.serverTiming.map((t) => [t.name, t.duration])) : {};
  // A change is done once its rows and its counts are painted (or the counts are given up
  // on: COUNTS_PATIENCE ms after the rows).
  // A page without counts (a deployment without facets, an older version) waits for none.
  const countless = () => !document.querySelector("form[data-counts-url]");
  const finish = (p) => {
    if (p.finished || p.painted === undefined
        || (p.counted === undefined && !p.gaveUp && !countless())) return;
    p.finished = true;
    const calls = performance.getEntriesByType("resource").filter((entry) =>
      entry.initiatorType === "xmlhttprequest" || entry.initiatorType === "fetch");
    p.requests = calls.map((entry) => entry.name);
    const counts = calls.filter((entry) => entry.name.includes("/counts")).pop();
    if (counts) {
      p.countsRequest = counts.responseEnd - counts.startTime;
      p.countsServer = server(counts);
      p.countsSize = counts.decodedBodySize;
    }
    bench.done.push(p);
    bench.pending = null;
    bench.armed = null;
    performance.clearResourceTimings();
    bench.waiting = bench.waiting.filter(([count, resolve]) =>
      bench.done.length > count ? (resolve(), false) : true);
  };
  document.addEventListener("click", (event) => {
    if (bench.armed && bench.armed !== "text" && !bench.pending) {
      bench.pending = {kind: bench.armed, t0: event.timeStamp};
      performance.mark("bench:change", {startTime: event.timeStamp});
    }
  }, true);
  document.addEventListener("htmx:confirm", () => {
    if (bench.armed === "text" && !bench.pending) {  // the typing pause is over
      bench.pending = {kind: "text", t0: now()};
      performance.mark("bench:change");
    }
  });
  document.addEventListener("htmx:beforeRequest", () => {
    if (bench.pending && bench.pending.request === undefined) {
      bench.pending.request = now();
      performance.mark("bench:request");
    }
  });
  document.addEventListener("htmx:beforeSwap", (event) => {
    const p = bench.pending;
    if (!p || p.beforeSwap !== undefined) return;
    p.beforeSwap = now();
    performance.mark("bench:beforeSwap");
    p.url = event.detail.xhr.responseURL;
  });
  document.addEventListener("htmx:afterSwap", () => {
    const p = bench.pending;
    if (p && p.beforeSwap !== undefined && p.afterSwap === undefined) {
      p.afterSwap = now();
      performance.mark("bench:afterSwap");
    }
  });
  // counts.js (listening on #results itself) has sent the counts request, to be painted after
  // the rows' paint marked below; the settle is marked with the address they will be painted
  // for (the view's, pushed into history after that paint; location.search before address.js).
  document.addEventListener("htmx:afterSettle", () => {
    const p = bench.pending;
    if (!p || p.afterSwap === undefined || p.settled !== undefined) return;
    p.settled = now();
    p.search = window.Tagdesk && Tagdesk.viewSearch ? Tagdesk.viewSearch() : location.search;
    performance.mark("bench:settled");
    requestAnimationFrame(() => {
      p.frame = now();
      setTimeout(() => {
        p.painted = now();
        performance.mark("bench:painted");
        const entries = performance.getEntriesByName(p.url, "resource");
        const entry = entries[entries.length - 1];
        if (entry) {
          p.size = entry.decodedBodySize;
          p.server = server(entry);
        }
        setTimeout(() => { p.gaveUp = true; finish(p); }, COUNTS_PATIENCE);
        finish(p);
      }, 0);
    });
  });
  // counts.js's paint ends by setting the form's data-counted to the address it counted:
  // the counts of this change once it names the change's address, after its rows settled.
  new MutationObserver((records) => {
    const p = bench.pending;
    if (!p || p.settled === undefined || p.countsSet !== undefined) return;
    const form = records.map((r) => r.target).find((el) =>
      el.getAttribute("data-counted") === p.search);
    if (!form) return;
    p.countsSet = now();
    performance.mark("bench:countsSet");
    requestAnimationFrame(() => {
      setTimeout(() => {
        p.counted = now();
        performance.mark("bench:counted");
        finish(p);
      }, 0);
    });
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-counted"]});
})();
""".replace("COUNTS_PATIENCE", "10000")

PHASES = (("total", "t0", "painted"), ("to request", "t0", "request"),
          ("network", "request", "beforeSwap"), ("swap", "beforeSwap", "afterSwap"),
          ("settle", "afterSwap", "settled"), ("paint", "settled", "painted"))
KINDS = ("language", "country", "tag", "untagged", "exclude tag", "2nd tag, all of",
         "any/all of", "text", "next page", "sort")
TERMS = ("schu", "shoe", "running", "damen", "jacke", "boots", "sale")
LOAD_VIEWS = ("", "?page=2", "?lang=de", "?country=GB", "?sort=query", "?q=schu")
TARGET_CHANGE_P95 = 75.0
TARGET_COUNTS_P95 = 150.0
TARGET_API_CALLS = 2  # per change of the view: the rows, then the facets
VIEW_PATHS = ("/api/queries/list", "/api/queries/facets")


def view_calls(by_path: dict[str, float]) -> float:
    """The calls of the view itself (its rows and its counts) per change."""
    return sum(by_path.get(path, 0.0) for path in VIEW_PATHS)
TARGET_LOAD_P95 = 300.0


def sign_in(page, base: str, key: str) -> str:
    """The main project's queries URL, signed in."""
    page.goto(base + "/signin")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/projects"))
    link = page.get_by_role("link", name=PROJECT, exact=True).first
    if link.count():
        return base + link.get_attribute("href")
    return page.url.split("?")[0]


def picker_values(page, index: int, name: str, count: int) -> list[str]:
    """Values of the picker's first options (the codes seen in the project come first)."""
    return page.locator(f"details[data-picker] >> nth={index}").locator(
        f'input[name="{name}"]').evaluate_all(
        f"boxes => boxes.slice(0, {count}).map(box => box.value)")


def tag_picker(page):
    return page.locator("details[data-picker][data-tag-picker]")


def opener(picker):
    def open_picker():
        if not picker.evaluate("details => details.open"):
            picker.locator("summary").click()
    return open_picker


def start_view(page, kind: str) -> str:
    """The address the changes of `kind` start from: one tag included (All of) for a second
    tag, two included for Any/All of; the project's default view otherwise."""
    if kind not in ("2nd tag, all of", "any/all of"):
        return ""
    first, second = picker_values(page, 2, "tag", 2)
    if kind == "2nd tag, all of":
        return "?" + urlencode([("tag", first), ("tagmatch", "all")])
    return "?" + urlencode([("tag", first), ("tag", second)])


def changes(page, kind: str):
    """An endless series of actions, each changing the view once."""
    if kind in ("language", "country", "tag", "exclude tag", "2nd tag, all of"):
        index, name = {"language": (0, "lang"), "country": (1, "country"), "tag": (2, "tag"),
                       "exclude tag": (2, "nottag"), "2nd tag, all of": (2, "tag")}[kind]
        picker = page.locator(f"details[data-picker] >> nth={index}")
        values = picker_values(page, index, name, 5)
        if kind == "2nd tag, all of":  # the tags not already included
            included = set(picker.locator('input[name="tag"]:checked').evaluate_all(
                "boxes => boxes.map(box => box.value)"))
            values = [value for value in values if value not in included][:4]
        else:
            values = values[:4]
        for value in itertools.cycle(values):
            box = picker.locator(f'input[name="{name}"][value="{value}"]')
            for _ in range(2):  # tick, then untick: each a change
                yield opener(picker), box.click
    elif kind == "untagged":
        picker = tag_picker(page)
        for _ in itertools.count():  # ticked, then unticked
            yield opener(picker), picker.locator('input[name="untagged"]').click
    elif kind == "any/all of":
        picker = tag_picker(page)
        for match in itertools.cycle(("all", "any")):
            yield opener(picker), picker.locator(
                f'input[name="tagmatch"][value="{match}"]').click
    elif kind == "text":
        for term in itertools.cycle(TERMS):
            yield None, lambda term=term: page.fill("#search", term)
    elif kind == "next page":
        for _ in itertools.count():
            yield None, page.locator("nav.pagination").get_by_role(
                "link", name="Next", exact=True).click
    elif kind == "sort":
        for column in itertools.cycle(("Query", "Language", "Country", "Updated")):
            yield None, page.locator("thead").get_by_role(
                "link", name=column, exact=True).click


def measure_changes(page, url: str, kind: str, count: int, warmup: int,
                    meter=None) -> tuple[list[dict], dict[str, float] | None]:
    """`count` changes of `kind` after `warmup` unmeasured ones, each waited for until its
    rows and its counts are painted; and the service's requests per measured change by path
    (with `meter`, the setup's count of the service's requests)."""
    page.goto(url)
    page.wait_for_function("() => window.htmx !== undefined")
    start = start_view(page, kind)
    if start:
        page.goto(url + start)
        page.wait_for_function("() => window.htmx !== undefined")
    done = []
    for number, (prepare, act) in enumerate(itertools.islice(changes(page, kind),
                                                           warmup + count)):
        if number == warmup and meter is not None:
            meter.reset()
        if prepare:
            prepare()
        before = page.evaluate("window.__bench.done.length")
        page.evaluate(f"window.__bench.armed = {kind!r}")
        act()
        page.evaluate("before => window.__bench.after(before)", before)
        if number >= warmup:
            done.append(page.evaluate("window.__bench.done[window.__bench.done.length - 1]"))
    if meter is None:
        return done, None
    meter.read()
    return done, {path: number / max(1, count) for path, number in meter.paths.items()}


def measure_loads(page, url: str, count: int) -> list[dict]:
    loads = []
    for view in itertools.islice(itertools.cycle(LOAD_VIEWS), count + len(LOAD_VIEWS)):
        page.goto(url + view, wait_until="load")
        loads.append(page.evaluate("""() => {
          const nav = performance.getEntriesByType("navigation")[0];
          return {load: nav.loadEventEnd - nav.startTime,
                  response: nav.responseEnd - nav.startTime,
                  dom: nav.domContentLoadedEventEnd - nav.startTime,
                  size: nav.decodedBodySize,
                  server: Object.fromEntries(nav.serverTiming.map(t => [t.name, t.duration]))};
        }"""))
    return loads[len(LOAD_VIEWS):]  # the first round warms up


def sizes(page, url: str) -> tuple[int, int]:
    """Bytes of the htmx answer and of the whole page, for the default view (50 rows)."""
    return tuple(page.evaluate("""async (url) => {
      const partial = await fetch(url, {headers: {"HX-Request": "true"}});
      const whole = await fetch(url);
      return [(await partial.text()).length, (await whole.text()).length];
    }""", url))


MARKS = ("bench:change", "bench:request", "bench:beforeSwap", "bench:afterSwap",
         "bench:settled", "bench:painted")
TRACE_CATEGORIES = ["devtools.timeline", "v8.execute", "blink", "blink.user_timing", "loading"]


def trace_phases(browser, page, url: str, kind: str, count: int) -> dict[str, tuple]:
    """`count` changes of `kind` under Chromium's tracing: for each phase, its wall time and
    the page's main thread's own time per trace event (style, layout, paint, parsing, script),
    in ms per change. The tracing itself slows the page: compare shares, not totals."""
    import json
    from collections import Counter

    measure_changes(page, url, kind, 2, 0)
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    measure_changes(page, url, kind, count, 1)
    events = json.loads(browser.stop_tracing())["traceEvents"]
    marks = sorted((e["ts"], e["name"]) for e in events
                   if e.get("name") in MARKS and e.get("ph") in ("R", "I", "i", "n"))
    windows: dict[str, list[tuple[float, float]]] = {}
    current: dict[str, float] = {}
    for ts, name in marks:
        if name == MARKS[0]:
            current = {name: ts}
        elif current and name not in current:
            current[name] = ts
        if name == MARKS[-1] and len(current) == len(MARKS):
            for start, end in itertools.pairwise(MARKS):
                phase = start.split(":")[1] + " -> " + end.split(":")[1]
                windows.setdefault(phase, []).append((current[start], current[end]))
    main = Counter((e["pid"], e["tid"]) for e in events
                   if e.get("name") in ("Layout", "UpdateLayoutTree")).most_common(1)[0][0]
    spans = sorted((e for e in events if (e["pid"], e["tid"]) == main and e.get("ph") == "X"
                    and "dur" in e), key=lambda e: (e["ts"], -e["dur"]))
    phases = {}
    for phase, ranges in windows.items():
        own: Counter = Counter()
        stack: list[dict] = []
        for span in spans:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= span["ts"]:
                stack.pop()
            inside = sum(max(0, min(span["ts"] + span["dur"], end) - max(span["ts"], start))
                         for start, end in ranges)
            if stack:
                own[stack[-1]["name"]] -= inside
            own[span["name"]] += inside
            stack.append(span)
        changes_seen = len(ranges)
        wall = sum(end - start for start, end in ranges) / changes_seen / 1000
        phases[phase] = (wall, [(name, us / changes_seen / 1000)
                                for name, us in own.most_common(6) if us > 0])
    return phases


def report_trace(kind: str, phases: dict[str, tuple]) -> None:
    print(f"\nwhere a change's time goes on the page's main thread ({kind}, traced; ms per change)")
    for phase, (wall, own) in phases.items():
        print(f"  {phase:<24} wall {wall:6.1f}   " +
              ", ".join(f"{name} {ms:.1f}" for name, ms in own if ms >= 0.5))


def p50_p95(values: list[float]) -> str:
    if not values:
        return f"{'-':>6} {'-':>6}"
    return f"{statistics.median(values):6.1f} {percentile(values, .95):6.1f}"


def counted(samples: list[dict]) -> list[dict]:
    return [s for s in samples if s.get("counted") is not None]


def report(results: dict[str, list[dict]], calls: dict[str, dict[str, float] | None],
           loadavg: dict[str, tuple[float, float, float]], loads: list[dict], partial: int,
           whole: int, label: str, total_queries: int) -> None:
    print(f"\nTagdesk queries page in Chromium — {total_queries:,} queries (SQLite), {label}")
    print(f"answer for 50 rows: {partial / 1024:.1f} KB of HTML (htmx partial); "
          f"whole page {whole / 1024:.1f} KB")
    print("load averages (1, 5, 15 min): " + "; ".join(
        f"{when} {one:.2f} {five:.2f} {fifteen:.2f}"
        for when, (one, five, fifteen) in loadavg.items() if when in ("start", "end")) +
        f" — {os.cpu_count()} cores\n")

    print("rows: click -> new rows painted")
    header = "".join(f"{name:>15}" for name, _, _ in PHASES) + f"{'server':>15}{'api':>15}"
    print(f"{'change (p50 p95, ms)':<22}{'n':>3}{header}")

    def server_cells(samples: list[dict]) -> list[str]:
        return [p50_p95([s.get("server", {}).get(name, 0.0) for s in samples])
                for name in ("total", "api")]

    for kind, samples in results.items():
        cells = []
        for _name, start, end in PHASES:
            cells.append(p50_p95([s[end] - s[start] for s in samples]))
        cells += server_cells(samples)
        print(f"{kind:<22}{len(samples):>3}" + "".join(f"{cell:>15}" for cell in cells))
    every = [s for samples in results.values() for s in samples]
    cells = [p50_p95([s[end] - s[start] for s in every]) for _, start, end in PHASES]
    cells += server_cells(every)
    print(f"{'all changes':<22}{len(every):>3}" + "".join(f"{cell:>15}" for cell in cells))
    answer_kb = [s.get("size", 0) / 1024 for s in every]
    print(f"  answers' size: median {statistics.median(answer_kb):.1f} KB")

    print("\nrows and counts: click -> rows painted, click -> counts painted (p50 p95, ms); "
          "requests per change")
    print(f"{'change':<22}{'n':>3}{'rows':>15}{'counts':>15}{'rows->counts':>15}"
          f"{'counts req':>15}{'counts server':>15}{'browser':>9}{'API':>6}{'load1':>7}")
    worst_rows = worst_counts = 0.0
    worst_calls = 0.0
    for kind, samples in results.items():
        with_counts = counted(samples)
        rows_p95 = percentile([s["painted"] - s["t0"] for s in samples], .95)
        worst_rows = max(worst_rows, rows_p95)
        if with_counts:
            counts_p95 = percentile([s["counted"] - s["t0"] for s in with_counts], .95)
            worst_counts = max(worst_counts, counts_p95)
        if len(with_counts) < len(samples):
            worst_counts = float("inf")
        browser = statistics.mean(len(s.get("requests", ())) for s in samples)
        by_path = calls.get(kind)
        api = None if by_path is None else sum(by_path.values())
        if by_path is not None:
            worst_calls = max(worst_calls, view_calls(by_path))
        print(f"{kind:<22}{len(samples):>3}"
              f"{p50_p95([s['painted'] - s['t0'] for s in samples]):>15}"
              f"{p50_p95([s['counted'] - s['t0'] for s in with_counts]):>15}"
              f"{p50_p95([s['counted'] - s['painted'] for s in with_counts]):>15}"
              f"{p50_p95([s.get('countsRequest', 0.0) for s in with_counts]):>15}"
              f"{p50_p95([s.get('countsServer', {}).get('total', 0.0) for s in with_counts]):>15}"
              f"{browser:>9.2f}{(f'{api:.2f}' if api is not None else '-'):>6}"
              f"{loadavg[kind][0]:>7.2f}"
              + (f"   ({len(samples) - len(with_counts)} without counts)"
                 if len(with_counts) < len(samples) else ""))
    with_counts = counted(every)
    print(f"{'all changes':<22}{len(every):>3}"
          f"{p50_p95([s['painted'] - s['t0'] for s in every]):>15}"
          f"{p50_p95([s['counted'] - s['t0'] for s in with_counts]):>15}"
          f"{p50_p95([s['counted'] - s['painted'] for s in with_counts]):>15}"
          f"{p50_p95([s.get('countsRequest', 0.0) for s in with_counts]):>15}"
          f"{p50_p95([s.get('countsServer', {}).get('total', 0.0) for s in with_counts]):>15}"
          f"{statistics.mean(len(s.get('requests', ())) for s in every):>9.2f}")
    paths = Counter(re.sub(r"^https?://[^/]+|\?.*$", "", url)
                    for s in every for url in s.get("requests", ()))
    print("  counts req: the counts request, sent -> answered (Resource Timing); counts server: "
          "the dashboard's time in it (Server-Timing total)")
    print("  browser: the page's requests per change (XHR and fetch): " + ", ".join(
        f"{path} {number / len(every):.2f}" for path, number in paths.most_common()))
    print("  API: the service's requests per change (counted at the service), by the dashboard; "
          "load1: the 1-minute load average after the kind's changes")
    print("  addresses of each kind's first two measured changes: " + "; ".join(
        f"{kind} {' '.join(s.get('search') or '(default)' for s in samples[:2])}"
        for kind, samples in results.items()))

    print(f"\nwhole page loads ({len(loads)}: {', '.join(v or 'default' for v in LOAD_VIEWS)})"
          f"        p50    p95")
    for name, key in (("navigation start -> load", "load"),
                      ("navigation start -> DOMContentLoaded", "dom"),
                      ("navigation start -> response end", "response")):
        print(f"  {name:<40}{p50_p95([each[key] for each in loads])}")
    print(f"  {'dashboard (Server-Timing total)':<40}"
          f"{p50_p95([each['server'].get('total', 0.0) for each in loads])}")
    load_p95 = percentile([each["load"] for each in loads], .95)

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    print("\nTargets")
    print(f"  rows painted p95 ≤ {TARGET_CHANGE_P95:.0f} ms after the change: worst kind "
          f"{worst_rows:.1f} ms ({verdict(worst_rows <= TARGET_CHANGE_P95)})")
    print(f"  counts painted p95 ≤ {TARGET_COUNTS_P95:.0f} ms after the change: worst kind "
          f"{worst_counts:.1f} ms ({verdict(worst_counts <= TARGET_COUNTS_P95)})")
    if calls and all(value is not None for value in calls.values()):
        print(f"  API calls per change = {TARGET_API_CALLS} (rows + facets): at most "
              f"{worst_calls:.2f} ({verdict(worst_calls <= TARGET_API_CALLS)})")
        others = Counter()
        for by_path in calls.values():
            others.update({path: number / len(calls) for path, number in by_path.items()
                           if path not in VIEW_PATHS})
        if others:
            print("    and besides, per change: " + ", ".join(
                f"{path} {number:.2f}" for path, number in others.most_common()) +
                  " (the dashboard's caches read again: the tag list's and projects' 60 s)")
    print(f"  page load p95 ≤ {TARGET_LOAD_P95:.0f} ms: {load_p95:.1f} ms "
          f"({verdict(load_p95 <= TARGET_LOAD_P95)})")


def main() -> None:
    parser = setup_parser(__doc__.split("\n\n")[0], 5_000)
    parser.add_argument("--changes", type=int, default=24, help="measured changes per kind")
    parser.add_argument("--warmup", type=int, default=4, help="unmeasured changes per kind")
    parser.add_argument("--loads", type=int, default=24, help="measured whole-page loads")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS),
                        help="only these kinds of change (e.g. to compare with a version "
                             "of the page that lacks the others)")
    parser.add_argument("--trace", metavar="KIND", choices=KINDS,
                        help="afterwards, trace --changes changes of this kind: the page's "
                             "main thread's time per phase (style, layout, paint, script…)")
    args = parser.parse_args()

    url, total_queries, key = prepared_setup(args)

    from playwright.sync_api import sync_playwright

    setup = (Embedded if args.embedded else Processes)(url)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(INSTRUMENT)
                page = context.new_page()
                queries_url = sign_in(page, setup.base, key)
                state, waited = learned(setup.api_url, key, queries_url.split("/")[-2])
                print(f"suggestions {state!r} after {waited:.1f} s: measured from here", flush=True)
                loadavg = {"start": os.getloadavg()}
                results, calls = {}, {}
                for kind in args.kinds:
                    results[kind], calls[kind] = measure_changes(
                        page, queries_url, kind, args.changes, args.warmup, setup.meter)
                    loadavg[kind] = os.getloadavg()
                loads = measure_loads(page, queries_url, args.loads)
                partial, whole = sizes(page, queries_url)
                loadavg["end"] = os.getloadavg()
                traced = (trace_phases(browser, page, queries_url, args.trace, args.changes)
                          if args.trace else None)
            finally:
                browser.close()
    finally:
        setup.close()
    report(results, calls, loadavg, loads, partial, whole, setup.label, total_queries)
    if traced:
        report_trace(args.trace, traced)


if __name__ == "__main__":
    main()
