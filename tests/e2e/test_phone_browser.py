"""The dashboard on a phone (390 px, touch, no hover) and on a laptop (1280 px): each query a
card on the phone — its text, its tag chips, then language · country, with its checkbox and
edit control — still a table to assistive technology; nothing scrolls sideways on any page;
the bulk toolbar a bar at the bottom of the screen while rows are selected; the row's edit
control visible without hover, at 3:1 contrast or more."""

from __future__ import annotations

import re
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from dashboard.chips import contrast_ratio
from tests.browser import axe_serious
from tests.support.e2e import (
    LAPTOP,
    PHONE,
    assert_no_sideways_scroll,
    csp_errors,
    cut_words,
    make_org,
)

pytestmark = pytest.mark.browser

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


@contextmanager
def page_at(browser, size: dict):
    """A page in a context of its own at `size` (a phone's is touched: has_touch, is_mobile),
    closed after."""
    touch = size == PHONE
    context = browser.new_context(viewport=size, has_touch=touch, is_mobile=touch)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Phone e2e", {PROJECT: ROWS, "Second": ROWS[:2]})


def sign_in(page, url: str, key: str) -> None:
    page.goto(url + "/signin")
    assert_no_sideways_scroll(page)
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/projects"))


def open_queries(page, url: str, org, query: str = "?sort=query") -> None:
    page.goto(f"{url}/projects/{org.projects[PROJECT]}/queries{query}")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()


def inside(box, width: int) -> bool:
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5


def row(page, text: str):
    return page.locator("tr[data-row]", has=page.get_by_role(
        "checkbox", name=f"Select {text}", exact=True))


def test_queries_read_as_cards_on_a_phone(phone, live_dashboard, org, screenshots):
    page = phone
    sign_in(page, live_dashboard.url, org.key)
    open_queries(page, live_dashboard.url, org)
    assert_no_sideways_scroll(page)
    frame = page.locator(".table-wrap")
    assert frame.evaluate("e => e.scrollWidth <= e.clientWidth")  # the results do not scroll
    rows = page.locator("tr[data-row]")
    expect(rows).to_have_count(len(ROWS))
    for each in rows.all()[:10]:
        assert inside(each.bounding_box(), PHONE["width"])

    card = row(page, "Laufschuhe für breite Füße mit extra Dämpfung")
    text = card.locator("td.col-query").bounding_box()
    chips = card.locator(".chip")
    expect(chips).to_have_count(2)
    assert sorted(chips.all_inner_texts()) == ["local", "question"]
    language = card.locator("td.col-language")
    country = card.locator("td.col-country")
    expect(language).to_have_text("German (de)")
    expect(country).to_have_text("Germany (DE)")
    # The text, then its chips, then language · country on one line.
    for chip in chips.all():
        expect(chip).to_be_visible()
        box = chip.bounding_box()
        assert inside(box, PHONE["width"]) and box["y"] >= text["y"] + text["height"] - 1
    language_box, country_box = language.bounding_box(), country.bounding_box()
    assert language_box["y"] >= chips.first.bounding_box()["y"] + 10
    assert abs(language_box["y"] - country_box["y"]) < 2
    assert country_box["x"] > language_box["x"]
    assert country.evaluate("e => e.scrollWidth <= e.clientWidth")  # "Germany", not "German…"
    # Words wrap whole: "Brazil" beside "Portuguese (Brazil) (pt-br)" is not cut in two.
    assert cut_words(page, ".queries-table tbody td") == []
    for control in (page.get_by_role("checkbox", name="Select rain jacket", exact=True),
                    page.get_by_role("button", name="Edit tags of rain jacket")):
        expect(control).to_be_visible()
        assert inside(control.bounding_box(), PHONE["width"])
    page.locator("table.queries-table").evaluate("e => e.scrollIntoView()")
    page.screenshot(path=screenshots / "queries-phone.png")

    # Still a table to assistive technology, with its headers and one row per query.
    table = page.get_by_role("table", name=re.compile(r"^Queries"))
    expect(table.get_by_role("row")).to_have_count(len(ROWS) + 1)
    expect(table.get_by_role("columnheader", name="Query")).to_have_attribute(
        "aria-sort", "ascending")
    expect(card.get_by_role("cell")).to_have_count(6)
    # Sorting stays at hand: the column headers are a row of links above the cards.
    page.get_by_role("link", name="Country", exact=True).click()
    page.wait_for_url(re.compile(r"sort=country"))
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    assert csp_errors(page) == []


def test_the_bulk_toolbar_is_a_bar_at_the_bottom_while_rows_are_selected(phone, live_dashboard,
                                                                          org, screenshots):
    page = phone
    sign_in(page, live_dashboard.url, org.key)
    open_queries(page, live_dashboard.url, org)
    toolbar = page.locator("#bulk-toolbar")
    expect(toolbar).to_be_hidden()  # nothing selected: nothing it could do
    page.get_by_role("checkbox", name="Select winter boots 05", exact=True).tap()
    expect(toolbar).to_contain_text("1 selected")
    expect(toolbar).to_have_css("position", "fixed")
    box = toolbar.bounding_box()
    assert abs(box["y"] + box["height"] - PHONE["height"]) < 1
    assert inside(box, PHONE["width"])
    for name in ("Add tags", "Remove tags", "Replace tags"):
        button = toolbar.get_by_role("button", name=name, exact=True)
        expect(button).to_be_enabled()
        assert inside(button.bounding_box(), PHONE["width"])
        assert button.bounding_box()["height"] >= 40  # a thumb's target
    # The last card can still be scrolled clear of the bar.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    last = page.locator(".pagination, tr[data-row]").last.bounding_box()
    assert last["y"] + last["height"] <= box["y"] + 1
    assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / "queries-phone-selected.png")
    assert axe_serious(page) == []

    toolbar.get_by_role("button", name="Add tags", exact=True).tap()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("checkbox", name="seasonal", exact=True).check()
    dialog.get_by_role("button", name="Apply", exact=True).tap()
    expect(page.locator("#notices")).to_contain_text("Added ‘seasonal’ to 1 query")
    expect(row(page, "winter boots 05").locator(".chip", has_text="seasonal")).to_be_visible()
    toolbar.get_by_role("button", name="Clear selection").tap()
    expect(toolbar).to_be_hidden()


@pytest.mark.parametrize("size", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_row_edit_control_shows_without_hover_at_3_to_1(browser, live_dashboard, org,
                                                            size):
    with page_at(browser, size) as page:
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


def test_the_desktop_table_stays_a_table(page, live_dashboard, org):
    sign_in(page, live_dashboard.url, org.key)
    open_queries(page, live_dashboard.url, org)
    first = page.locator("tr[data-row]").first
    assert first.evaluate("e => getComputedStyle(e).display") == "table-row"
    heads = page.locator("table.queries-table thead th")
    expect(heads).to_have_count(6)
    for head in heads.all():
        expect(head).to_be_visible()
    assert_no_sideways_scroll(page)


def test_every_dashboard_page_fits_a_phone(phone, live_dashboard, org, screenshots):
    page = phone
    url = live_dashboard.url
    sign_in(page, url, org.key)  # checks the sign-in page on the way
    expect(page.get_by_role("heading", name="Projects", level=1)).to_be_visible()
    assert_no_sideways_scroll(page)
    page.screenshot(path=screenshots / "projects-phone.png")
    project = org.projects[PROJECT]
    # An edit, so that the activity page has a row to show.
    open_queries(page, url, org)
    page.get_by_role("button", name="Edit tags of rain jacket").tap()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("checkbox", name="question", exact=True).check()
    dialog.get_by_role("button", name="Apply", exact=True).tap()
    expect(row(page, "rain jacket").locator(".chip")).to_have_text(["question"])
    for path, heading, shot in ((f"/projects/{project}/tags", "Tags", "tags-phone.png"),
                                (f"/projects/{project}/activity", "Activity",
                                 "activity-phone.png")):
        page.goto(url + path)
        expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible()
        assert_no_sideways_scroll(page)
        page.screenshot(path=screenshots / shot, full_page=True)
        assert axe_serious(page) == []
    expect(page.locator("tr[data-activity-row]").first).to_contain_text("rain jacket")
    for cell in page.locator("tr[data-activity-row]").first.locator("td").all():
        assert inside(cell.bounding_box(), PHONE["width"])
    page.get_by_role("button", name="Sign out").tap()
    expect(page.get_by_label("API key")).to_be_visible()
    assert_no_sideways_scroll(page)
    assert csp_errors(page) == []


# Each element inside a project card that lies outside its card's box, as text.
_OUTSIDE_CARD = """() => {
  const out = [];
  for (const card of document.querySelectorAll('.project-list__item')) {
    const c = card.getBoundingClientRect();
    for (const e of card.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < c.left - .5 || r.right > c.right + .5
          || r.top < c.top - .5 || r.bottom > c.bottom + .5)
        out.push(`${card.querySelector('a').textContent}: ${e.className} ${r.right} > ${c.right}`);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("size", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_each_projects_progress_stays_inside_its_card(browser, live_dashboard, size,
                                                      screenshots):
    with page_at(browser, size) as page:
        page.goto(live_dashboard.url + "/signin")
        page.get_by_role("button", name="Use the demo key").click()
        expect(page.get_by_role("heading", name="Projects", level=1)).to_be_visible()
        cards = page.locator(".project-list__item")
        assert cards.count() >= 3
        for card in cards.all():  # the counts arrive after the page
            expect(card.locator(".progress__text")).to_contain_text("queries untagged")
        assert page.evaluate(_OUTSIDE_CARD) == []
        assert_no_sideways_scroll(page)
        page.screenshot(path=screenshots / f"projects-progress-{size['width']}.png")
        assert axe_serious(page) == []
