"""Rows changed under the person, at 1280 and 390 px: two people (two browser contexts, each
signed in) on one project's queries page. When the colleague tags a row page A shows, A
says so within the poll's interval ("1 query on this page changed — Show") without moving or
drawing again any row; Show draws the rows again with the colleague's chip, focus on that
row. A's own edit is never announced. The poll's interval is set to 1 s for the test (10 s
by default)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from queryapi import TagEdit
from tests.e2e.test_bulk_browser import (
    apply,
    chips,
    open_project,
    pick_tags,
    row,
    sign_in,
    tick,
)
from tests.support.e2e import LAPTOP, WAIT_MS, csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"wanderschuhe {i:02d}", "de", "DE", []) for i in range(6)]
WIDTHS = [1280, 390]
POLL_SECONDS = 1.0
NOTICE = "[data-colleagues] .colleagues__notice"


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Colleagues e2e",
                    {f"Rows {width}": ROWS for width in WIDTHS})


@pytest.fixture
def quick_poll(live_dashboard):
    config = live_dashboard.app.config
    before = config["COLLEAGUES_POLL_SECONDS"]
    config["COLLEAGUES_POLL_SECONDS"] = POLL_SECONDS
    yield
    config["COLLEAGUES_POLL_SECONDS"] = before


@pytest.fixture
def colleague(browser):
    """The other person: a browser context of their own, signed in separately."""
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


def row_places(page) -> list[tuple[str, float]]:
    """Each row's text and where it stands on the screen."""
    return [(r.inner_text(), r.bounding_box()["y"])
            for r in page.locator("#results tr[data-row]").all()]


def tag_one_row(page, text: str, tag: str) -> None:
    tick(page, text)
    pick_tags(page, "Add tags", tag)
    apply(page)
    expect(page.locator("#notices [data-edit-notice]")).to_contain_text(
        f"Added ‘{tag}’ to 1 query.")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_colleagues_edit_is_announced_and_shown_on_demand(
        page, colleague, live_dashboard, org, quick_poll, width):
    url, project_id = live_dashboard.url, org.projects[f"Rows {width}"]
    page.set_viewport_size({"width": width, "height": LAPTOP["height"]})
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, project_id, "?sort=query")
    sign_in(colleague, url, org.key, "Ben")
    open_project(colleague, url, project_id, "?sort=query")
    notice = page.locator(NOTICE)

    # A's own edit: its row is drawn again in place, and nothing is announced after several
    # polls.
    tag_one_row(page, "wanderschuhe 04", "local")
    page.wait_for_timeout(3.5 * POLL_SECONDS * 1000)
    expect(notice).to_have_count(0)

    before = row_places(page)
    tag_one_row(colleague, "wanderschuhe 01", "brand")
    expect(notice).to_have_text("1 query on this page changed — Show",
                                timeout=WAIT_MS)
    # Said politely, and nothing on the page moved or was drawn again.
    region = page.locator("[data-colleagues]")
    expect(region).to_have_attribute("aria-live", "polite")
    assert row_places(page) == before
    assert chips(page, "wanderschuhe 01") == []

    notice.get_by_role("button", name="Show").click()
    expect(row(page, "wanderschuhe 01").locator("td.col-tags .chip")).to_have_text(["brand"])
    expect(notice).to_have_count(0)
    expect(page.get_by_role("checkbox", name="Select wanderschuhe 01", exact=True)).to_be_focused()
    # The page's own view is kept: no new history entry, the same address.
    assert page.url.endswith("?sort=query")
    # Said once: no notice comes back for what Show drew.
    page.wait_for_timeout(2.5 * POLL_SECONDS * 1000)
    expect(notice).to_have_count(0)
    assert csp_errors(page) == []


def test_a_hidden_tab_asks_nothing(page, live_dashboard, org, quick_poll):
    """While the tab is hidden the page sends no question; back in view it asks at once."""
    url, project_id = live_dashboard.url, org.projects["Rows 1280"]
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, project_id, "?sort=query")
    asked = []
    page.on("request", lambda request: asked.append(request.url)
            if request.url.endswith("/queries/changed") else None)
    page.wait_for_timeout(2.5 * POLL_SECONDS * 1000)
    assert 1 <= len(asked) <= 4
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    asked.clear()
    page.wait_for_timeout(3 * POLL_SECONDS * 1000)
    assert asked == []
    page.evaluate("""() => {
        Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});
        document.dispatchEvent(new Event('visibilitychange'));
    }""")
    # At once, not at the next tick (a tick may come as well).
    page.wait_for_timeout(150)
    assert 1 <= len(asked) <= 2


def test_the_pages_own_job_is_taken_in_without_a_word(page, live_dashboard, org, quick_poll):
    """A job of this page ended while the person kept a row ticked (the rows are then not
    drawn again): what it changed is not announced; a colleague's change after it is."""
    url, project_id = live_dashboard.url, org.projects["Rows 1280"]
    tags = org.tags["Rows 1280"]
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, project_id, "?sort=query")
    tick(page, "wanderschuhe 02")
    with org.api() as api:
        api.edit_tags(project_id, [TagEdit("wanderschuhe 03", "de", "DE", add=(tags["sale"],))])
    # What the end of the page's own job sends (its panel's last answer).
    page.evaluate("document.dispatchEvent(new CustomEvent('tagdesk:resultsStale'))")
    notice = page.locator(NOTICE)
    page.wait_for_timeout(3.5 * POLL_SECONDS * 1000)
    expect(notice).to_have_count(0)
    expect(page.get_by_role("checkbox", name="Select wanderschuhe 02", exact=True)).to_be_checked()

    with org.api() as api:
        api.edit_tags(project_id, [TagEdit("wanderschuhe 05", "de", "DE", add=(tags["sale"],))])
    expect(notice).to_have_text("1 query on this page changed — Show")
