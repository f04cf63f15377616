"""The queries page keeps the room of the project's progress while its counts load: nothing
below it moves under a click or a tap when they arrive (a test's click on a tag's name, made
just before, landed above the option once the line had pushed the filters down, and ticked
nothing)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser import open_shop

pytestmark = pytest.mark.browser

COUNTS = re.compile(r"/counts(\?|$)")

# Where the controls below the progress are: the pickers, the filters' button (a phone's),
# the first rows.
PLACES = """[...document.querySelectorAll(
    'summary.picker__summary, [data-filters-toggle], #results tbody tr:nth-child(-n+3)')]
  .filter(element => element.getClientRects().length)
  .map(element => {
    const box = element.getBoundingClientRect();
    return [element.tagName, box.left, box.top, box.width, box.height];
  })"""


@pytest.mark.parametrize("width", [1280, 390])
def test_nothing_moves_when_the_progress_arrives(page, live_dashboard, width):
    page.set_viewport_size({"width": width, "height": 860})
    held = []

    def hold(route):
        held.append(route)

    page.route(COUNTS, hold)  # the view's counts, the saved views'
    open_shop(page, live_dashboard)
    page.wait_for_load_state("load")
    expect(page.locator("[data-filters-toggle]")).to_be_visible(visible=width <= 640)
    before = page.evaluate(PLACES)
    assert len(before) >= 4, before

    assert held  # the page's counts, asked at once, held until now
    for route in held:
        route.continue_()
    page.unroute(COUNTS)
    expect(page.locator("form[data-view-form][data-counted]")).to_have_count(1)  # painted
    expect(page.locator("[data-progress] progress")).to_have_count(1)
    expect(page.locator("[data-progress] a", has_text="Show untagged")).to_be_visible()
    assert page.evaluate(PLACES) == before
