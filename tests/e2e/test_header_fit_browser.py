"""The header between a phone's width and a laptop's (tablets, narrow windows), in both UIs:
its place, tabs and account links never lie over one another, and the place keeps its whole
name. At 800 px the project's name was cut to its first letter and the Activity tab ran under
the Settings link."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from playwright.sync_api import expect

from tests.e2e.test_bulk_browser import sign_in
from tests.support.e2e import assert_no_sideways_scroll, make_org, settings_sign_in

pytestmark = pytest.mark.browser

WIDTHS = (680, 800, 900, 1024, 1280)
PROJECT = "Online shop search, Austria"

# The header's visible links and buttons, and the place, as boxes; the pairs that overlap.
OVERLAPS = """() => {
  const items = Array.from(document.querySelectorAll(
    '.site-header .site-nav__place, .site-header a, .site-header button, .account__key'))
    .filter(e => e.getClientRects().length);
  const over = [];
  items.forEach((a, i) => items.slice(i + 1).forEach(b => {
    const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
    const apart = p.right <= q.left + 0.5 || q.right <= p.left + 0.5 ||
                  p.bottom <= q.top + 0.5 || q.bottom <= p.top + 0.5;
    if (!apart && !a.contains(b) && !b.contains(a))
      over.push([a.textContent.trim(), b.textContent.trim()]);
  }));
  return over;
}"""


def assert_header_fits(page, where: str) -> None:
    assert page.evaluate(OVERLAPS) == [], where
    place = page.locator(".site-nav__place")
    assert place.evaluate("e => e.scrollWidth <= e.clientWidth"), where  # the whole name
    assert_no_sideways_scroll(page)


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Header e2e", {PROJECT: [("rain jacket", "en", "GB", [])]})


@contextmanager
def queries_page(browser, live_dashboard, org, width: int, height: int):
    """The project's queries page, signed in, in a window of this size of its own."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        sign_in(page, live_dashboard.url, org.key)
        page.goto(f"{live_dashboard.url}/projects/{org.projects[PROJECT]}/queries")
        expect(page.get_by_role("link", name=PROJECT)).to_be_visible()
        yield page
    finally:
        context.close()


def test_the_dashboards_header_fits_every_width(browser, live_dashboard, org):
    with queries_page(browser, live_dashboard, org, WIDTHS[0], 800) as page:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            assert_header_fits(page, f"queries at {width} px")


def test_the_settings_header_fits_every_width(browser, site):
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 800})
    page = context.new_page()
    try:
        settings_sign_in(page, site.url + f"/settings/projects/{site.world.project_id}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            assert_header_fits(page, f"a project's settings at {width} px")
    finally:
        context.close()


def test_on_a_phone_the_account_shares_the_brands_line(browser, live_dashboard, org):
    """390 px: the brand's mark alone (its name kept for screen readers, a 40 px target), so
    that Settings and the account fit beside it: a line less above every page (the account
    had a line of its own under the brand)."""
    with queries_page(browser, live_dashboard, org, 390, 844) as page:
        brand = page.get_by_role("link", name="Tagdesk", exact=True).bounding_box()
        assert brand["width"] >= 40 and brand["height"] >= 40
        header = page.locator(".site-header")
        for role, name in (("link", "Settings"), ("button", "Sign out")):
            box = header.get_by_role(role, name=name).bounding_box()
            assert abs((box["y"] + box["height"] / 2) - (brand["y"] + brand["height"] / 2)) < 4, \
                name
        assert_header_fits(page, "queries at 390 px")
