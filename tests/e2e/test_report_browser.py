"""The report in Chromium: reached from the queries page with the view's filter, its chart
one image named by its title before the table, the share chosen with the keyboard and kept in
the address, Download CSV giving the table's figures; on a phone (390 px) nothing scrolls
sideways and the chart's text stays readable; axe finds nothing serious."""

from __future__ import annotations

import csv
import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import sign_in
from tests.support.e2e import PHONE, assert_no_sideways_scroll, csp_errors
from tests.support.numbered import numbered_org

pytestmark = pytest.mark.browser

PROJECT = "Report e2e"
# (query, language, country, tags, numbers)
NUMBERED = [
    ("running shoes", "en", "US", ["brand"], {"clicks": 900, "impressions": 9000,
                                               "position": 3.0, "volume": 1000}),
    ("cheap running shoes", "en", "GB", ["brand", "sale"], {"clicks": 100, "impressions": 1000,
                                                             "position": 5.0, "volume": 4000}),
    ("trail shoes", "en", "US", ["sale"], {"clicks": 300, "impressions": 3000,
                                           "position": 8.0, "volume": 5000}),
    ("rain jacket", "en", "US", [], {"clicks": 200, "impressions": 2000, "volume": 500}),
    ("laufschuhe", "de", "DE", ["question"], {"clicks": 5000, "volume": 100}),
]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return numbered_org(live_dashboard, PROJECT, NUMBERED)




def table_rows(page) -> list[list[str]]:
    return [row.locator("th, td").all_inner_texts()
            for row in page.locator("table.report-table tbody tr").all()]


def test_the_report_of_a_view_by_keyboard_with_its_chart_and_file(page, live_dashboard, org):
    sign_in(page, live_dashboard.url, org.key)
    page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries?lang=en")
    page.get_by_role("link", name="Report", exact=True).click()
    page.wait_for_url(re.compile(r"/report\?lang=en$"))
    expect(page.get_by_role("heading", name="Report", level=1)).to_be_visible()

    # The chart: one image, named by its title, after the heading and before the table.
    chart = page.get_by_role("img", name=re.compile(r"^Share of clicks by tag, biggest first"))
    expect(chart).to_be_visible()
    order = page.evaluate("""() => {
        const at = e => [...document.querySelectorAll('h1, svg[role=img], table')].indexOf(e);
        return [at(document.querySelector('h1')), at(document.querySelector('svg')),
                at(document.querySelector('table.report-table'))];
    }""")
    assert order == [0, 1, 2]
    assert [row[:3] for row in table_rows(page)] == [
        ["brand", "2", "1,000"], ["sale", "2", "400"], ["Untagged", "1", "200"],
        ["All queries in this view", "4", "1,500"]]
    assert table_rows(page)[0][-1] == "66.7%"
    # The rows that are no tag (Untagged, the whole view) stand out from the tags'.
    weights = page.locator("table.report-table tbody th").evaluate_all(
        "cells => cells.map(cell => getComputedStyle(cell).fontWeight)")
    assert weights == ["400", "400", "600", "600"]

    # Keyboard only: from the heading, Tab reaches the choice, then Show.
    page.locator("h1").evaluate("e => { e.tabIndex = -1; e.focus(); }")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Shares and chart")).to_be_focused()
    page.keyboard.press("ArrowDown")  # Share of volume
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Show")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/report\?lang=en&by=volume$"))
    expect(page.get_by_role("img", name=re.compile(r"^Share of volume by tag"))).to_be_visible()
    assert [row[0] for row in table_rows(page)][:2] == ["sale", "brand"]
    names = page.locator(".report-chart__name").all_text_contents()
    assert names == ["sale", "brand", "Untagged"]

    # A column's header sorts the table, from the keyboard too; the chart keeps its order.
    page.locator("table.report-table").get_by_role("link", name="Tag").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"by=volume&order=tag$"))
    expect(page.locator('th[aria-sort="ascending"]')).to_have_text("Tag")
    assert [row[0] for row in table_rows(page)][:2] == ["brand", "sale"]
    assert page.locator(".report-chart__name").all_text_contents()[:2] == ["sale", "brand"]

    # The file is the table's figures, in its order.
    with page.expect_download() as started:
        page.get_by_role("link", name="Download CSV").click()
    with open(started.value.path(), newline="", encoding="utf-8") as file:
        read = list(csv.DictReader(file))
    assert [line["tag"] for line in read][:2] == ["brand", "sale"]
    lines = {line["tag"]: line for line in read}
    assert lines["sale"]["volume"] == "9000" and lines["sale"]["share of volume (%)"] == "85.71"
    assert lines["All queries in this view"]["queries"] == "4"

    assert axe_serious(page) == []
    assert csp_errors(page) == []


def test_on_a_phone_the_report_fits_and_its_chart_reads(phone, live_dashboard, org):
    sign_in(phone, live_dashboard.url, org.key)
    phone.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/report")
    expect(phone.get_by_role("heading", name="Report", level=1)).to_be_visible()
    assert_no_sideways_scroll(phone)
    chart = phone.locator("svg.report-chart__svg")
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # Its words are drawn at least 11 px high once the viewBox is scaled to the phone.
    heights = phone.locator(".report-chart__name").evaluate_all(
        "texts => texts.map(t => t.getBoundingClientRect().height)")
    assert heights and min(heights) >= 11, heights
    # The wide table scrolls in its own box, which takes the focus to scroll by keyboard.
    region = phone.get_by_role("region", name=re.compile("Queries and their numbers by tag"))
    expect(region).to_be_visible()
    assert region.evaluate("e => e.scrollWidth > e.clientWidth")
    assert axe_serious(phone) == []
    assert csp_errors(phone) == []
