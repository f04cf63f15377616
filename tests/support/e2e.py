"""The browser tests' live dashboard (the `live_dashboard` fixture of tests/e2e/conftest.py),
their viewport and screenshots folder, the settings' administrator and sign-in form, what they
look for in a page's console, and organizations of their own for the bulk-editing tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import expect

from queryapi import Client
from tests.support.dashboard import EmbeddedService
from tests.support.world import UNLIMITED

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "tests" / "screenshots"
DEMO_QUERIES = 400
LAPTOP = {"width": 1280, "height": 860}
# How long an action or an assertion waits (ms). On a busy two-core machine a page behind the
# live dashboard and its embedded service, drawn while other test workers run, has taken over
# 10 s to load; a test that fails still fails, later.
WAIT_MS = 20_000
PHONE = {"width": 390, "height": 844}


@dataclass
class Dashboard(EmbeddedService):
    url: str
    app: object
    demo_key: str

    def api(self, key: str | None = None) -> Client:
        """The API itself (through the dashboard's /api), for what the tests compare with."""
        return Client(self.url, key or self.demo_key)


# The settings' administrator of the `site` fixture (tests/e2e/conftest.py).
ADMIN_EMAIL = "ann@example.com"
ADMIN_PASSWORD = "correct horse battery staple"


def settings_sign_in(page, url: str, email: str = ADMIN_EMAIL,
                     password: str = ADMIN_PASSWORD) -> None:
    """Open `url` (the settings' sign-in page, or a page it guards) and send its sign-in form."""
    page.goto(url)
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def csp_errors(page) -> list[str]:
    """Console messages of the page (the `page` fixture keeps them) about a blocked resource."""
    return [m for m in page.console_messages if "Content Security Policy" in m]


# --- organizations of their own for the bulk-editing tests ----------------------------------


@dataclass
class Org:
    """An organization made through the service's admin layer (test setup), with its key,
    projects by name and tag ids by name (per project)."""

    dashboard: Dashboard
    org_id: str
    key: str
    projects: dict
    tags: dict

    def api(self) -> Client:
        return Client(self.dashboard.url, self.key)

    def set_limits(self, per_second: int, per_minute: int, per_hour: int) -> None:
        from service.org import admin
        from service.store.db import write_scope

        # The write lock first: a job's batches commit meanwhile, and a transaction that read
        # the organization before one of them fails at its write ("database is locked").
        with write_scope(self.dashboard.service_app) as session:
            admin.set_limits(session, self.org_id, per_second, per_minute, per_hour)


BULK_TAGS = {"brand": "#1f77b4", "sale": "#ff7f0e", "question": "#2ca02c", "local": "#d62728",
             "seasonal": "#9467bd"}


def make_org(dashboard: Dashboard, name: str, projects: dict) -> Org:
    """projects: {project name: [(query, language, country, [tag names]), …]}."""
    from service.org import admin
    from service.store.db import session_scope

    app = dashboard.service_app
    with session_scope(app) as session:
        org_id = admin.create_org(session, name)
        key = admin.create_key(session, org_id, "tdk")
        admin.set_limits(session, org_id, *UNLIMITED)
        ids, tags = {}, {}
        for project_name in projects:
            project_id = admin.create_project(session, org_id, project_name)
            ids[project_name] = project_id
            tags[project_name] = {tag: admin.create_tag(session, project_id, tag, color)
                                  for tag, color in BULK_TAGS.items()}
    for project_name, rows in projects.items():
        normalized = [(*admin.normalize_query(q, lang, country),
                       [tags[project_name][n] for n in names], None)
                      for q, lang, country, names in rows]
        with session_scope(app) as session:
            admin.insert_queries(session, ids[project_name], normalized)
    return Org(dashboard, org_id, key, ids, tags)


def show_filters(page) -> None:
    """On a phone the queries page folds its filters and saved views behind the "Filters"
    button: open them (elsewhere, and where they are open, nothing to do)."""
    toggle = page.locator("[data-filters-toggle]")
    if not toggle.count() or page.viewport_size["width"] > 640:
        return
    # The filters fold from the first paint; the button shows a moment later, when
    # filters-toggle.js binds it (htmx's first load): wait for it rather than find it hidden.
    expect(toggle).to_be_visible()
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")


def assert_no_sideways_scroll(page) -> None:
    """Nothing on the page is wider than the window (no sideways scrolling)."""
    width = page.viewport_size["width"]
    widths = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
    assert max(widths) <= width, widths


# Each word (a run of non-spaces) of the matched elements' text that the browser has laid
# out on more than one line.
_CUT_WORDS = """selector => {
  const cut = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));
        if (lines.size > 1) cut.push(match[0]);
      }
    }
  }
  return cut;
}"""


def cut_words(page, selector: str) -> list[str]:
    """The words in `selector`'s elements that are broken across lines ("gener/ated")."""
    return page.evaluate(_CUT_WORDS, selector)
