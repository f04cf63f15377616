"""Export CSV in Chromium: the control is back to normal as soon as the download starts (a
small view is a plain download link), the file lists the queries in the order on screen, and
a view sorted by "updated" says on the control which order the file has."""

from __future__ import annotations

import csv
import re

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.support.e2e import csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"{word} {i:02d}", language, country, ["brand"] if i % 2 else [])
        for i, (word, language, country) in enumerate(
            [("zapatos", "es", "ES"), ("bottes", "fr", "FR"), ("Stiefel", "de", "AT"),
             ("boots", "en", "GB"), ("stivali", "it", "IT"), ("laarzen", "nl", "NL")] * 6)]
PROJECT = "Export e2e"


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Export e2e", {PROJECT: ROWS})


def open_queries(page, dashboard, org, query: str) -> None:
    page.goto(dashboard.url + "/signin")
    page.get_by_label("API key").fill(org.key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/projects"))
    page.goto(f"{dashboard.url}/projects/{org.projects[PROJECT]}/queries{query}")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()


def on_screen(page) -> list[str]:
    return page.locator("table.queries-table tbody td.col-query").all_inner_texts()


def download_queries(page, control) -> list[str]:
    with page.expect_download() as started:
        control.click()
    path = started.value.path()  # waits for the whole file
    with open(path, newline="", encoding="utf-8") as file:
        return [line["query"] for line in csv.DictReader(file)]


def assert_at_rest(control) -> None:
    expect(control).not_to_have_class(re.compile(r"htmx-request"))
    assert control.evaluate("e => [getComputedStyle(e).opacity, getComputedStyle(e).cursor]") \
        == ["1", "pointer"]


def test_the_download_leaves_the_control_at_rest_in_the_order_on_screen(page, live_dashboard,
                                                                        org):
    open_queries(page, live_dashboard, org, "?sort=-country")
    url = page.url
    control = page.get_by_role("link", name="Export CSV", exact=True)
    assert download_queries(page, control) == on_screen(page)
    assert_at_rest(control)
    assert page.url == url
    # Another order: the file follows.
    page.get_by_role("link", name="Query", exact=True).click()
    page.wait_for_url(re.compile(r"sort=query"))
    control = page.get_by_role("link", name="Export CSV", exact=True)
    assert download_queries(page, control) == on_screen(page)
    assert_at_rest(control)
    assert csp_errors(page) == []


def test_a_view_by_updated_says_which_order_the_file_has(page, live_dashboard, org):
    open_queries(page, live_dashboard, org, "")
    control = page.get_by_role("link", name="Export CSV sorted by Query, A to Z")
    expect(control).to_be_visible()
    exported = download_queries(page, control)
    assert sorted(exported) == exported and len(exported) == len(ROWS)
    assert_at_rest(control)
    assert axe_serious(page) == []


def test_a_large_view_starts_a_job_and_the_control_comes_back(page, live_dashboard, org):
    config = live_dashboard.app.config
    before = config["EXPORT_STREAM_LIMIT"]
    config["EXPORT_STREAM_LIMIT"] = 10
    try:
        open_queries(page, live_dashboard, org, "?sort=query")
        control = page.get_by_role("link", name="Export CSV", exact=True)
        control.click()
        expect(page.locator("#notices")).to_contain_text(f"Exporting {len(ROWS)} queries")
        assert_at_rest(control)
    finally:
        config["EXPORT_STREAM_LIMIT"] = before
