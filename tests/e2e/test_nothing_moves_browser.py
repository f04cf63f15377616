"""No page moves by itself once it is drawn: the Layout Instability API of Chromium sees no
shift, with no input, in the seconds after each page of a project loads, at 1280 and at 390 px.
Parts that come after the page (counts, progress, the phone's Filters button) keep their room
from the first paint, so that a click or a tap lands where it was aimed (a CI run's click on
a tag's name once landed above it: the progress line had pushed the filters down)."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.test_browser import open_shop

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


def late(route) -> None:
    time.sleep(0.3)
    route.continue_()


@pytest.mark.parametrize("width", [1280, 390])
def test_no_page_moves_once_drawn(page, live_dashboard, width):
    page.set_viewport_size({"width": width, "height": 860})
    project = open_shop(page, live_dashboard).rsplit("/", 1)[0]
    # The scripts come late, as on a slow line: the page is painted before they run.
    page.route(re.compile(r"/static/components\.js"), late)
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 6})
    moved = {}
    for where in PAGES:
        # Drawn, and everything it asks for after (counts, progress) answered and painted.
        page.goto(live_dashboard.url + where if where.startswith("/") else f"{project}/{where}",
                  wait_until="networkidle")
        if shifts := page.evaluate(OBSERVE):
            moved[where] = shifts
    assert moved == {}
