"""Suggested tags in headless Chromium at 1280 and 390 px: a row's chips with Accept and
Reject (by mouse or touch, and by the keys a and r), the confidence in words on focus, the
Tags picker's Suggested group with its count, the status line; no serious accessibility
violation, nothing scrolling sideways."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from service.learning.learner import of_app
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.e2e.test_work_queue_browser import open_tag_picker
from tests.support.e2e import assert_no_sideways_scroll, make_org

pytestmark = pytest.mark.browser

SIZES = ["laptop", "phone"]
SHOES = ["running", "trail", "leather", "kids", "hiking", "walking", "tennis", "soccer",
         "winter", "summer", "canvas", "suede", "slip on", "lace up"]
BAGS = ["travel", "laptop", "tote", "school", "gym", "beach", "weekend", "shopping",
        "diaper", "camera", "duffel", "messenger", "sports", "evening"]
ROWS = [row for n, word in enumerate(SHOES) for row in (
    (f"{word} shoes", "en", "US", ["brand"] if n < 12 else []),
    (f"{word} shoes offer", "en", "GB", []))] + [row for n, word in enumerate(BAGS) for row in (
        (f"{word} bag", "en", "US", ["sale"] if n < 12 else []),
        (f"{word} bags deal", "en", "GB", []))]


@pytest.fixture
def org(live_dashboard):
    """A project of its own for each test (accepting and rejecting change it)."""
    made = make_org(live_dashboard, "Suggestions e2e", {"Shop": ROWS})
    learner = of_app(live_dashboard.service_app)
    assert learner.refresh(made.projects["Shop"])
    learner.wait(120)
    return made


def a_page(request, size: str):
    return request.getfixturevalue("page" if size == "laptop" else "phone")


def suggested_rows(page, live_dashboard, org):
    """Signed in, the rows of the view of queries suggested brand, by query, shown with
    their Accept buttons."""
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, org.projects["Shop"], "?suggested=brand&sort=query")
    rows = page.locator("tr[data-row]")
    expect(rows.first.locator("[data-suggestion-accept]").first).to_be_visible()
    return rows


def accept_buttons(page):
    return page.get_by_role("button", name=re.compile(r"^Accept brand for "))


@pytest.mark.parametrize("size", SIZES)
def test_accept_and_reject_by_pointer_and_the_suggested_group(request, live_dashboard, org,
                                                              size):
    page = a_page(request, size)
    sign_in(page, live_dashboard.url, org.key, "Ana")
    open_project(page, live_dashboard.url, org.projects["Shop"], "?q=shoes+offer")
    first = accept_buttons(page).first
    expect(first).to_be_visible()
    query = first.get_attribute("aria-label").removeprefix("Accept brand for ")
    first.focus()
    words = page.locator(".suggestion:focus-within .suggestion__words")
    expect(words).to_be_visible()
    expect(words).to_have_text(re.compile(r"Suggested: (very likely|likely|possible), \d+ %"))
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []

    if size == "laptop":
        first.click()
    else:
        first.tap()
    expect(page.get_by_role("status").filter(has_text=f"Accepted ‘brand’ for “{query}”.")
           ).to_be_visible()
    row = page.locator("tr[data-row]", has=page.get_by_role("checkbox", name=f"Select {query}"))
    expect(row.locator(".chips .chip", has_text="brand")).to_have_attribute(
        "title", re.compile(r"^Suggested, accepted by Ana on "))
    expect(page.get_by_role("button", name=f"Accept brand for {query}")).to_have_count(0)
    # Its Undo, as any edit's: z takes the tag away again, and gives the suggestion back.
    page.keyboard.press("z")
    expect(row.locator(".chips .chip", has_text="brand")).to_have_count(0)
    expect(page.get_by_role("button", name=f"Accept brand for {query}")).to_be_visible()

    reject = page.get_by_role("button", name=re.compile(r"^Reject brand for ")).first
    rejected = reject.get_attribute("aria-label").removeprefix("Reject brand for ")
    reject.click()
    expect(page.get_by_role("status").filter(has_text="Rejected ‘brand’")).to_be_visible()
    expect(page.get_by_role("button", name=f"Accept brand for {rejected}")).to_have_count(0)

    picker = open_tag_picker(page)
    expect(picker.locator("#suggestions-status")).to_contain_text(
        re.compile(r"Suggestions learned from [\d,]+ tagged queries"))
    expect(picker.get_by_role("button", name="Refresh suggestions")).to_be_visible()
    option = picker.get_by_role("checkbox", name="Suggested brand")
    expect(option).to_be_visible()
    count = picker.locator("label:has(input[name=suggested][value=brand]) [data-count]")
    expect(count).to_have_text(re.compile(r"^\d+$"))
    option.check()
    expect(page).to_have_url(re.compile(r"suggested=brand"))
    expect(page.locator(".filter-chip", has_text="Suggested")).to_be_visible()
    assert axe_serious(page) == []


@pytest.mark.parametrize("size", SIZES)
def test_the_keys_accept_and_reject_the_rows_first_suggestion(request, live_dashboard, org,
                                                              size):
    page = a_page(request, size)
    rows = suggested_rows(page, live_dashboard, org)
    first_query = rows.first.locator("td.col-query").inner_text()
    count = rows.count()
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.get_by_role("status").filter(
        has_text=f"Accepted ‘brand’ for “{first_query}”.")).to_be_visible()
    # Accepted, the query is no longer suggested the tag: it leaves this view.
    expect(page.get_by_role("checkbox", name=f"Select {first_query}")).to_have_count(0)
    expect(rows).to_have_count(count - 1)
    # The row that took its place has the cursor and the focus: r rejects its suggestion
    # without a j first.
    second_query = rows.first.locator("td.col-query").inner_text()
    expect(page.locator("tr.row--cursor td.col-query")).to_have_text(second_query)
    expect(page.get_by_role("checkbox", name=f"Select {second_query}", exact=True)
           ).to_be_focused()
    page.keyboard.press("r")
    expect(page.get_by_role("status").filter(has_text="Rejected ‘brand’")).to_be_visible()
    expect(page.get_by_role("checkbox", name=f"Select {second_query}")).to_have_count(0)
    page.keyboard.press("?")
    dialog = page.locator("[data-shortcuts-dialog]")
    expect(dialog).to_contain_text("Accept that row's first suggested tag")
    assert axe_serious(page) == []


def test_a_pressed_again_before_the_answer_accepts_the_next_row(page, live_dashboard, org):
    """Keys typed ahead are kept in order, as a mail client keeps them: a second a pressed
    while the first row's answer is on its way accepts the row that takes its place, not the
    same row again (which answered "Nothing to accept" over the first one's Undo)."""
    rows = suggested_rows(page, live_dashboard, org)
    first, second = (rows.nth(n).locator("td.col-query").inner_text() for n in (0, 1))
    count = rows.count()
    # The fewest rows the page ever showed, counted after each change of the page.
    page.evaluate("""() => {
      window.fewestRows = Infinity;
      new MutationObserver(() => {
        window.fewestRows = Math.min(window.fewestRows,
                                     document.querySelectorAll("tr[data-row]").length);
      }).observe(document.body, {childList: true, subtree: true});
    }""")
    page.keyboard.press("j")
    page.keyboard.press("a")
    page.keyboard.press("a")
    expect(rows).to_have_count(count - 2)
    # Never an empty table between an answer and the rows drawn after it.
    assert page.evaluate("window.fewestRows") == count - 2
    for query in (first, second):
        expect(page.get_by_role("checkbox", name=f"Select {query}", exact=True)
               ).to_have_count(0)
    expect(page.get_by_role("status").filter(
        has_text=f"Accepted ‘brand’ for “{second}”.")).to_be_visible()
    expect(page.get_by_text("Nothing to accept")).to_have_count(0)
    # The Undo on screen is the second row's: z takes its tag away, the first keeps its own.
    page.keyboard.press("z")
    expect(page.get_by_role("status").filter(has_text="Undone")).to_be_visible()
    with org.api() as api:
        tagged = {query.query for query in api.iter_queries(
            org.projects["Shop"], QueryFilters(tag_names=("brand",)))}
    assert first in tagged
    assert second not in tagged


def test_keys_typed_ahead_go_with_an_answer_that_failed(page, live_dashboard, org):
    """The first a's answer fails: the rows stay as they were (an answer that swaps nothing
    emptied the table), the a typed behind it is not sent (it would go to the same row), and
    a works again at once."""
    rows = suggested_rows(page, live_dashboard, org)
    first = rows.first.locator("td.col-query").inner_text()
    count = rows.count()
    held = []  # the accepts sent, answered by the test below
    page.route("**/queries/suggestions/accept", lambda route: held.append(route))
    page.keyboard.press("j")
    page.keyboard.press("a")
    for _ in range(500):
        if held:
            break
        page.wait_for_timeout(20)
    assert held
    page.keyboard.press("a")  # typed ahead, while the first answer is awaited
    held[0].fulfill(status=503, content_type="text/html", body="<p>Busy.</p>")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    page.wait_for_timeout(300)  # a second request, if one were sent, would be out by now
    assert len(held) == 1
    expect(rows).to_have_count(count)  # the answer swapped nothing: the rows stay
    page.unroute("**/queries/suggestions/accept")
    page.keyboard.press("a")
    expect(page.get_by_role("status").filter(
        has_text=f"Accepted ‘brand’ for “{first}”.")).to_be_visible()
    expect(rows).to_have_count(count - 1)


@pytest.mark.parametrize("size", SIZES)
def test_accept_all_is_a_job_with_undo(request, live_dashboard, org, size):
    page = a_page(request, size)
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, org.projects["Shop"], "?suggested=brand")
    button = page.get_by_role("button", name=re.compile(r"^Accept all [\d,]+ suggestions of "
                                                        r"“brand”$"))
    expect(button).to_be_visible()
    total = int(re.search(r"[\d,]+", button.inner_text()).group().replace(",", ""))
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    button.click()
    job = page.locator("[data-job]").first
    expect(job.locator("[data-job-summary]")).to_have_text(
        f"Accepted {total:,} suggestions of ‘brand’.", timeout=30_000)
    assert axe_serious(page) == []
    job.get_by_role("button", name="Undo").click()
    expect(page.locator("[data-job]").first.locator("[data-job-summary]")).to_contain_text(
        f"Undone: ‘brand’ removed again from {total:,}", timeout=30_000)
    with org.api() as api:
        tagged = api.list_queries(org.projects["Shop"], QueryFilters(tag_names=("brand",)))
    assert tagged.page.total_records == 12  # the twelve tagged by hand, as before


def test_a_run_of_accepts_asks_for_the_counts_once_it_pauses(page, live_dashboard, org):
    """Each a draws the rows again; the counts beside the choices and the saved views' counts
    are asked once the run of edits pauses (a second), not after each accept: one facets call
    for the run, not one an edit. They are right once asked. (On a busy machine one accept
    can take over a second: that is a pause too, and its counts are asked.)"""
    rows = suggested_rows(page, live_dashboard, org)
    count = rows.count()
    counted = []
    page.on("request", lambda request: counted.append(request.url)
            if re.search(r"/(queries|views)/counts\b", request.url) else None)
    page.evaluate(WATCH_REDRAWS)
    page.keyboard.press("j")
    for _ in range(4):
        page.keyboard.press("a")
    expect(rows).to_have_count(count - 4)
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    if page.evaluate("performance.now() - window.__redrawn.at(-1)") < 0.9 * PAUSE_MS:
        assert [url for url in counted if "/queries/counts" in url] == []  # not yet: a pause
    with org.api() as api:
        suggested = api.list_queries(org.projects["Shop"], QueryFilters(suggested_tag_ids=(
            org.tags["Shop"]["brand"],)), limit=1).page.total_records
    # The Tags picker's "Suggested brand" count: of the queries still suggested brand.
    place = page.locator('label:has(input[name="suggested"][value="brand"]) [data-count]')
    expect(place).to_have_text(f"{suggested:,}")
    page.wait_for_timeout(500)  # any further request would be out by now
    redrawn = page.evaluate("window.__redrawn")
    assert len(redrawn) == 4
    pauses = 1 + sum(later - earlier >= PAUSE_MS for earlier, later in pairwise(redrawn))
    assert len([url for url in counted if "/queries/counts" in url]) == pauses, (counted, redrawn)
    assert len([url for url in counted if "/views/counts" in url]) == pauses, (counted, redrawn)


PAUSE_MS = 1000  # static/counts.js
# When the rows were drawn again after each edit (ms, the page's clock): the pause is counted
# from there.
WATCH_REDRAWS = """() => {
  window.__redrawn = [];
  document.addEventListener("htmx:afterSettle", (event) => {
    const asked = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (event.target.id === "results" && asked && asked.matches("[data-refresh-results]")) {
      window.__redrawn.push(performance.now());
    }
  });
}"""
