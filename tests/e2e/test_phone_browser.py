"""The dashboard on a phone (390 px, touch, no hover) and on a laptop (1280 px): the row's edit
control visible without hover, at 3:1 contrast or more."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from dashboard.chips import contrast_ratio
from tests.browser import axe_serious
from tests.support.e2e import LAPTOP, make_org

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ROWS = [("zapatillas running mujer", "es", "ES", ["brand", "sale", "seasonal"]),
        ("Laufschuhe für breite Füße mit extra Dämpfung", "de", "DE", ["local", "question"]),
        ("tênis de corrida", "pt-BR", "BR", ["brand"]),
        ("rain jacket", "en", "GB", [])] + [
    (f"winter boots {i:02d}", "en", "US", ["brand"] if i % 2 else []) for i in range(30)]
PROJECT = "Phone e2e"

# The colour a user sees, as sRGB hex: the element's colour with every opacity on the way up
# blended over the first opaque background behind it.
SEEN_COLOURS = """element => {
  const rgba = css => (css.match(/[\\d.]+/g) || []).map(Number);
  let opacity = 1, background = null;
  for (let e = element; e; e = e.parentElement) {
    const style = getComputedStyle(e);
    opacity *= Number(style.opacity);
    const [r, g, b, a = 1] = rgba(style.backgroundColor);
    if (!background && a === 1 && e !== element) background = [r, g, b];
  }
  background = background || [255, 255, 255];
  const own = getComputedStyle(element);
  const [r, g, b, a = 1] = rgba(own.backgroundColor);
  if (a === 1) background = [r, g, b];
  const fg = rgba(own.color).slice(0, 3).map(
    (c, i) => Math.round(c * opacity + background[i] * (1 - opacity)));
  const hex = c => '#' + c.map(v => v.toString(16).padStart(2, '0')).join('');
  return [hex(fg), hex(background)];
}"""


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Phone e2e", {PROJECT: ROWS, "Second": ROWS[:2]})


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.console_messages = []
    page.on("console", lambda message: page.console_messages.append(message.text))
    yield page
    context.close()


def sign_in(page, url: str, key: str) -> None:
    page.goto(url + "/signin")
    assert_no_sideways_scroll(page)
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/projects"))


def open_queries(page, url: str, org, query: str = "?sort=query") -> None:
    page.goto(f"{url}/projects/{org.projects[PROJECT]}/queries{query}")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()


def assert_no_sideways_scroll(page) -> None:
    width = page.viewport_size["width"]
    widths = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
    assert max(widths) <= width, widths


def inside(box, width: int) -> bool:
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5


def row(page, text: str):
    return page.locator("tr[data-row]", has=page.get_by_role(
        "checkbox", name=f"Select {text}", exact=True))


@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_row_edit_control_shows_without_hover_at_3_to_1(browser, live_dashboard, org,
                                                            size):
    touch = size == PHONE
    context = browser.new_context(viewport=size, has_touch=touch, is_mobile=touch)
    try:
        page = context.new_page()
        sign_in(page, live_dashboard.url, org.key)
        open_queries(page, live_dashboard.url, org)
        page.mouse.move(0, 0)  # nothing hovered
        controls = page.get_by_role("button", name=re.compile(r"^Edit tags of "))
        expect(controls).to_have_count(len(ROWS))
        for control in controls.all()[:5]:
            expect(control).to_be_visible()
            glyph, background = control.evaluate(SEEN_COLOURS)
            assert contrast_ratio(glyph, background) >= 3, (glyph, background)
        # And on a selected row's tinted background.
        page.get_by_role("checkbox", name="Select rain jacket", exact=True).check()
        page.mouse.move(0, 0)
        glyph, background = page.get_by_role(
            "button", name="Edit tags of rain jacket").evaluate(SEEN_COLOURS)
        assert contrast_ratio(glyph, background) >= 3, (glyph, background)
        assert axe_serious(page) == []
    finally:
        context.close()
