"""Stored and reflected XSS in headless Chromium: payloads kept in query texts, language and
country codes, tag names, project names, key names and the display name given at sign-in —
and tag colours that try CSS injection (written straight into the database, as a production
service sending hostile colours would) — are shown as text, everywhere they appear: sign-in,
projects, the queries page (rows, chips, filters, pickers, the tag picker and the quick edit),
the select-all confirm step and the job it starts, the export job, the tags page, activity, a
404 page and the service's settings pages.

Proof, on every page: no dialog opens; the global an injected script would set stays unset;
no Content-Security-Policy violation is reported (a violation means markup got through and
only the CSP stopped it); no request goes to a URL a payload names; no element carries an
event-handler attribute or is an injected frame, object or inline script; and every chip's
style attribute is exactly `background-color:#rrggbb;color:#000000|#ffffff`.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from service.org import admin
from service.store.db import session_scope
from tests.support.e2e import LAPTOP
from tests.support.security import make_org, start_site

pytestmark = pytest.mark.browser

SCRIPT = "<script>window.__xss='script'</script>"
IMG = "<img src=x onerror=\"window.__xss='img'\">"
SVG = "\"><svg/onload=alert('svg')>"
HTMX = '<div hx-get="/leak-htmx" hx-trigger="load">htmx</div>'
ATTRIBUTE = "' onmouseover='alert(1)' data-x='"
STYLE = "<style>body{background:url(/leak-style)}</style>"
TEMPLATE = "{{7*7}} {% raw %}${alert('template')}"
IFRAME = "<iframe srcdoc=\"<script>parent.__xss='iframe'</script>\"></iframe>"
CLOSE = "</textarea></title><script>alert('close')</script>"
LINK = "<a href=\"javascript:alert('link')\">click</a>"

TAGS = {SCRIPT: "#1f77b4", IMG: "#ff7f0e", SVG: "#2ca02c", HTMX: "#d62728",
        "red-css": "#9467bd", "quote-css": "#8c564b", "brace-css": "#e377c2", "plain": "#7f7f7f"}
# Colours the admin layer would refuse: written into the database afterwards.
HOSTILE_COLOURS = {
    "red-css": "red;background-image:url(/leak-css)",
    "quote-css": "#fff\" onmouseover=\"window.__xss='colour'\" x=\"",
    "brace-css": "#123456;}</style><script>window.__xss='brace'</script>",
}
FILLER = [(f"<b>filler {i:02d}</b>", "en", "US", ["plain"]) for i in range(30)]
ROWS = [
    (SCRIPT, "en", "US", [SCRIPT, "red-css"]),
    (IMG, "de", "DE", [IMG, "quote-css"]),
    (SVG, "fr", "FR", [SVG, "brace-css"]),
    (HTMX, "es", "ES", [HTMX]),
    (ATTRIBUTE, "en", "GB", ["plain"]),
    (STYLE, "en", "US", []),
    (TEMPLATE, "it", "IT", []),
    (IFRAME, "en", "US", []),
    (CLOSE, "en", "US", []),
    (LINK, "en", "US", []),
    ("codes", "<img src=x onerror=alert(9)>", "\"><b>", []),
    *FILLER,
]
PROJECT = "<img src=x onerror=\"window.__xss='project'\"> Shop"
OTHER_PROJECT = "\"><script>alert('project')</script>"
DISPLAY_NAME = "<img src=x onerror=\"window.__xss='name'\">"
KEY_NAME = "<script>window.__xss='key name'</script>"

WATCH = """
window.__xssHits = [];
Object.defineProperty(window, '__xss', {
  configurable: false,
  set(value) { window.__xssHits.push(String(value)); },
  get() { return undefined; },
});
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__cspViolations.push(event.violatedDirective + ' ' + (event.sample || ''));
});
"""
INJECTED = ("[onerror], [onload], [onmouseover], [onclick], [onfocus], iframe, object, embed, "
            "script:not([src]), body style, img[src='x'], [hx-get^='/leak'], a[href^='javascript']")
CHIP_STYLE = re.compile(r"background-color:#[0-9a-f]{6};color:#(000000|ffffff)")


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("xss"), sqlite_template, EXPORT_STREAM_LIMIT=5)
    site.org = make_org(site.service_app, "Hostile", {PROJECT: ROWS, OTHER_PROJECT: []}, TAGS,
                        email="ann@hostile.example", color_override=HOSTILE_COLOURS)
    with session_scope(site.service_app) as session:
        admin.create_key(session, site.org.org_id, "tdk", name=KEY_NAME)
    yield site
    site.stop()


class Watch:
    """What a page did that it should not have."""

    def __init__(self, page, site):
        self.page = page
        self.dialogs: list[str] = []
        self.leaks: list[str] = []
        self.console: list[str] = []
        page.on("dialog", self._dialog)
        page.on("request", lambda request: "leak" in request.url
                and self.leaks.append(request.url))
        page.on("console", lambda message: self.console.append(message.text))
        page.add_init_script(WATCH)

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def check(self, where: str) -> None:
        problems = self.problems()
        assert not any(problems.values()), (where, problems)

    def problems(self) -> dict[str, list[str]]:
        page = self.page
        page.wait_for_load_state("load")
        hits = page.evaluate("window.__xssHits || []")
        violations = page.evaluate("window.__cspViolations || []")
        injected = page.evaluate(f"""Array.from(document.querySelectorAll({INJECTED!r}))
                                     .map((element) => element.outerHTML.slice(0, 120))""")
        styles = page.evaluate("""Array.from(document.querySelectorAll('.chip[style]'))
                                  .map((element) => element.getAttribute('style'))""")
        return {
            "dialogs": self.dialogs, "script ran": hits, "CSP violations": violations,
            "requests to payload URLs": self.leaks, "injected elements": injected,
            "chip styles": [style for style in styles if not CHIP_STYLE.fullmatch(style)],
            "CSP console": [m for m in self.console if "Content Security Policy" in m],
        }


def test_stored_and_reflected_payloads_are_inert_everywhere(browser, site):
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(10_000)
    page = context.new_page()
    watch = Watch(page, site)
    url = site.url
    project = site.org.projects[PROJECT]
    try:
        page.goto(url + "/signin?next=" + "/%22%3E%3Cscript%3Ealert(%27next%27)%3C/script%3E")
        watch.check("sign-in with a hostile next")
        page.get_by_label("API key").fill(site.org.key)
        page.get_by_label(re.compile("^Your name")).fill(DISPLAY_NAME)
        page.get_by_role("button", name="Sign in").click()
        page.goto(url + "/projects")
        expect(page.get_by_role("link", name=PROJECT, exact=True)).to_be_visible()
        expect(page.get_by_role("link", name=OTHER_PROJECT, exact=True)).to_be_visible()
        watch.check("projects")

        page.goto(f"{url}/projects/{project}/queries?sort=query&size=100")
        expect(page.locator("td.col-query", has_text="filler 29")).to_be_visible()
        for text in (SCRIPT, IMG, SVG, HTMX, ATTRIBUTE, STYLE, TEMPLATE, IFRAME, CLOSE, LINK):
            expect(page.get_by_role("cell", name=text, exact=True)).to_be_visible()
        for name in (SCRIPT, IMG, SVG, HTMX):
            expect(page.locator("td.col-tags .chip", has_text=name).first).to_be_visible()
        neutral = page.locator("td.col-tags .chip--neutral", has_text="red-css").first
        expect(neutral).to_be_visible()
        watch.check("queries page")

        # Reflected: the search text and the tag filter come from the URL.
        page.goto(f"{url}/projects/{project}/queries?q=%3Cb%3Efiller&tag={IMG}&tag=quote-css"
                  f"&lang=%3Cimg%20src%3Dx%20onerror%3Dalert(9)%3E")
        watch.check("queries page with hostile filters")
        page.goto(f"{url}/projects/{project}/queries?q=%3Cb%3Efiller&size=25")
        expect(page.get_by_role("searchbox", name="Search queries")).to_have_value("<b>filler")
        watch.check("queries page searched")

        # The tag picker, then select all matching and its confirm step, then the job.
        page.get_by_role("checkbox", name="Select all on this page").check()
        page.get_by_role("button", name="Select all 30 matching").click()
        page.get_by_role("button", name="Add tags", exact=True).click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_role("checkbox", name=SCRIPT, exact=True).check()
        dialog.get_by_role("checkbox", name="quote-css", exact=True).check()
        watch.check("tag picker")
        dialog.get_by_role("button", name="Apply", exact=True).click()
        expect(dialog).to_contain_text("queries matching")
        expect(dialog).to_contain_text("<b>filler")
        watch.check("select-all confirm step")
        dialog.get_by_role("button", name="Confirm").click()
        expect(page.locator("[data-job]").first).to_contain_text(SCRIPT)
        watch.check("the job it started")

        # The quick edit of a hostile row, and the export job of a hostile view.
        page.goto(f"{url}/projects/{project}/queries?sort=query&size=100")
        page.get_by_role("button", name=f"Edit tags of {IMG}", exact=True).click()
        expect(page.get_by_role("dialog")).to_contain_text(IMG)
        watch.check("quick edit")
        page.goto(f"{url}/projects/{project}/queries?q=%3Cb%3Efiller")
        page.get_by_role("link", name="Export CSV").click()
        expect(page.locator("#notices")).to_contain_text("Exporting 30 queries")
        expect(page.locator("[data-job]").first).to_contain_text("<b>filler")
        watch.check("export job")

        page.goto(f"{url}/projects/{project}/tags")
        expect(page.get_by_role("link", name=SCRIPT, exact=True)).to_be_visible()
        watch.check("tags page")
        page.goto(f"{url}/projects/{project}/tags?name=%3Cscript%3Ealert(1)%3C/script%3E")
        watch.check("tags page filtered")

        page.goto(f"{url}/projects/{project}/activity")
        expect(page.locator("tr[data-activity-row]").first).to_contain_text(DISPLAY_NAME)
        watch.check("activity")

        page.goto(url + "/projects/%3Cscript%3Ealert(1)%3C%2Fscript%3E/queries")
        watch.check("404 page")

        page.goto(url + "/settings/signin")
        page.get_by_label("Email").fill(site.org.email)
        page.get_by_label("Password").fill("correct horse battery staple")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("cell", name=KEY_NAME, exact=True)).to_be_visible()
        watch.check("settings keys")
        page.goto(url + "/settings/api/generate")
        watch.check("settings generate form")
        page.goto(url + "/settings/activity")
        watch.check("settings activity")
    finally:
        context.close()


def serve(headers: dict, body: str):
    def fulfil(route, _request):
        route.fulfill(status=200, content_type="text/html", headers=headers, body=body)
    return fulfil


def test_the_watch_sees_injected_markup(browser, site):
    """The watch itself: a page (on the dashboard's address, with and without its CSP) that
    does carry the payloads is caught on every count the test relies on."""
    from dashboard.security import CONTENT_SECURITY_POLICY

    body = (f"<p>{SCRIPT}{IMG}{SVG}</p><span class='chip' style='color:red'>x</span>"
            "<div style='background:url(/leak-css)'>x</div>")
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    watch = Watch(page, site)
    try:
        for path, headers in (("/probe-csp", {"Content-Security-Policy": CONTENT_SECURITY_POLICY}),
                              ("/probe-open", {})):
            page.route(site.url + path, serve(headers, f"<!doctype html><title>p</title>{body}"))
            page.goto(site.url + path)
            page.wait_for_timeout(200)
            found = watch.problems()
            assert found["injected elements"] and found["chip styles"], found
            if headers:
                assert found["CSP violations"], found
            else:
                assert found["script ran"] and found["dialogs"], found
                assert found["requests to payload URLs"], found
            watch.dialogs.clear()
            watch.leaks.clear()
            watch.console.clear()
    finally:
        context.close()
