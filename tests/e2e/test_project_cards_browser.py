"""The projects page keeps each card's room for its progress while the counts load: the cards
below do not move under a click or a tap when a count arrives (a test's click on the third
card landed between two cards at 390 px and opened nothing)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser import SHOP, sign_in_with_demo
from tests.e2e.test_bulk_browser import sign_in
from tests.support.e2e import make_org

pytestmark = pytest.mark.browser

PLACES = """[...document.querySelectorAll('.project-list__item')].map(card => {
  const box = card.getBoundingClientRect();
  return [box.left, box.top, box.width, box.height];
})"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_cards_stay_in_place_when_their_counts_arrive(page, live_dashboard, width):
    page.set_viewport_size({"width": width, "height": 860})
    held, passing = [], []

    def hold_the_first(route):
        (passing if held else held).append(route)
        if passing:
            route.continue_()

    page.route("**/projects/counts*", hold_the_first)
    sign_in_with_demo(page, live_dashboard)
    page.wait_for_url("**/projects")
    page.wait_for_load_state("load")
    expect(page.locator(".count-loader")).to_have_count(1)
    before = page.evaluate(PLACES)
    assert len(before) == 3

    assert held  # the first counts asked, held until now
    for route in held:
        route.continue_()
    page.unroute("**/projects/counts*")
    expect(page.locator(".count-loader")).to_have_count(0)
    expect(page.locator(".project-list__item progress")).to_have_count(3)
    assert page.evaluate(PLACES) == before

    page.get_by_role("link", name=SHOP, exact=True).click()
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()


def test_the_names_of_cards_side_by_side_share_their_top(page, live_dashboard):
    """A card taller than its neighbours (here a name on two lines) left theirs stretched to
    its height with their lines spread over it: their names sat lower than its own."""
    rows = [("boots", "en", "US", []), ("hats", "en", "US", ["brand"])]
    org = make_org(live_dashboard, "Cards e2e", {
        "Shoes": rows, "Seasonal campaigns for the whole of Europe and both Americas": rows,
        "Hats": rows})
    sign_in(page, live_dashboard.url, org.key)
    expect(page.locator(".project-list__item progress")).to_have_count(3)
    cards = page.evaluate(PLACES)
    assert len({top for _left, top, _width, _height in cards}) == 1  # one row of cards
    tops = page.evaluate("[...document.querySelectorAll('.project-list__link')]"
                         ".map(link => link.getBoundingClientRect().top)")
    assert max(tops) - min(tops) < 1, tops
