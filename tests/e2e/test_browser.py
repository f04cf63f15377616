"""The dashboard in headless Chromium, against a live server with the embedded service.

The API itself (queryapi through /api) is the ground truth the pages are compared with.
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from dashboard.chips import contrast_ratio
from queryapi import Client, QueryFilters, Unavailable
from service.org import admin
from service.store.db import session_scope
from tests.browser import axe_serious
from tests.support.e2e import DEMO_QUERIES, LAPTOP, WAIT_MS, csp_errors

pytestmark = pytest.mark.browser

SHOP = "Online shop search"
ROW_QUERIES = "table.queries-table tbody td.col-query"


def sign_in_with_demo(page, dashboard, path="/signin"):
    page.goto(dashboard.url + path)
    page.get_by_role("button", name="Use the demo key").click()


def open_shop(page, dashboard):
    sign_in_with_demo(page, dashboard)
    page.get_by_role("link", name=SHOP, exact=True).click()
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()
    return page.url.split("?")[0]


def open_picker(page, title: str) -> None:
    page.locator("summary.picker__summary", has_text=title).click()


def rows(page) -> list[str]:
    return page.locator(ROW_QUERIES).all_inner_texts()


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def tick_german_then_english(page) -> None:
    """Two changes of the view: German ticked, then English beside it."""
    open_picker(page, "Language")
    page.get_by_role("checkbox", name="German (de)").check()
    page.wait_for_url(lambda url: params(url).get("lang") == ["de"])
    page.get_by_role("checkbox", name="English (en)").check()
    page.wait_for_url(lambda url: sorted(params(url).get("lang", [])) == ["de", "en"])


def shop_id(dashboard) -> str:
    with dashboard.api() as api:
        return next(p.id for p in api.all_projects() if p.name == SHOP)


def pick_filters(dashboard):
    """A German query with a tag, a piece of its text, and the API's answer for all three."""
    project_id = shop_id(dashboard)
    with dashboard.api() as api:
        tags = {tag.id: tag.name for tag in api.iter_tags(project_id)}
        german = [q for q in api.iter_queries(project_id, QueryFilters(languages=("de",)))
                  if q.tags]
        word_counts = Counter(word for q in german for word in q.query.split() if len(word) > 4)
        word = word_counts.most_common(1)[0][0]
        with_word = [q for q in german if word in q.query]
        tag = Counter(tags[t] for q in with_word for t in q.tags).most_common(1)[0][0]
        expected = api.list_queries(project_id, QueryFilters(
            text=word, languages=("de",), tag_names=(tag,)), limit=200)
    return word, tag, [q.query for q in expected.results]


def test_the_journey_sign_in_filter_sort_page_share_and_go_back(page, browser, live_dashboard,
                                                               screenshots):
    dashboard = live_dashboard
    page.goto(dashboard.url + "/")
    expect(page).to_have_url(re.compile(r"/signin"))
    page.screenshot(path=screenshots / "signin.png")
    assert axe_serious(page) == []

    # A wrong key: a sentence on the same page, the key not kept in the field.
    page.get_by_label("API key").fill("tdk_live_not-the-right-key-at-all-000000000000")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("That API key was not accepted")
    expect(page.get_by_label("API key")).to_have_value("")
    assert "not-the-right-key" not in page.content()

    # The demo key, with one click.
    page.get_by_role("button", name="Use the demo key").click()
    expect(page).to_have_url(re.compile(r"/projects$"))
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    assert dashboard.demo_key not in page.content()
    page.screenshot(path=screenshots / "projects.png")
    assert axe_serious(page) == []

    # Pick a project.
    page.get_by_role("link", name=SHOP, exact=True).click()
    expect(page.locator(".results__count")).to_have_text(f"1–50 of {DEMO_QUERIES} queries")
    base = page.url
    page.screenshot(path=screenshots / "queries.png")
    assert axe_serious(page) == []

    # Filter by text, language and tag; only the results are swapped, the URL follows.
    word, tag, expected = pick_filters(dashboard)
    search = page.get_by_label("Search queries")
    search.fill(word)
    page.wait_for_url(lambda url: params(url).get("q") == [word])
    expect(search).to_be_focused()
    open_picker(page, "Language")
    page.get_by_role("checkbox", name="German (de)").check()
    page.wait_for_url(lambda url: params(url).get("lang") == ["de"])
    page.keyboard.press("Escape")
    open_picker(page, "Tags")
    # The option's name ends with its count once the counts are painted.
    page.get_by_role("checkbox", name=re.compile(rf"^{re.escape(tag)}( [\d,]+)?$")).check()
    page.wait_for_url(lambda url: params(url).get("tag") == [tag])
    page.keyboard.press("Escape")
    expect(page.locator(".results__count")).to_contain_text(f"of {len(expected)} quer")
    assert rows(page) == expected
    for language in page.locator("td.col-language").all_inner_texts():
        assert language == "German (de)"
    assert page.locator("#filters").count() == 1  # the form was not re-rendered
    chips = page.get_by_role("link", name=re.compile(r"^Remove filter"))
    expect(chips).to_have_count(3)
    page.screenshot(path=screenshots / "queries-filtered.png")

    # Clear all, sort by query, then the next page.
    page.get_by_role("link", name="Clear all").click()
    page.wait_for_url(base)
    expect(page.get_by_label("Search queries")).to_have_value("")
    expect(page.locator('#filters input[name="lang"][value="de"]')).not_to_be_checked()
    page.get_by_role("link", name="Query", exact=True).click()
    page.wait_for_url(lambda url: params(url).get("sort") == ["query"])
    expect(page.get_by_role("columnheader", name="Query")).to_have_attribute(
        "aria-sort", "ascending")
    first_page = rows(page)
    assert first_page == sorted(first_page)
    page.get_by_role("link", name="Next", exact=True).click()
    page.wait_for_url(lambda url: params(url).get("page") == ["2"])
    expect(page.locator(".results__count")).to_have_text(f"51–100 of {DEMO_QUERIES} queries")
    second_page = rows(page)
    assert second_page == sorted(second_page) and second_page[0] >= first_page[-1]
    shared_url = page.url

    # A colleague opens the link: sign-in first, then exactly the same rows.
    colleague = browser.new_context(viewport=LAPTOP)
    try:
        other = colleague.new_page()
        other.goto(shared_url)
        expect(other).to_have_url(re.compile(r"/signin\?next="))
        expect(other.get_by_text("Please sign in to see that page.")).to_be_visible()
        other.get_by_role("button", name="Use the demo key").click()
        other.wait_for_url(shared_url)
        assert rows(other) == second_page
    finally:
        colleague.close()

    # Back: the previous view again, as a whole page from the server.
    with page.expect_event("load"):
        page.go_back()
    page.wait_for_url(lambda url: params(url).get("sort") == ["query"]
                      and "page" not in params(url))
    expect(page.locator(".results__count")).to_have_text(f"1–50 of {DEMO_QUERIES} queries")
    assert rows(page) == first_page
    navigation = page.evaluate("performance.getEntriesByType('navigation')[0].type")
    assert navigation in ("reload", "back_forward")
    assert page.locator("#filters").count() == 1
    assert csp_errors(page) == []


def test_back_through_filter_changes_shows_each_views_own_ticks(page, live_dashboard):
    """The filter form keeps no control state in history entries (autocomplete="off", which
    makes each pushState cheap): Back shows the ticks of the URL it returns to, drawn by the
    server, never the ticks the form had when it was left. A tick sends its request without
    htmx validating each of the form's checkboxes first (novalidate)."""
    open_shop(page, live_dashboard)
    page.evaluate("""() => {
      window.__validations = 0;
      document.addEventListener("htmx:validation:validate", () => window.__validations++);
    }""")
    tick_german_then_english(page)
    assert page.evaluate("window.__validations") == 0

    # Each step through history loads its page again from the server (htmx keeps no history
    # cache: refreshOnHistoryMiss): wait for that page, not only for the address, which
    # changes at once (on a loaded machine the old page was still shown 5 s later).
    with page.expect_event("load"):
        page.go_back()
    page.wait_for_url(lambda url: params(url).get("lang") == ["de"])
    expect(page.locator('#filters input[name="lang"][value="de"]')).to_be_checked()
    expect(page.locator('#filters input[name="lang"][value="en"]')).not_to_be_checked()
    assert set(page.locator("td.col-language").all_inner_texts()) == {"German (de)"}
    with page.expect_event("load"):
        page.go_back()
    page.wait_for_url(lambda url: "lang" not in params(url))
    expect(page.locator('#filters input[name="lang"]:checked')).to_have_count(0)
    with page.expect_event("load"):
        page.go_forward()
    page.wait_for_url(lambda url: params(url).get("lang") == ["de"])
    expect(page.locator('#filters input[name="lang"][value="de"]')).to_be_checked()


def test_a_change_of_view_is_one_history_entry_pushed_once_its_rows_are_shown(
        page, live_dashboard):
    """htmx makes no history call of its own: static/address.js pushes one entry per change,
    once the new rows are on the page (htmx pushed before swapping them in, after a
    replaceState of the entry it left). Only the page's first entry is marked for htmx
    (replaceState), so that Back to it loads it again."""
    open_shop(page, live_dashboard)
    page.evaluate("""() => {
      window.__history = [];
      for (const name of ["pushState", "replaceState"]) {
        const original = history[name].bind(history);
        history[name] = (...args) => {
          const languages = [...document.querySelectorAll("td.col-language")]
            .map((cell) => cell.textContent.trim());
          window.__history.push([name, String(args[2] ?? ""), [...new Set(languages)].sort()]);
          return original(...args);
        };
      }
    }""")
    tick_german_then_english(page)

    calls = page.evaluate("window.__history")
    assert [name for name, _, _ in calls] == ["replaceState", "pushState", "pushState"]
    (_, first, _), (_, german, shown_german), (_, both, shown_both) = calls
    assert first == ""
    assert params(german).get("lang") == ["de"] and shown_german == ["German (de)"]
    assert sorted(params(both).get("lang", [])) == ["de", "en"]
    assert set(shown_both) <= {"English (en)", "German (de)"}


def test_keyboard_focus_keeps_its_place_across_new_results(page, live_dashboard):
    """Next, a sort link or a filter's remove link pressed with the keyboard leaves with the
    old results; the focus comes back to the same control in the new ones, or to the results'
    heading when that control is gone."""
    open_shop(page, live_dashboard)
    pages = page.locator("nav.pagination")
    pages.get_by_role("link", name="Next", exact=True).focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: params(url).get("page") == ["2"])
    expect(pages.get_by_role("link", name="Next", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: params(url).get("page") == ["3"])
    expect(pages.get_by_role("link", name="Next", exact=True)).to_be_focused()
    expect(page.locator(".results__count")).to_have_text(f"101–150 of {DEMO_QUERIES} queries")

    header = page.locator("thead")
    header.get_by_role("link", name="Query", exact=True).focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: params(url).get("sort") == ["query"])
    expect(header.get_by_role("link", name="Query", exact=True)).to_be_focused()
    page.keyboard.press("Enter")  # the same link again: Z to A
    page.wait_for_url(lambda url: params(url).get("sort") == ["-query"])
    expect(header.get_by_role("link", name="Query", exact=True)).to_be_focused()

    page.goto(page.url.split("?")[0] + "?lang=de")
    page.get_by_role("link", name=re.compile(r"^Remove filter Language")).focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "lang" not in params(url))
    expect(page.get_by_role("heading", name="Results")).to_be_focused()
    assert csp_errors(page) == []


def test_chip_colours_are_the_apis_with_aa_contrast(page, live_dashboard, screenshots):
    dashboard = live_dashboard
    open_shop(page, dashboard)
    with dashboard.api() as api:
        colours = {tag.name: tag.color.lower() for tag in api.iter_tags(shop_id(dashboard))}
    chips = page.locator("td.col-tags .chip")
    assert chips.count() > 20
    seen = set()
    for chip in chips.all():
        name = chip.inner_text()
        background, text = chip.evaluate(
            "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
        assert to_hex(background) == colours[name], name
        assert contrast_ratio(to_hex(background), to_hex(text)) >= 4.5, name
        seen.add(name)
    assert len(seen) >= 5

    page.get_by_role("link", name="Tags", exact=True).click()
    expect(page.get_by_role("heading", name="Tags", level=1)).to_be_visible()
    page.screenshot(path=screenshots / "tags.png")
    assert axe_serious(page) == []
    tag_links = page.locator(".tag-cloud a.chip")
    expect(tag_links).to_have_count(len(colours))
    for link in tag_links.all():
        background = to_hex(link.evaluate("e => getComputedStyle(e).backgroundColor"))
        assert background == colours[link.inner_text()]
    page.get_by_role("link", name="brand", exact=True).click()
    page.wait_for_url(lambda url: params(url).get("tag") == ["brand"])
    for cell in page.locator("td.col-tags").all():
        assert "brand" in cell.inner_text().split("\n")
    assert csp_errors(page) == []


def to_hex(css: str) -> str:
    red, green, blue = (int(v) for v in re.findall(r"\d+", css)[:3])
    return f"#{red:02x}{green:02x}{blue:02x}"


def test_keyboard_slash_focuses_search_and_escape_clears_it(page, live_dashboard):
    base = open_shop(page, live_dashboard)
    page.locator("body").click(position={"x": 5, "y": 300})
    page.keyboard.press("/")
    search = page.get_by_label("Search queries")
    expect(search).to_be_focused()
    page.keyboard.type("schuhe")
    page.wait_for_url(lambda url: params(url).get("q") == ["schuhe"])
    page.keyboard.press("Escape")
    expect(search).to_have_value("")
    page.wait_for_url(base)
    expect(search).to_be_focused()
    # Focus is visible: the focused search box has an outline.
    outline = search.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none"


def test_select_all_on_this_page_and_the_selection_count(page, live_dashboard):
    open_shop(page, live_dashboard)
    select_all = page.get_by_role("checkbox", name="Select all on this page")
    select_all.check()
    expect(page.locator("[data-selected-count]")).to_have_text("50")
    first = rows(page)[0]
    page.get_by_role("checkbox", name=f"Select {first}", exact=True).uncheck()
    expect(page.locator("[data-selected-count]")).to_have_text("49")
    assert select_all.evaluate("e => e.indeterminate")


def test_filters_work_without_javascript(browser, live_dashboard):
    context = browser.new_context(viewport=LAPTOP, java_script_enabled=False)
    try:
        page = context.new_page()
        open_shop(page, live_dashboard)
        open_picker(page, "Language")
        page.get_by_role("checkbox", name="German (de)").check()
        page.get_by_role("button", name="Apply filters").click()
        page.wait_for_url(lambda url: params(url).get("lang") == ["de"])
        languages = set(page.locator("td.col-language").all_inner_texts())
        assert languages == {"German (de)"}
        page.get_by_role("link", name="Next", exact=True).click()
        page.wait_for_url(lambda url: params(url).get("page") == ["2"])
        assert set(page.locator("td.col-language").all_inner_texts()) == {"German (de)"}
    finally:
        context.close()


def test_busy_service_banner_retries_by_itself(page, live_dashboard, monkeypatch):
    base = open_shop(page, live_dashboard)
    real = Client.list_queries
    failures = {"left": 1}

    def busy_once(self, *args, **kwargs):
        if failures["left"] > 0:
            failures["left"] -= 1
            raise Unavailable(retry_after=2, status=503)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Client, "list_queries", busy_once)
    before = rows(page)
    page.get_by_label("Search queries").fill("a")
    banner = page.locator("#notices .notice")
    expect(banner).to_contain_text("temporarily unavailable")
    assert rows(page) == before  # the table was left alone
    # After the wait the page loads the view again, by itself.
    page.wait_for_url(lambda url: params(url).get("q") == ["a"], timeout=WAIT_MS)
    expect(page.locator("#notices .notice")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator(".results__count")).to_contain_text("queries")
    assert page.url.startswith(base)


def test_a_key_revoked_mid_session_returns_to_sign_in(page, live_dashboard):
    dashboard = live_dashboard
    service_app = dashboard.service_app
    with dashboard.api() as api:
        project_id = shop_id(dashboard)
        assert api.list_queries(project_id, limit=1).results
    with session_scope(service_app) as session:
        from sqlalchemy import select

        from service.store.models import Project

        # The demo's organization: other tests of this process add organizations of their own.
        org_id = session.scalar(select(Project.org_id).where(Project.id == project_id))
        key = admin.create_key(session, org_id, "tdk", name="to revoke")
    page.goto(dashboard.url + "/signin")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name=SHOP, exact=True).click()
    expect(page.locator(".results__count")).to_contain_text("queries")
    with session_scope(service_app) as session:
        admin.revoke_key(session, key)
    page.get_by_label("Search queries").fill("schuhe")
    page.wait_for_url(re.compile(r"/signin\?next="))
    expect(page.get_by_text("no longer accepted")).to_be_visible()
    assert "q%3Dschuhe" in page.url  # after signing in again, back to this very view
    assert page.locator("table.queries-table").count() == 0


def test_tablet_width_keeps_everything_usable(browser, live_dashboard, screenshots):
    context = browser.new_context(viewport={"width": 800, "height": 1024})
    try:
        page = context.new_page()
        open_shop(page, live_dashboard)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        expect(page.get_by_label("Search queries")).to_be_visible()
        expect(page.get_by_role("button", name="Sign out")).to_be_visible()
        page.screenshot(path=screenshots / "queries-tablet.png")
    finally:
        context.close()


@pytest.mark.parametrize(("path", "search", "typed"), [
    ("queries", "Search queries", "jacke"), ("tags", "Filter tags by name", "b")],
    ids=["queries", "tags"])
def test_the_page_stays_put_on_the_first_live_update(page, live_dashboard, path, search,
                                                     typed):
    """The empty notices strip takes no room at load, as after a live update: the heading does
    not jump up on the first keystroke in the search box."""
    url = open_shop(page, live_dashboard).rsplit("/", 1)[0] + "/" + path
    page.goto(url)
    heading = page.get_by_role("heading", level=1)
    expect(heading).to_be_visible()
    before = heading.bounding_box()["y"]
    assert page.locator("#notices").bounding_box()["height"] == 0
    with page.expect_response(lambda response: f"/{path}?" in response.url):
        page.get_by_label(search, exact=True).type(typed)
    page.wait_for_url(re.compile(re.escape(typed) + "$"))
    assert page.locator("#notices").evaluate("e => e.children.length") == 0
    assert heading.bounding_box()["y"] == before
