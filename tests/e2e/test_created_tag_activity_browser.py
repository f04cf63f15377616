"""A tag created from the tag picker is in the project's activity log — "Created tag “…”",
who and when — in headless Chromium, at 1280 px and on a phone (390 px)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [(f"trail runner {i:02d}", "en", "GB", []) for i in range(4)]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Created tags in the activity e2e", {"Trails": ROWS})


@pytest.mark.parametrize("width", [1280, 390])
def test_a_tag_created_from_the_picker_is_in_the_activity_log(page, live_dashboard, org,
                                                              width):
    page.set_viewport_size({"width": width, "height": 860})
    url = live_dashboard.url
    name = f"Mud season {width}"
    sign_in(page, url, org.key, "Bea")
    open_project(page, url, org.projects["Trails"], "?sort=query")
    page.get_by_role("checkbox", name="Select trail runner 00", exact=True).check()
    page.get_by_role("button", name="Add tags", exact=True).click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Find a tag").fill(name)
    dialog.get_by_role("button", name=f"Create tag “{name}”", exact=True).click()
    expect(dialog.get_by_role("checkbox", name=name, exact=True)).to_be_checked()
    dialog.get_by_role("button", name="Cancel", exact=True).click()  # created, not applied

    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    entry = page.locator("tr[data-activity-row]").filter(has_text=f"Created tag “{name}”")
    expect(entry).to_have_count(1)
    expect(entry.locator(".activity__who")).to_contain_text("Bea")
    expect(entry.locator(".activity__who")).to_contain_text(f"key …{org.key[-4:]}")
    expect(entry.locator("time")).to_have_text("just now")
    assert entry.locator("time").get_attribute("datetime")
    expect(entry.locator(".activity__status")).to_contain_text("Done")
    expect(entry.get_by_role("button", name="Undo")).to_have_count(0)  # nothing to undo
    # The newest entry first.
    expect(page.locator("tr[data-activity-row]").first).to_contain_text(
        f"Created tag “{name}”")
    if width == 390:
        assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    assert csp_errors(page) == []
