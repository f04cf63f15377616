"""Every filter picker, open on a phone (390 px): its panel stays inside the window and the
page does not scroll sideways (the Country panel reached 399 px, the page 497 px)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser import open_shop
from tests.support.e2e import assert_no_sideways_scroll, show_filters

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("title", ["Language", "Country", "Tags"])
def test_an_open_picker_fits_a_phone(phone, live_dashboard, title, screenshots):
    page = phone
    open_shop(page, live_dashboard)
    show_filters(page)
    page.locator("summary.picker__summary", has_text=title).click()
    panel = page.locator("details[data-picker][open] .picker__panel")
    expect(panel).to_be_visible()
    edges = panel.evaluate("panel => [panel.getBoundingClientRect().left, "
                           "panel.getBoundingClientRect().right]")
    assert edges[0] >= 0 and edges[1] <= 390, edges
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert_no_sideways_scroll(page)
    # Its options are still there to choose, inside the window.
    option = panel.locator("label.option").first
    box = option.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    page.screenshot(path=screenshots / f"phone-picker-{title.lower()}.png")
