"""The count beside a tag in the Tags picker is the number of rows the page shows once that
tag is chosen — with All of, with Exclude, and with both — in headless Chromium at 1280 px
and at 390 px. The API's facets define the counts (docs/api.md "Facets of a filter"); the
page must paint them as they come."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.e2e.test_work_queue_browser import open_tag_picker, wait_counted
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org

pytestmark = pytest.mark.browser

PROJECT = "Counts"
ROWS = [
    ("brand sale one", "en", "US", ["brand", "sale"]),
    ("brand sale question", "en", "US", ["brand", "sale", "question"]),
    ("brand sale local", "de", "DE", ["brand", "sale", "local"]),
    ("brand sale question local", "de", "DE", ["brand", "sale", "question", "local"]),
    ("brand only", "en", "US", ["brand"]),
    ("brand question", "en", "GB", ["brand", "question"]),
    ("sale only", "en", "US", ["sale"]),
    ("question only", "de", "AT", ["question"]),
    ("question local", "de", "DE", ["question", "local"]),
    ("local only", "en", "GB", ["local"]),
    ("plain one", "en", "US", []),
    ("plain two", "de", "DE", []),
]
ALL_OF = "?tag=brand&tag=sale&tagmatch=all"
# (the view, the tags to choose in it, each from the view itself). With Any of, a tag is
# counted in place of the chosen ones (its rows added to theirs once chosen), so the views
# with Any of choose no tag.
CHOICES = [
    (ALL_OF, ["question", "local", "seasonal"]),
    ("?nottag=question", ["brand", "local", "question"]),
    (ALL_OF + "&nottag=local", ["question", "local"]),
    ("?nottag=question&nottag=local&lang=de", ["question", "brand"]),
]


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Tag counts e2e", {PROJECT: ROWS})


def shown_count(picker, tag: str) -> int:
    """The count painted beside the tag's own box (its include box's label)."""
    text = picker.locator(f"label.option--tag:has(input[data-include][value='{tag}']) "
                          "[data-count]").inner_text()
    return int(text.replace(",", ""))


def show_filters(page) -> None:
    """On a phone the filters may fold behind the Filters button: open them."""
    toggle = page.locator("[data-filters-toggle]")
    if toggle.count() and toggle.is_visible() and toggle.get_attribute(
            "aria-expanded") != "true":
        toggle.click()


def rows_shown(page) -> int:
    return page.locator("tr[data-row]").count()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_tags_count_is_the_rows_its_choice_shows(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    project = org.projects[PROJECT]
    sign_in(page, live_dashboard.url, org.key)
    for view, tags in CHOICES:
        for tag in tags:
            open_project(page, live_dashboard.url, project, view)
            before = wait_counted(page)
            show_filters(page)
            picker = open_tag_picker(page)
            # A chosen tag, with All of, counts the rows on the page.
            if "tagmatch=all" in view:
                for chosen in ("brand", "sale"):
                    assert shown_count(picker, chosen) == rows_shown(page), (view, chosen)
            promised = shown_count(picker, tag)
            picker.locator(f"input[data-include][value='{tag}']").check()
            expect(page).to_have_url(re.compile(rf"[?&]tag={tag}(&|$)"))
            after = wait_counted(page)
            assert after != before
            assert rows_shown(page) == promised, (view, tag, promised)
            if promised == 0:
                expect(page.get_by_role("heading", name="No queries match")).to_be_visible()
    if width == 390:
        assert_no_sideways_scroll(page)
    assert csp_errors(page) == []
