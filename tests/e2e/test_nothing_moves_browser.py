"""No page moves by itself once it is drawn: the Layout Instability API of Chromium sees no
shift, with no input, in the seconds after each page of a project loads, at 1280 and at 390 px.
Parts that come after the page (counts, progress, the phone's Filters button) keep their room
from the first paint, so that a click or a tap lands where it was aimed (a CI run's click on
a tag's name once landed above it: the progress line had pushed the filters down). The
processor is slowed (and the settings pages' line), so that the browser paints pages it has
only partly parsed, as a loaded CI machine did: the frame paints nothing before the footer."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.test_browser import open_shop
from tests.support.e2e import settings_sign_in

pytestmark = pytest.mark.browser

# Every shift since the page's start (buffered), with what moved.
OBSERVE = """() => new Promise(resolve => {
  const shifts = [];
  new PerformanceObserver(list => {
    for (const entry of list.getEntries()) {
      if (entry.hadRecentInput) continue;
      shifts.push([entry.value, entry.sources.map(source => source.node
        ? `${source.node.nodeName}.${source.node.className || ""}#${source.node.id || ""}`
        : "?")]);
    }
  }).observe({type: "layout-shift", buffered: true});
  setTimeout(() => resolve(shifts), 300);
})"""
PAGES = ["/projects", "queries", "queries?tag=brand&lang=de", "tags", "activity", "rules",
         "report", "views", "queries/words", "rules/new"]


SETTINGS_PAGES = ["/settings/api", "/settings/api/new", "/settings/projects",
                  "/settings/projects/{project}", "/settings/projects/{project}/import",
                  "/settings/people", "/settings/people/add", "/settings/activity"]


def slowed(page, line: int | None = None) -> None:
    """The processor slowed as a cheap phone's is; with `line`, the pages come over a line of
    that many bytes a second, a few kilobytes at a time: the browser paints what it has
    parsed so far."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": 6})
    if line is not None:
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": line, "uploadThroughput": -1})


def late(route) -> None:
    time.sleep(0.3)
    route.continue_()


@pytest.mark.parametrize("width", [1280, 390])
def test_no_page_moves_once_drawn(page, live_dashboard, width):
    page.set_viewport_size({"width": width, "height": 860})
    project = open_shop(page, live_dashboard).rsplit("/", 1)[0]
    # The scripts come late, as on a slow line: the page is painted before they run.
    page.route(re.compile(r"/static/components\.js"), late)
    slowed(page)
    moved = {}
    for where in PAGES:
        # Drawn, and everything it asks for after (counts, progress) answered and painted.
        page.goto(live_dashboard.url + where if where.startswith("/") else f"{project}/{where}",
                  wait_until="networkidle")
        if shifts := page.evaluate(OBSERVE):
            moved[where] = shifts
    assert moved == {}


@pytest.mark.parametrize("width", [1280, 390])
def test_no_settings_page_moves_once_drawn(page, site, width):
    """The settings area shares the page frame: a project's page, painted half parsed, moved
    its tags table when the rest came."""
    page.set_viewport_size({"width": width, "height": 860})
    settings_sign_in(page, site.url + "/settings/api")
    slowed(page, line=64_000)  # the settings pages are small: slowed alone, few painted early
    moved = {}
    for where in SETTINGS_PAGES:
        page.goto(site.url + where.format(project=site.world.project_id),
                  wait_until="networkidle")
        if shifts := page.evaluate(OBSERVE):
            moved[where] = shifts
    assert moved == {}


# What takes room on the page after the element the frame's paint waits for, in document
# order (its own content included): the browser may paint as soon as that element's start
# tag is parsed, so whatever comes after it may arrive after the first paint.
AFTER_THE_WAIT = """() => {
  const link = document.querySelector('link[rel="expect"][blocking="render"]');
  const target = link && document.getElementById(link.getAttribute('href').slice(1));
  if (!target) return ['no element to wait for'];
  return Array.from(document.body.querySelectorAll('*')).filter(element =>
    (target.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING) &&
    element.getClientRects().length && element.getBoundingClientRect().height > 0)
    .map(element => element.nodeName + '.' + element.className);
}"""


def test_the_paint_waits_for_everything_that_takes_room(page, live_dashboard, site):
    """A CI run under load saw the settings' footer move (people/add, 1280 px): the paint had
    waited for the footer's start tag only, and its line of text, parsed after the first
    paint, made the footer taller, which moved it up from the window's bottom."""
    open_shop(page, live_dashboard)
    assert page.evaluate(AFTER_THE_WAIT) == []
    settings_sign_in(page, site.url + "/settings/people/add")
    assert page.evaluate(AFTER_THE_WAIT) == []
