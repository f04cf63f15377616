"""Benchmark (not a test): tagging 300 untagged queries by keyboard alone, with and without
suggested tags — the keys pressed and the seconds taken, both reported.

    uv run python bench/bench_keyboard_tagging.py
    uv run python bench/bench_keyboard_tagging.py --untagged 60 --tagged 200   # a short run

A project of generated shop queries in five themes (brand, sale, question, local, seasonal;
each query belongs to exactly one), --tagged of them tagged with their theme and --untagged
left untagged, is made twice in the dashboard with the service embedded (werkzeug on
loopback, as `uv run flask --app app run` serves it). Suggestions are learned for both
projects before the browser starts. A scripted person then opens the project's untagged view
(`?untagged=1&sort=query`), knows each query's theme, and works by keyboard only:

- without suggestions, a page at a time and a tag at a time: j/k to each row of that tag, x
  to select it, then l, the tag's first four letters, Tab, Space, Tab to Apply, Enter;
- with suggestions, first `a` on each row whose first suggestion is its theme (j/k to it),
  then as without suggestions for the rows left.

A key is one key press (Shift+A would be one); a page read again to show the next untagged
rows counts as one key (F5). Seconds are the script's wall time from the first key to the last
row tagged: the machine's share of the work (the dashboard, the service, the browser), not a
person's thinking time. Every query's tags are checked against its theme at the end.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

THEMES = {
    "brand": (["nike", "adidas", "puma", "reebok", "asics", "new balance", "skechers", "vans",
               "converse", "salomon", "hoka", "brooks"],
              ["{w} {p}", "{w} {p} men", "{w} {p} women", "{w} outlet {p}", "buy {w} {p}"]),
    "sale": (["discount", "cheap", "sale", "deal", "coupon", "clearance", "offer", "bargain",
              "reduced", "promo code"],
             ["{w} {p}", "{p} {w}", "best {p} {w}", "{p} on {w}", "{w} {p} online"]),
    "question": (["how to", "what is", "why do", "can i", "where to", "which", "how much",
                  "when to"],
                 ["{w} clean {p}", "{w} choose {p}", "{w} buy {p}", "{w} wash {p}",
                  "{w} size {p}"]),
    "local": (["near me", "in london", "in berlin", "nearby", "in paris", "open now",
               "in madrid", "downtown"],
              ["{p} {w}", "{p} shop {w}", "{p} repair {w}", "{p} store {w}", "{p} sale {w}"]),
    "seasonal": (["christmas", "summer", "winter", "black friday", "easter", "autumn",
                  "halloween", "spring"],
                 ["{w} {p}", "{p} for {w}", "{w} {p} gift", "{w} {p} ideas", "new {w} {p}"]),
}
PRODUCTS = ["shoes", "boots", "sandals", "sneakers", "socks", "jacket", "hoodie", "backpack",
            "hat", "gloves", "trainers", "slippers", "scarf", "raincoat", "shorts", "leggings"]


def shop_queries(count: int, seed: int) -> list[tuple[str, str]]:
    """`count` distinct (query, theme) pairs, the themes in turn."""
    rng, seen, made = random.Random(seed), set(), []
    themes = list(THEMES)
    while len(made) < count:
        theme = themes[len(made) % len(themes)]
        words, shapes = THEMES[theme]
        text = rng.choice(shapes).format(w=rng.choice(words), p=rng.choice(PRODUCTS))
        if text not in seen:
            seen.add(text)
            made.append((text, theme))
    return made


@dataclass
class Tally:
    keys: int = 0
    accepted: int = 0  # rows tagged by `a`
    by_hand: int = 0  # rows tagged through Add tags
    seconds: float = 0.0
    pressed: dict = field(default_factory=dict)

    def press(self, page, key: str, times: int = 1) -> None:
        for _ in range(times):
            page.keyboard.press(key)
        self.keys += times
        self.pressed[key] = self.pressed.get(key, 0) + times

    def type(self, page, text: str) -> None:
        page.keyboard.type(text)
        self.keys += len(text)
        self.pressed["letters"] = self.pressed.get("letters", 0) + len(text)


def wait_tagged(page, queries: list[str]) -> None:
    """Until each of these queries' rows shows a tag, or has left the view of untagged queries
    (the edit's answer is on the page, htmx done with it)."""
    page.wait_for_function("""queries => !document.querySelector(
        '.htmx-request, .htmx-swapping, .htmx-settling') && queries.every(query => Array.from(
        document.querySelectorAll('tr[data-row]')).every(row =>
            row.querySelector('td.col-query').innerText.trim() !== query
            || row.querySelector('ul.chips')))""", arg=queries)


def screen(page) -> list[dict]:
    """The rows on screen: query, whether it carries a tag, its suggestions (tag names, best
    first), and whether the cursor is on it."""
    return page.locator("tr[data-row]").evaluate_all("""rows => rows.map(row => ({
        query: row.querySelector('td.col-query').innerText.trim(),
        tagged: !!row.querySelector('ul.chips'),
        suggested: Array.from(row.querySelectorAll('[data-suggestion-accept]')).map(
            button => button.getAttribute('aria-label')),
        cursor: row.classList.contains('row--cursor'),
    }))""")


def first_suggestion(row: dict) -> str | None:
    for label in row["suggested"]:
        found = re.match(r"^Accept (.+) for ", label)
        if found and found.group(1) != "all":
            return found.group(1)
    return None


def move_to(page, tally: Tally, rows: list[dict], index: int) -> None:
    """j/k from the cursor's row (none yet: j lands on the first row) to row `index`."""
    at = next((n for n, row in enumerate(rows) if row["cursor"]), None)
    if at is None:
        tally.press(page, "j")
        at = 0
    if index > at:
        tally.press(page, "j", index - at)
    elif index < at:
        tally.press(page, "k", at - index)


def add_by_hand(page, tally: Tally, tag: str, queries: list[str]) -> None:
    """l, then in the Add tags dialog: the tag's first letters, Tab to it, Space, Tab to Apply,
    Enter."""
    tally.press(page, "l")
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Find a tag").wait_for()
    tally.type(page, tag[:4])
    tally.press(page, "Tab")
    tally.press(page, "Space")
    apply = dialog.get_by_role("button", name="Apply", exact=True)
    for _ in range(8):
        if apply.evaluate("button => button === document.activeElement"):
            break
        tally.press(page, "Tab")
    tally.press(page, "Enter")
    dialog.wait_for(state="hidden")
    wait_tagged(page, queries)


def tag_the_view(page, url: str, truth: dict[str, str], with_suggestions: bool) -> Tally:
    tally = Tally()
    page.goto(url)
    started = time.perf_counter()
    while True:
        rows = screen(page)
        todo = [n for n, row in enumerate(rows) if not row["tagged"] and row["query"] in truth]
        if not todo:
            if not rows:
                break
            tally.keys += 1  # F5: the page read again shows the next untagged rows
            tally.pressed["F5"] = tally.pressed.get("F5", 0) + 1
            page.reload()
            if not any(not row["tagged"] for row in screen(page)):
                break
            continue
        if with_suggestions:
            while True:  # a on each row whose first suggestion is right, nearest first
                now = screen(page)
                at = next((n for n, row in enumerate(now) if row["cursor"]), 0)
                right = [n for n, row in enumerate(now) if not row["tagged"]
                         and first_suggestion(row) == truth.get(row["query"])]
                if not right:
                    break
                index = min(right, key=lambda n: (abs(n - at), n))
                move_to(page, tally, now, index)
                tally.press(page, "a")
                wait_tagged(page, [now[index]["query"]])
                tally.accepted += 1
            rows = screen(page)
            todo = [n for n, row in enumerate(rows)
                    if not row["tagged"] and row["query"] in truth]
        for tag in dict.fromkeys(truth[rows[n]["query"]] for n in todo):
            rows = screen(page)
            mine = [n for n, row in enumerate(rows) if not row["tagged"]
                    and truth.get(row["query"]) == tag]
            if not mine:
                continue
            for index in mine:
                move_to(page, tally, screen(page), index)
                tally.press(page, "x")
            add_by_hand(page, tally, tag, [rows[n]["query"] for n in mine])
            tally.by_hand += len(mine)
    tally.seconds = time.perf_counter() - started
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--untagged", type=int, default=300, help="queries to tag")
    parser.add_argument("--tagged", type=int, default=600, help="queries tagged beforehand")
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    from app import create_app
    from queryapi import Client
    from service.learning.learner import of_app
    from tests.support.dashboard import close_app
    from tests.support.e2e import Dashboard, make_org
    from tests.support.servers import LiveServer
    from tests.support.world import UNLIMITED

    queries = shop_queries(args.tagged + args.untagged, args.seed)
    random.Random(args.seed).shuffle(queries)
    tagged, untagged = queries[:args.tagged], queries[args.tagged:]
    truth = dict(untagged)
    rows = ([(text, "en", "US", [theme]) for text, theme in tagged]
            + [(text, "en", "US", []) for text, _ in untagged])

    folder = Path(tempfile.mkdtemp(prefix="tagdesk-keyboard-"))
    app = create_app({
        "INSTANCE_PATH": str(folder / "instance"), "SECRET_KEY": "bench", "DEMO_QUERIES": 50,
        "SIGNIN_LIMIT": "1000/minute",
        "SERVICE_CONFIG": {"DATABASE_URL": f"sqlite:///{folder / 'bench.sqlite3'}",
                           "REDIS_URL": None, "DEFAULT_LIMITS": UNLIMITED},
    })
    server = LiveServer(app).start()
    dashboard = Dashboard(server.url, app, app.config["DEMO_KEY"])
    results = {}
    try:
        learner = of_app(dashboard.service_app)
        orgs = {mode: make_org(dashboard, f"Keyboard {mode}", {"Shop": rows})
                for mode in ("without", "with")}
        for org in orgs.values():
            learner.refresh(org.projects["Shop"])
        learner.wait(600)
        status = Client(dashboard.url, orgs["with"].key).suggestion_status(
            orgs["with"].projects["Shop"])
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for mode, org in orgs.items():
                    context = browser.new_context(viewport={"width": 1280, "height": 900})
                    context.set_default_timeout(30_000)
                    page = context.new_page()
                    page.goto(dashboard.url + "/signin")
                    page.get_by_label("API key").fill(org.key)
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url(re.compile(r"/projects"))
                    url = (f"{dashboard.url}/projects/{org.projects['Shop']}/queries"
                           "?untagged=1&sort=query")
                    results[mode] = tag_the_view(page, url, truth, mode == "with")
                    check(org, truth)
                    context.close()
            finally:
                browser.close()
    finally:
        server.stop()
        close_app(app)
        shutil.rmtree(folder, ignore_errors=True)
    report(results, status, args)


def check(org, truth: dict[str, str]) -> None:
    """Every query to tag carries its theme, and only it."""
    client, project = org.api(), org.projects["Shop"]
    names = {tag.id: tag.name for tag in client.iter_tags(project)}
    wrong = [(query.query, [names[t] for t in query.tags])
             for query in client.iter_queries(project)
             if query.query in truth and [names[t] for t in query.tags] != [truth[query.query]]]
    if wrong:
        raise SystemExit(f"{len(wrong)} queries tagged wrongly, e.g. {wrong[:3]}")


def report(results: dict[str, Tally], status, args) -> None:
    print(f"Tagging {args.untagged} untagged queries by keyboard "
          f"({args.tagged} tagged beforehand, five themes)")
    print(f"suggestions: {status.state}, learned from {status.learned_from} tagged queries, "
          f"{status.held_back_right:.0%} right on those held back" if status.held_back_right
          is not None else f"suggestions: {status.state}")
    print(f"{'':22}{'keys':>7}{'seconds':>9}{'by a':>7}{'by hand':>9}  keys pressed")
    for mode in ("without", "with"):
        tally = results[mode]
        pressed = ", ".join(f"{key} {count}" for key, count in sorted(tally.pressed.items()))
        print(f"{mode + ' suggestions':22}{tally.keys:>7}{tally.seconds:>9.1f}"
              f"{tally.accepted:>7}{tally.by_hand:>9}  {pressed}")
    without, with_ = results["without"], results["with"]
    print(f"with/without: keys {with_.keys / without.keys:.2f}x, "
          f"seconds {with_.seconds / without.seconds:.2f}x")


if __name__ == "__main__":
    main()
