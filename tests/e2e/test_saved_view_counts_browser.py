"""A saved view's count follows every change this browser makes, without a reload: a job over
all the view's queries (its count read again when the job ends, not only when it starts), the
job's Undo, an in-page edit and its Undo (z); and a reload shows the same. The count stands
apart from the name: a badge, read out as "<name>, <n> queries". Headless Chromium at 1280
px and at 390 px."""

from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import apply, open_project, pick_tags, sign_in
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org

pytestmark = pytest.mark.browser

OPEN = 30  # the view's queries: more than a page of 25, so a select-all edit is a job
ROWS = [(f"preis {i:02d}", "de", "DE", []) for i in range(OPEN)] + [
    ("preis tagged", "de", "DE", ["sale"]), ("price", "en", "US", [])]
NAME = "Preis – noch offen"
ADDRESS = "?q=preis&untagged=1&size=25"


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Saved view counts e2e",
                    {"Preise 1280": ROWS, "Preise 390": ROWS})


@pytest.fixture(autouse=True)
def quick_progress(live_dashboard):
    """A job's panel asks for its progress five times a second (restored afterwards)."""
    config = live_dashboard.app.config
    before = config.get("JOBS_POLL_SECONDS")
    config["JOBS_POLL_SECONDS"] = 0.2
    yield
    config["JOBS_POLL_SECONDS"] = before


@contextmanager
def writes_held(live_dashboard):
    """The service's database locked for writing (SQLite's one writer) while inside: a job
    reads and waits at its first write; reads go on."""
    url = live_dashboard.service_app.config["DATABASE_URL"]
    database = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    try:
        database.execute("BEGIN IMMEDIATE")
        yield
    finally:
        database.execute("ROLLBACK")
        database.close()


def view_link(page, count: int):
    """The view's link, by its accessible name: the name, a comma (a pause), the count and
    its noun (Chromium puts a space before the comma, at the hidden text's edge)."""
    noun = "query" if count == 1 else "queries"
    return page.locator("#saved-views").get_by_role(
        "link", name=re.compile(rf"^{re.escape(NAME)} ?, {count:,} {noun}$"))


def show_saved_views(page) -> None:
    """On a phone the section may fold behind the Filters button: open it."""
    toggle = page.locator("[data-filters-toggle]")
    if toggle.count() and toggle.is_visible() and toggle.get_attribute(
            "aria-expanded") != "true":
        toggle.click()
    expect(page.locator("#saved-views")).to_be_visible()


def counts_read(page):
    """Waits for the page to read the views' counts again."""
    return page.expect_response(re.compile(r"/views(/counts)?(\?|$)"))


@pytest.mark.parametrize("width", [1280, 390])
def test_a_views_count_follows_a_job_its_undo_and_an_edit(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    project = org.projects[f"Preise {width}"]
    with org.api() as api:
        api.create_view(project, NAME, QueryFilters(text="preis", untagged=True))
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, project, ADDRESS)
    show_saved_views(page)
    link = view_link(page, OPEN)
    expect(link).to_be_visible()
    # Seen apart: the name, then the count in a badge of its own.
    name_box = link.locator(".saved-view__name").bounding_box()
    badge_box = link.locator(".saved-view__count").bounding_box()
    assert badge_box["x"] >= name_box["x"] + name_box["width"] or \
        badge_box["y"] >= name_box["y"] + name_box["height"]
    if width == 390:
        assert_no_sideways_scroll(page)
    assert axe_serious(page) == []

    # A job over all 30: the counts are read when it starts (it waits to write, so 30 still)
    # and again when it ends.
    page.get_by_role("checkbox", name="Select all on this page").check()
    page.get_by_role("button", name=f"Select all {OPEN} matching").click()
    pick_tags(page, "Add tags", "local")
    apply(page)
    with writes_held(live_dashboard):
        with counts_read(page):
            page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
        expect(view_link(page, OPEN)).to_be_visible()
    job = page.locator("[data-job]").first
    expect(job).to_contain_text(f"Added ‘local’ to {OPEN} queries")
    expect(page.get_by_role("heading", name="No queries match")).to_be_visible()
    expect(view_link(page, 0)).to_be_visible()

    # The job's Undo: all 30 open again.
    with counts_read(page):
        job.get_by_role("button", name="Undo").click()
    expect(view_link(page, OPEN)).to_be_visible()
    page.reload()
    show_saved_views(page)
    expect(view_link(page, OPEN)).to_be_visible()

    # An edit of two rows on the page, then its Undo (z).
    for index in (0, 1):
        page.locator("tr[data-row] [data-row-select]").nth(index).check()
    pick_tags(page, "Add tags", "brand")
    with counts_read(page):
        apply(page)
    expect(view_link(page, OPEN - 2)).to_be_visible()
    page.locator("h1").click()
    with counts_read(page):
        page.keyboard.press("z")
    expect(view_link(page, OPEN)).to_be_visible()
    with org.api() as api:
        assert [view.total_records for view in api.list_views(project)] == [OPEN]
    assert csp_errors(page) == []
