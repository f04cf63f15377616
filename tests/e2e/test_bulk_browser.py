"""Bulk tag editing in headless Chromium: in-page edits and Undo without a page reload,
select-all jobs with progress, two people at once, tight rate limits, the activity page.

The API (queryapi through /api) is the ground truth; every test works in an organization of
its own (made through the service's admin layer), so the tests do not disturb each other.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time

import pytest
from playwright.sync_api import expect

from queryapi import Client, RateLimited
from queryapi.stats import StatsCounter
from tests.browser import axe_serious
from tests.support.e2e import LAPTOP, WAIT_MS, csp_errors, make_org
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser

NAME_FIELD = "Your name (shown in the activity log)"
ROWS = [(f"winter boots {i:02d}", "en", "US", ["brand"] if i % 3 == 0 else [])
        for i in range(30)] + [
    (f"regenjacke {i:02d}", "de", "DE", ["sale"] if i % 2 else ["local"]) for i in range(20)]
BIG_GERMAN = 2100
BIG = [(f"laufschuhe modell {i:04d}", "de", "DE", ["sale"] if i % 7 == 0 else [])
       for i in range(BIG_GERMAN)] + [
    (f"running shoe model {i:04d}", "en", "GB", ["local"] if i % 5 == 0 else [])
    for i in range(400)]
THROTTLED = 600  # queries of the job under tight limits: six batches of 100
JOB_THREADS = ("tagdesk-job", "tagdesk-write")  # jobs/runner.py's and jobs/walk.py's


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Bulk editing e2e", {"Rows": ROWS, "Big": BIG})


@pytest.fixture(scope="module", autouse=True)
def quick_progress(live_dashboard):
    """A running job's panel asks for its progress five times a second, not once (restored
    afterwards): the tests wait for what the panel shows, not for its questions."""
    config = live_dashboard.app.config
    before = config.get("JOBS_POLL_SECONDS")
    config["JOBS_POLL_SECONDS"] = 0.2
    yield
    config["JOBS_POLL_SECONDS"] = before


@pytest.fixture
def batch_size(live_dashboard):
    """Set the job batch size for one test (restored afterwards)."""
    config = live_dashboard.app.config
    before = config["BULK_BATCH_SIZE"]

    def set_size(size: int) -> None:
        config["BULK_BATCH_SIZE"] = size

    yield set_size
    config["BULK_BATCH_SIZE"] = before


def sign_in(page, url: str, key: str, name: str | None = None) -> None:
    page.goto(url + "/signin")
    page.get_by_label("API key").fill(key)
    if name:
        page.get_by_label(NAME_FIELD).fill(name)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/projects"))


def open_project(page, url: str, project_id: str, query: str = "") -> None:
    page.goto(f"{url}/projects/{project_id}/queries{query}")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()


def open_rows(page, live_dashboard, org, address: str, name: str | None = None) -> dict:
    """Sign in (as `name`), open the project "Rows" at `address`; its tags as they were."""
    sign_in(page, live_dashboard.url, org.key, name)
    open_project(page, live_dashboard.url, org.projects["Rows"], address)
    return snapshot(org, "Rows")


def row(page, text: str):
    return page.locator("tr[data-row]", has=page.get_by_role(
        "checkbox", name=f"Select {text}", exact=True))


def tick(page, *texts: str) -> None:
    """Select the rows of `texts` by their checkboxes."""
    for text in texts:
        page.get_by_role("checkbox", name=f"Select {text}", exact=True).check()


def chips(page, text: str) -> list[str]:
    return row(page, text).locator("td.col-tags .chip").all_inner_texts()


def snapshot(org, project: str) -> dict[str, set[str]]:
    with org.api() as api:
        names = {tag.id: tag.name for tag in api.iter_tags(org.projects[project])}
        return {q.query: {names[t] for t in q.tags} for q in api.iter_queries(
            org.projects[project])}


def dialog_of(page):
    return page.get_by_role("dialog")


def pick_tags(page, action: str, *tag_names: str, find: str | None = None) -> None:
    page.get_by_role("button", name=action, exact=True).click()
    dialog = dialog_of(page)
    expect(dialog).to_be_visible()
    if find:
        dialog.get_by_label("Find a tag").fill(find)
    for name in tag_names:
        dialog.get_by_role("checkbox", name=name, exact=True).check()


def apply(page) -> None:
    dialog_of(page).get_by_role("button", name="Apply", exact=True).click()


def test_select_two_rows_add_a_tag_in_place_and_undo(page, live_dashboard, org, screenshots):
    url = live_dashboard.url
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, org.projects["Rows"], "?sort=query")
    page.evaluate("window.__sameDocument = true")
    before = snapshot(org, "Rows")
    first, second = "regenjacke 00", "regenjacke 01"
    tick(page, first, second)
    expect(page.locator("[data-selected-count]")).to_have_text("2")

    pick_tags(page, "Add tags", "seasonal", find="sea")
    expect(dialog_of(page)).to_contain_text(f"Add tags to 2 queries: “{first}”, “{second}”.")
    expect(dialog_of(page).get_by_role("checkbox", name="brand", exact=True)).to_be_hidden()
    page.screenshot(path=screenshots / "bulk-picker.png")
    assert axe_serious(page) == []
    apply(page)

    expect(dialog_of(page)).to_be_hidden()
    notice = page.locator("#notices [data-edit-notice]")
    expect(notice).to_contain_text("Added ‘seasonal’ to 2 queries.")
    expect(row(page, first).locator(".chip", has_text="seasonal")).to_be_visible()
    expect(row(page, second).locator(".chip", has_text="seasonal")).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True  # no page load
    expect(page.locator("[data-selected-count]")).to_have_text("2")  # still selected
    page.screenshot(path=screenshots / "bulk-added.png")

    after = snapshot(org, "Rows")
    assert after[first] == before[first] | {"seasonal"}
    assert after[second] == before[second] | {"seasonal"}
    assert {q for q in after if after[q] != before[q]} == {first, second}

    notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#notices")).to_contain_text("Undone: ‘seasonal’ removed again from 2 "
                                                     "queries.")
    expect(row(page, first).locator(".chip", has_text="seasonal")).to_have_count(0)
    expect(row(page, second).locator(".chip", has_text="seasonal")).to_have_count(0)
    assert page.evaluate("window.__sameDocument") is True
    assert snapshot(org, "Rows") == before
    assert csp_errors(page) == []
    assert not [m for m in page.console_messages if "htmx" in m.lower() and "error" in m.lower()]


def test_shift_click_selects_a_range_and_the_row_quick_edit(page, live_dashboard, org):
    url = live_dashboard.url
    sign_in(page, url, org.key)
    open_project(page, url, org.projects["Rows"], "?sort=query")
    names = page.locator("td.col-query").all_inner_texts()
    page.get_by_role("checkbox", name=f"Select {names[2]}", exact=True).click()
    page.get_by_role("checkbox", name=f"Select {names[6]}", exact=True).click(
        modifiers=["Shift"])
    expect(page.locator("[data-selected-count]")).to_have_text("5")
    for name in names[2:7]:
        expect(page.get_by_role("checkbox", name=f"Select {name}", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name=f"Select {names[7]}", exact=True)).not_to_be_checked()
    page.get_by_role("button", name="Clear selection").click()
    expect(page.locator("[data-selected-count]")).to_have_text("0")
    expect(page.get_by_role("button", name="Add tags")).to_be_disabled()
    # Changing the filters clears the selection (and "select all matching" with it).
    page.get_by_role("checkbox", name="Select all on this page").check()
    expect(page.locator("[data-selected-count]")).to_have_text(str(len(names)))
    page.get_by_label("Search queries").fill("winter")
    page.wait_for_url(re.compile(r"q=winter"))
    expect(page.locator("[data-selected-count]")).to_have_text("0")
    expect(page.get_by_role("checkbox", name="Select all on this page")).not_to_be_checked()
    open_project(page, url, org.projects["Rows"], "?sort=query")

    # One row's tags, from the row itself: untick one, tick another.
    target = "winter boots 03"  # brand
    other = "winter boots 04"
    before = snapshot(org, "Rows")
    page.get_by_role("button", name=f"Edit tags of {target}").click()
    dialog = dialog_of(page)
    expect(dialog.get_by_role("checkbox", name="brand", exact=True)).to_be_checked()
    dialog.get_by_role("checkbox", name="brand", exact=True).uncheck()
    dialog.get_by_role("checkbox", name="question", exact=True).check()
    apply(page)
    expect(page.locator("#notices")).to_contain_text(
        f"Tags of “{target}”: added ‘question’ and removed ‘brand’.")
    expect(row(page, target).locator(".chip")).to_have_text(["question"])
    after = snapshot(org, "Rows")
    assert after[target] == {"question"} and after[other] == before[other]
    assert {q for q in after if after[q] != before[q]} == {target}


def test_select_all_matching_runs_with_progress_to_the_end(page, live_dashboard, org,
                                                          batch_size, screenshots):
    url = live_dashboard.url
    before = snapshot(org, "Big")
    org.set_limits(10, 10_000, 100_000)  # slow enough to watch the progress
    batch_size(100)
    try:
        sign_in(page, url, org.key, "Ana")
        open_project(page, url, org.projects["Big"], "?lang=de")
        page.get_by_role("checkbox", name="Select all on this page").check()
        across = page.get_by_role("button", name=f"Select all {BIG_GERMAN:,} matching")
        expect(across).to_be_visible()
        across.click()
        expect(page.locator("[data-selected-count]")).to_have_text(f"All {BIG_GERMAN:,}")
        pick_tags(page, "Add tags", "brand")
        expect(dialog_of(page)).to_contain_text(f"For all {BIG_GERMAN:,} queries that match")
        apply(page)
        sentence = (f"Add ‘brand’ to {BIG_GERMAN:,} queries matching language German (de)?")
        expect(dialog_of(page)).to_contain_text(sentence)
        page.screenshot(path=screenshots / "bulk-confirm.png")
        assert axe_serious(page) == []
        dialog_of(page).get_by_role("button", name="Confirm").click()
        expect(dialog_of(page)).to_be_hidden()

        job = page.locator("[data-job]").first
        expect(job.get_by_role("heading")).to_have_text(
            f"Add ‘brand’ to {BIG_GERMAN:,} queries matching language German (de)")
        expect(job.locator("[data-done]")).not_to_have_text("0", timeout=WAIT_MS)
        expect(job).to_contain_text(f"of {BIG_GERMAN:,} queries")
        expect(job).to_contain_text("left")
        expect(job.get_by_role("button", name="Cancel")).to_be_visible()
        page.screenshot(path=screenshots / "bulk-progress.png")
        # The progress has been watched: the rest of the job need not be slow.
        org.set_limits(100_000, 1_000_000, 10_000_000)
        expect(job).to_contain_text("Added ‘brand’ to", timeout=60_000)
        already = sum(1 for q, names in before.items() if q.startswith("laufschuhe")
                      and "brand" in names)
        expect(job).to_contain_text(
            f"Added ‘brand’ to {BIG_GERMAN - already:,} queries")
        expect(job.get_by_role("button", name="Undo")).to_be_visible()
        page.screenshot(path=screenshots / "bulk-done.png")
        assert axe_serious(page) == []
    finally:
        org.set_limits(100_000, 1_000_000, 10_000_000)

    after = snapshot(org, "Big")
    for query, names in after.items():
        if query.startswith("laufschuhe"):
            assert names == before[query] | {"brand"}, query
        else:
            assert names == before[query], query
    # The page's rows were loaded again when the job ended: they show the tag.
    expect(page.locator("td.col-tags").first).to_contain_text("brand")
    assert csp_errors(page) == []


def test_two_people_tagging_the_same_row_keep_both_tags(browser, page, live_dashboard, org):
    url = live_dashboard.url
    target = "winter boots 10"
    sign_in(page, url, org.key, "Ana")
    open_project(page, url, org.projects["Rows"], "?sort=query")  # A's page is loaded
    other_context = browser.new_context(viewport=LAPTOP)
    try:
        other = other_context.new_page()
        sign_in(other, url, org.key, "Ben")
        open_project(other, url, org.projects["Rows"], "?sort=query")
        tick(other, target)
        pick_tags(other, "Add tags", "sale")
        apply(other)
        expect(other.locator("#notices")).to_contain_text("Added ‘sale’ to 1 query.")
    finally:
        other_context.close()

    assert chips(page, target) == []  # A's page still shows the old tags
    tick(page, target)
    pick_tags(page, "Add tags", "local")
    apply(page)
    expect(page.locator("#notices")).to_contain_text("Added ‘local’ to 1 query.")
    expect(row(page, target).locator(".chip")).to_have_text(["sale", "local"])
    assert snapshot(org, "Rows")[target] == {"sale", "local"}


def test_a_large_job_under_tight_limits_survives_many_429s(page, live_dashboard, batch_size,
                                                          monkeypatch):
    """Another client of the organization spends the budget while the job runs: the job is
    told 429 again and again, waits each time, and still ends with every query right."""
    url = live_dashboard.url
    rows = [(f"kurze hose {i:04d}", "de", "AT", []) for i in range(THROTTLED)]
    throttled = make_org(live_dashboard, "Throttled e2e", {"Slow": rows})
    batch_size(100)
    sign_in(page, url, throttled.key)
    open_project(page, url, throttled.projects["Slow"])
    throttled.set_limits(4, 100_000, 1_000_000)
    store = live_dashboard.app.extensions["tagdesk_jobs"]
    stop = threading.Event()
    # The job's 429s as its API client counts them, at once (the job records its count only
    # when a batch ends, and no batch ends while the budget is spent): the job's own threads.
    refused = []
    attempt = StatsCounter.attempt

    def counted(self, status):
        attempt(self, status)
        if status == 429 and threading.current_thread().name.startswith(JOB_THREADS):
            refused.append(status)

    monkeypatch.setattr(StatsCounter, "attempt", counted)

    def spend_the_budget():
        # Takes every request the limit frees, a moment before the job would (it never waits
        # on a 429 itself), until told to stop: at most 8 s, each of which refuses the job
        # about once (it waits out `Retry-After: 1` between tries).
        with Client(url, throttled.key, interactive_budget=0) as hammer:
            until = time.monotonic() + 8
            while not stop.is_set() and time.monotonic() < until:
                with contextlib.suppress(RateLimited):
                    hammer.list_queries(throttled.projects["Slow"], limit=1)
                time.sleep(0.02)

    page.get_by_role("checkbox", name="Select all on this page").check()
    page.get_by_role("button", name=f"Select all {THROTTLED:,} matching").click()
    pick_tags(page, "Add tags", "question")
    apply(page)
    dialog_of(page).get_by_role("button", name="Confirm").click()
    hammer = threading.Thread(target=spend_the_budget, daemon=True)
    hammer.start()
    # Stops early once the job has been refused three times.
    wait_until(lambda: len(refused) >= 3, 8, 0.05)
    stop.set()
    hammer.join(10)
    edit = store.for_project(throttled.projects["Slow"], limit=1)[0]
    job = page.locator("[data-job]").first
    expect(job).to_contain_text(f"Added ‘question’ to {THROTTLED:,} queries.", timeout=90_000)
    edit = store.get(edit.id)
    # What the job itself recorded: refused at least three times, and done all the same.
    assert edit.state == "done" and edit.rate_limited >= 3, edit
    throttled.set_limits(100_000, 1_000_000, 10_000_000)
    assert all(names == {"question"} for names in snapshot(throttled, "Slow").values())


def test_the_activity_page_shows_who_did_what_with_undo(page, live_dashboard, org,
                                                        screenshots):
    url = live_dashboard.url
    sign_in(page, url, org.key, "Bea")
    open_project(page, url, org.projects["Rows"], "?sort=query")
    before = snapshot(org, "Rows")
    target = "winter boots 20"
    tick(page, target)
    pick_tags(page, "Remove tags", "brand", "sale")
    apply(page)
    expect(page.locator("#notices")).to_contain_text(
        "Nothing to change: the query did not have ‘brand’ or ‘sale’.")
    page.get_by_role("button", name=f"Edit tags of {target}").click()
    dialog_of(page).get_by_role("checkbox", name="seasonal", exact=True).check()
    apply(page)
    expect(row(page, target).locator(".chip")).to_have_text(["seasonal"])

    page.get_by_role("link", name="Activity", exact=True).click()
    expect(page.get_by_role("heading", name="Activity", level=1)).to_be_visible()
    latest = page.locator("tr[data-activity-row]").first
    expect(latest).to_contain_text("Bea")
    expect(latest).to_contain_text(f"Tags of “{target}”: added ‘seasonal’.")
    page.screenshot(path=screenshots / "bulk-activity.png", full_page=True)
    assert axe_serious(page) == []
    latest.get_by_role("button", name=re.compile(r"^Undo")).click()
    expect(page.locator("tr[data-activity-row]").first).to_contain_text("Undone")
    assert snapshot(org, "Rows") == before
