"""The numbers of queries on the queries page, in Chromium: a number's header reached by Tab
sorts (aria-sort, the order in words), the Numbers picker's labelled inputs filter by a range
kept in the address, the Columns choice is kept by the next search, Biggest first beside Show
untagged, an edited row keeps its numbers, and at 390 px the table scrolls in its own
container, never the page; axe finds nothing serious."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import sign_in
from tests.support.e2e import PHONE, SCREENSHOTS, assert_no_sideways_scroll, csp_errors
from tests.support.numbered import numbered_org

pytestmark = pytest.mark.browser

PROJECT = "Numbers e2e"
# (query, language, country, tags, numbers)
NUMBERED = [
    ("blue boots", "en", "US", [], {"clicks": 1200, "impressions": 40000, "position": 2.5,
                                    "volume": 12345}),
    ("red boots", "en", "US", ["sale"], {"clicks": 300, "impressions": 2000,
                                         "position": 7.25, "volume": 800}),
    ("green boots", "en", "GB", [], {"clicks": 45, "volume": 5000}),
    ("a very long query about waterproof hiking boots for wide feet in winter", "en", "GB",
     ["brand"], {"volume": 150, "clicks": 2}),
    ("botas de caminhada", "pt", "BR", [], None),  # the longest language name shown
] + [(f"plain boots {i:02d}", "en", "US", [], None) for i in range(8)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return numbered_org(live_dashboard, PROJECT, NUMBERED)




def queries(page) -> list[str]:
    return page.locator("tr[data-row] td.col-query").all_inner_texts()


def tab_to(page, name: str, most: int = 80) -> None:
    """Press Tab until the focus is on the element whose accessible text is `name`."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == name:
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_sort_by_a_header_a_range_and_biggest_first(page, live_dashboard, org):
    sign_in(page, live_dashboard.url, org.key)
    url = f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries"
    page.goto(url + "?q=boots")
    headers = page.locator("thead th.col-number")
    expect(headers).to_have_text(["Volume", "Clicks", "Impressions", "Position"])
    assert headers.first.evaluate("e => getComputedStyle(e).textAlign") == "right"
    cell = page.locator("tr[data-row]", has_text="blue boots").locator("td.col-volume")
    expect(cell).to_have_text("12,345")
    assert cell.evaluate("e => getComputedStyle(e).fontVariantNumeric") == "tabular-nums"

    # The Clicks header, by keyboard: biggest first, said in words and by aria-sort.
    tab_to(page, "Clicks")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"\?q=boots&sort=-clicks$"))
    expect(page.locator("th.col-clicks")).to_have_attribute("aria-sort", "descending")
    expect(page.locator("[data-order-words]")).to_contain_text("Biggest clicks first")
    assert queries(page)[:4] == ["blue boots", "red boots", "green boots", NUMBERED[3][0]]
    page.locator("th.col-clicks a").click()
    page.wait_for_url(re.compile(r"sort=clicks$"))
    expect(page.locator("th.col-clicks")).to_have_attribute("aria-sort", "ascending")
    expect(page.locator("[data-order-words]")).to_contain_text("Smallest clicks first")

    # A range, typed in the Numbers picker's labelled inputs: kept in the address, a chip.
    page.get_by_text("Numbers", exact=True).click()
    expect(page.locator("[data-count-name=known][data-count-value=volume]")).to_have_text("4")
    page.get_by_label("Volume at least").fill("500")
    page.get_by_label("Volume at most").fill("6000")
    page.get_by_label("Volume at most").press("Enter")
    page.wait_for_url(re.compile(r"volume_min=500&volume_max=6000"))
    expect(page.get_by_role("link", name="Remove filter Volume: 500 to 6,000")).to_be_visible()
    expect(page.locator("tr[data-row] td.col-query")).to_have_text(["green boots",
                                                                    "red boots"])

    assert axe_serious(page) == []

    # Columns: Impressions hidden by the Columns choice, and kept by the next search.
    page.get_by_text("Columns", exact=True).click()
    page.get_by_role("link", name="Hide Impressions").click()
    page.wait_for_url(re.compile(r"cols=volume,clicks,position$"))
    expect(page.locator("thead th.col-number")).to_have_text(["Volume", "Clicks", "Position"])
    page.get_by_label("Search queries").fill("green")
    page.wait_for_url(re.compile(r"q=green.*&cols=volume,clicks,position$"))
    expect(page.locator("tr[data-row] td.col-query")).to_have_text(["green boots"])
    expect(page.locator("thead th.col-number")).to_have_text(["Volume", "Clicks", "Position"])

    # Biggest first: the untagged, biggest volume first.
    page.goto(url)
    biggest = page.get_by_role("link", name="Biggest first")
    expect(biggest).to_be_visible()
    expect(page.locator("[data-progress]")).to_contain_text("% of clicks")
    biggest.click()
    page.wait_for_url(re.compile(r"\?untagged=1&sort=-volume$"))
    assert queries(page)[:2] == ["blue boots", "green boots"]
    assert not csp_errors(page)


def test_an_edited_row_keeps_its_numbers(page, live_dashboard, org):
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?q=green")
    row = page.locator("tr[data-row]", has_text="green boots")
    expect(row.locator("td[data-number]")).to_have_text(["5,000", "45", "–Not known",
                                                         "–Not known"])
    page.get_by_role("button", name="Edit tags of green boots").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("checkbox", name="local", exact=True).check()
    dialog.get_by_role("button", name="Apply", exact=True).click()
    expect(page.locator("#notices")).to_contain_text("Tags of “green boots”: added ‘local’")
    expect(row.locator(".chip")).to_have_text(["local"])
    expect(row.locator("td[data-number]")).to_have_text(["5,000", "45", "–Not known",
                                                         "–Not known"])
    assert page.locator("thead th").count() == row.locator("td").count()


def test_on_a_phone_the_page_never_scrolls_sideways(phone, live_dashboard, org):
    sign_in(phone, live_dashboard.url, org.key)
    phone.set_viewport_size(PHONE)
    phone.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries"
               "?q=boots&cols=volume,clicks,impressions,position,ctr&sort=-volume")
    expect(phone.locator("tr[data-row]").first).to_be_visible()
    assert_no_sideways_scroll(phone)
    first = phone.locator("tr[data-row]").first
    expect(first.locator("td.col-volume")).to_be_visible()
    expect(first.locator("td.col-volume")).to_contain_text("12,345")
    # The number headers are still the sort links, reachable and named.
    expect(phone.get_by_role("link", name="Clicks")).to_be_visible()
    assert axe_serious(phone) == []


def test_on_a_phone_each_number_reads_the_same_way(phone, live_dashboard, org):
    """390 px: every number of a row under its name, at the name's left. The cells in the
    row's narrower column put the value under the name, those in the wider one on the name's
    line at the far right: "Volume / 12,345" beside "Clicks ........ 1,200"."""
    sign_in(phone, live_dashboard.url, org.key)
    phone.set_viewport_size(PHONE)
    phone.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries"
               "?q=blue+boots&cols=volume,clicks,impressions,position")
    cells = phone.locator("tr[data-row]").first.locator("td.col-number")
    expect(cells).to_have_count(4)
    placed = cells.evaluate_all("""cells => cells.map(cell => {
        const box = cell.getBoundingClientRect(), range = document.createRange();
        range.selectNodeContents(cell);
        const value = range.getBoundingClientRect();
        return {label: cell.dataset.label, left: value.left - box.left,
                below: value.top - box.top, height: box.height}; })""")
    for cell in placed:
        assert abs(cell["left"]) <= 1, placed  # at the name's left
        assert cell["below"] >= 10, placed  # on the line under the name
    assert len({round(cell["height"]) for cell in placed}) == 1, placed


def test_the_count_and_the_views_actions_share_a_line_on_a_laptop(page, live_dashboard, org):
    """1280 px: Export CSV, Columns, Report and Make a rule from this view beside the count,
    so the table starts high enough for its first rows to be on the first screen (each on a
    line of its own, the rows began at 790 px of 860)."""
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?sort=query")
    count = page.locator("#results-count").bounding_box()
    actions = [page.get_by_role("link", name=re.compile(r"^Export CSV")),
               page.locator(".columns-choice summary"),
               page.get_by_role("link", name="Report", exact=True),
               page.get_by_role("link", name="Make a rule from this view", exact=True)]
    for action in actions:
        expect(action).to_be_visible()
        box = action.bounding_box()
        assert box["y"] <= count["y"] + count["height"] and count["y"] <= box["y"] + box["height"]
        assert box["x"] > count["x"] + count["width"]
    first_row = page.locator("tr[data-row]").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= page.viewport_size["height"]


def test_on_a_laptop_every_column_is_on_screen(page, live_dashboard, org):
    """1280 px, the project's four numbers shown: the table fits its frame, Updated included.
    Language, country and Updated were kept on one line each, so the columns needed 1,331 px
    of the page's 1,190 at any window width, and Updated was reached only by scrolling the
    table sideways. Language and country now wrap between words where room is short."""
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?sort=query")
    expect(page.locator("thead th.col-number")).to_have_count(4)
    frame = page.locator(".table-wrap")
    assert frame.evaluate("e => e.scrollWidth <= e.clientWidth")
    updated = page.locator("thead th.col-updated").bounding_box()
    assert updated["x"] + updated["width"] <= page.viewport_size["width"]
    # Wrapped between words only: each language and country word whole on its line.
    for cell in page.locator("td.col-language, td.col-country").all():
        assert cell.evaluate("e => e.scrollWidth <= e.clientWidth")


def test_on_a_wide_screen_languages_and_countries_stay_on_one_line(page, live_dashboard, org):
    """1500 px and wider: the page grows to use the screen (up to 1,440 px), and the table has
    room for every language and country on one line, in a frame that still fits."""
    page.set_viewport_size({"width": 1500, "height": 900})
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?sort=query")
    expect(page.locator("thead th.col-number")).to_have_count(4)
    lines = page.evaluate("""[...document.querySelectorAll('td.col-language, td.col-country')]
      .map(cell => { const range = document.createRange(); range.selectNodeContents(cell);
                     return [cell.textContent, range.getClientRects().length]; })""")
    assert lines and all(count == 1 for _text, count in lines), lines
    assert page.locator(".table-wrap").evaluate("e => e.scrollWidth <= e.clientWidth")


def test_between_phone_and_laptop_the_count_keeps_the_first_actions_line(page, live_dashboard,
                                                                         org):
    """800 px: the actions wrap to two lines; the count stays on the first (centred between
    the two, it sat on neither). With no saved view, its sentence and Save view share a line,
    and Save view stays where it was when its form opens."""
    page.set_viewport_size({"width": 800, "height": 1000})
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?sort=query")
    count = page.locator("#results-count").bounding_box()
    export = page.get_by_role("link", name=re.compile(r"^Export CSV")).bounding_box()
    rule = page.get_by_role("link", name="Make a rule from this view", exact=True).bounding_box()
    assert rule["y"] >= export["y"] + export["height"]  # two lines of actions
    assert export["y"] <= count["y"] and count["y"] + count["height"] <= export["y"] + \
        export["height"]

    empty = page.get_by_text("No saved views yet").bounding_box()
    save = page.locator(".save-view summary")
    closed = save.bounding_box()
    assert closed["x"] > empty["x"] + empty["width"]
    assert closed["y"] <= empty["y"] + empty["height"] and empty["y"] <= closed["y"] + \
        closed["height"]
    save.click()
    expect(page.get_by_label("View name")).to_be_visible()
    assert save.bounding_box() == closed
    page.locator("#saved-views").screenshot(path=SCREENSHOTS / "saved-views-open-800.png")
