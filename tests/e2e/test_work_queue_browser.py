"""The queries page's work queue in headless Chromium, at 1280 px and at 390 px: the tag
picker's Untagged, Exclude and All of (the API's tag logic extension), the counts beside
every option (the API's facets are the ground truth), the project's progress, saved views
(save, open, rename, delete, Undo), the view kept over reload and Back; and, against a
deployment without the extension, none of these controls.

Every test works in an organization of its own (made through the service's admin layer)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org, show_filters

pytestmark = pytest.mark.browser

PROJECT = "Queue"
ROWS = [
    ("rain jacket", "en", "GB", []),
    ("regenjacke wasserdicht", "de", "DE", []),
    ("wanderschuhe damen", "de", "DE", []),
    ("botas de agua", "es", "ES", []),
    *[(f"winter boots {i:02d}", "en", "US", []) for i in range(5)],
    ("brand boots", "en", "US", ["brand"]),
    ("markenschuhe herren", "de", "DE", ["brand"]),
    ("sale boots", "en", "US", ["sale"]),
    ("angebot schuhe", "de", "AT", ["sale"]),
    ("brand sale boots", "en", "US", ["brand", "sale"]),
    ("marken angebot laden", "de", "DE", ["brand", "sale", "local"]),
    ("local shoe shop", "en", "GB", ["local"]),
    ("where to buy boots", "en", "US", ["question"]),
]
WIDTHS = [1280, 390]

# Every count painted in the filter form: (input name, value, text, dimmed).
PAINTED = """() => [...document.querySelectorAll('#filters [data-count]')].map(place => {
  const input = place.parentNode.querySelector('input');
  return input && [input.name, input.value, place.textContent.trim(),
                   place.parentNode.classList.contains('option--zero')];
}).filter(Boolean)"""


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Work queue e2e",
                    {PROJECT: ROWS, "Second": ROWS[:3] + ROWS[-2:]})


def expected_rows(keep) -> set[str]:
    return {text for text, _lang, _country, tags in ROWS if keep(set(tags))}


def shown_rows(page) -> set[str]:
    return set(page.locator("tr[data-row] td.col-query").all_inner_texts())


def row_tags(page) -> list[set[str]]:
    return [set(r.locator("td.col-tags .chip").all_inner_texts())
            for r in page.locator("tr[data-row]").all()]


def wait_counted(page) -> str:
    """Wait until the counts of the view on screen are painted; its query string."""
    search = page.evaluate("location.search")
    expect(page.locator("#filters")).to_have_attribute("data-counted", search)
    return search


def assert_counts_match_api(page, org, filters: QueryFilters) -> None:
    """Every painted count is the API's facet count for the view (0 where it lists none),
    and an option with 0 is dimmed."""
    wait_counted(page)
    project = org.projects[PROJECT]
    with org.api() as api:
        facets = api.facets(project, filters)
        names = {tag.id: tag.name for tag in api.iter_tags(project)}
    expected = {"lang": dict(facets.languages), "country": dict(facets.countries),
                "tag": {names[t]: n for t, n in facets.tags if t in names},
                "untagged": {"1": facets.untagged}}
    painted = page.evaluate(PAINTED)
    assert {name for name, *_ in painted} == {"lang", "country", "tag", "untagged"}
    wrong = [(name, value, text, f"{expected[name].get(value, 0):,}")
             for name, value, text, zero in painted
             if text != f"{expected[name].get(value, 0):,}"
             or zero != (expected[name].get(value, 0) == 0)]
    assert wrong == [], wrong[:10]
    # The option's label reads "German (de) 4": its name, then its count.
    german = page.locator("#filters label.option:has(input[name=lang][value=de])").first
    expect(german).to_have_text(re.compile(
        rf"^\s*German \(de\)\s+{expected['lang'].get('de', 0):,}\s*$"))


def through_history(page, step: str) -> None:
    """Back or forward: a history step, then the whole page the server draws for it (htmx
    keeps no history cache and reloads), loaded before the next step."""
    with page.expect_event("load"):
        getattr(page, f"go_{step}")()


def open_tag_picker(page):
    picker = page.locator("details[data-tag-picker]")
    show_filters(page)
    if picker.get_attribute("open") is None:
        page.locator("details[data-tag-picker] > summary").click()
    expect(picker).to_have_attribute("open", "")
    return picker


@pytest.mark.parametrize("width", WIDTHS)
def test_untagged_exclude_and_all_of(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    project = org.projects[PROJECT]
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, project)
    wait_counted(page)
    assert_counts_match_api(page, org, QueryFilters())

    # Keyboard: open the tag picker from its summary, Tab to Untagged, Space.
    show_filters(page)
    summary = page.locator("details[data-tag-picker] > summary")
    summary.focus()
    page.keyboard.press("Enter")
    picker = page.locator("details[data-tag-picker]")
    expect(picker).to_have_attribute("open", "")
    # Its accessible name, while open; its state by its input (a closed picker's controls
    # are out of the accessibility tree).
    expect(picker.get_by_role("checkbox", name=re.compile(r"^Untagged\b"))).to_have_count(1)
    untagged = picker.locator("input[name=untagged]")
    for _ in range(4):
        page.keyboard.press("Tab")
        if untagged.evaluate("e => e === document.activeElement"):
            break
    assert untagged.evaluate("e => e === document.activeElement")
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    page.keyboard.press("Space")
    expect(page).to_have_url(re.compile(r"[?&]untagged=1(&|$)"))
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    expect(page.locator("#results .filter-chip")).to_have_count(1)
    expect(untagged).to_be_checked()
    assert shown_rows(page) == expected_rows(lambda tags: not tags)
    assert all(tags == set() for tags in row_tags(page))
    assert_counts_match_api(page, org, QueryFilters(untagged=True))
    # The Untagged option's own count is the number of rows of this view.
    label = picker.locator("label[data-option=untagged]")
    expect(label).to_have_text(re.compile(rf"Untagged\s+{len(expected_rows(lambda t: not t))}$"))

    # Including a tag unchecks Untagged.
    open_tag_picker(page)
    include_brand = picker.locator("input[data-include][value=brand]")
    expect(picker.get_by_role("checkbox", name="Exclude brand", exact=True)).to_have_count(1)
    exclude_brand = picker.locator("input[data-exclude][value=brand]")
    include_brand.check()
    expect(page).to_have_url(re.compile(r"[?&]tag=brand(&|$)"))
    expect(page).not_to_have_url(re.compile(r"untagged="))
    expect(untagged).not_to_be_checked()
    expect(page.get_by_role("link", name="Remove filter Tag: brand", exact=True)).to_be_visible()

    # Exclude brand (its include goes): no row carries it.
    exclude_brand.check()
    expect(page).to_have_url(re.compile(r"[?&]nottag=brand(&|$)"))
    expect(page).not_to_have_url(re.compile(r"[?&]tag="))
    expect(include_brand).not_to_be_checked()
    expect(page.get_by_role("link", name="Remove filter Not tag: brand", exact=True)) \
        .to_be_visible()
    expect(page.locator("#results .filter-chip")).to_have_count(1)
    assert shown_rows(page) == expected_rows(lambda tags: "brand" not in tags)
    assert all("brand" not in tags for tags in row_tags(page))
    assert_counts_match_api(page, org, QueryFilters(exclude_tag_names=("brand",)))

    # Including it again takes the Exclude away; two tags, All of: rows carry both.
    include_brand.check()
    expect(exclude_brand).not_to_be_checked()
    expect(page).to_have_url(re.compile(r"[?&]tag=brand(&|$)"))
    expect(page).not_to_have_url(re.compile(r"nottag="))
    match = picker.locator("input[name=tagmatch][value=all]")
    expect(match).to_be_hidden()  # one tag: nothing to combine
    picker.locator("input[data-include][value=sale]").check()
    expect(page).to_have_url(re.compile(r"[?&]tag=sale(&|$)"))
    expect(page.get_by_role("link", name="Remove filter Tag: brand or sale", exact=True)) \
        .to_be_visible()
    expect(picker.get_by_role("radio", name="Any of the chosen tags", exact=True)).to_be_checked()
    picker.get_by_role("radio", name="All of the chosen tags", exact=True).check()
    expect(page).to_have_url(re.compile(r"[?&]tagmatch=all(&|$)"))
    expect(page.get_by_role("link", name="Remove filter Tags: brand and sale", exact=True)) \
        .to_be_visible()
    assert shown_rows(page) == expected_rows(lambda tags: {"brand", "sale"} <= tags)
    assert all({"brand", "sale"} <= tags for tags in row_tags(page))
    all_of = QueryFilters(tag_names=("brand", "sale"), tag_match="all")
    assert_counts_match_api(page, org, all_of)

    # Reload: the same view, the pickers say so.
    page.reload()
    expect(page.get_by_role("link", name="Remove filter Tags: brand and sale", exact=True)) \
        .to_be_visible()
    assert shown_rows(page) == expected_rows(lambda tags: {"brand", "sale"} <= tags)
    for value in ("brand", "sale"):
        expect(picker.locator(f"input[data-include][value={value}]")).to_be_checked()
    expect(match).to_be_checked()
    expect(untagged).not_to_be_checked()
    assert_counts_match_api(page, org, all_of)

    # Back: the view before (brand or sale), the pickers follow the address.
    through_history(page, "back")
    expect(page).not_to_have_url(re.compile(r"tagmatch="))
    expect(page.get_by_role("link", name="Remove filter Tag: brand or sale", exact=True)) \
        .to_be_visible()
    assert shown_rows(page) == expected_rows(lambda tags: bool({"brand", "sale"} & tags))
    expect(picker.locator("input[name=tagmatch][value=any]")).to_be_checked()
    for value in ("brand", "sale"):
        expect(picker.locator(f"input[data-include][value={value}]")).to_be_checked()
    # Back twice more: Exclude brand, the pickers follow.
    through_history(page, "back")
    expect(page).to_have_url(re.compile(r"\?tag=brand$"))
    through_history(page, "back")
    expect(page).to_have_url(re.compile(r"[?&]nottag=brand(&|$)"))
    expect(exclude_brand).to_be_checked()
    expect(include_brand).not_to_be_checked()
    expect(page.get_by_role("link", name="Remove filter Not tag: brand", exact=True)) \
        .to_be_visible()
    assert shown_rows(page) == expected_rows(lambda tags: "brand" not in tags)
    through_history(page, "forward")
    expect(page).to_have_url(re.compile(r"\?tag=brand$"))
    expect(include_brand).to_be_checked()
    expect(exclude_brand).not_to_be_checked()

    # Untagged unchecks the included tags.
    open_tag_picker(page)
    untagged.check()
    expect(page).to_have_url(re.compile(r"[?&]untagged=1(&|$)"))
    expect(page).not_to_have_url(re.compile(r"[?&]tag="))
    expect(include_brand).not_to_be_checked()
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    assert csp_errors(page) == []


def progress_sentence(total: int, untagged: int) -> str:
    percent = untagged * 100 // total
    percent = max(percent, 1) if untagged else percent
    return f"{untagged:,} of {total:,} queries untagged ({percent}\u00a0%)"


@pytest.mark.parametrize("width", WIDTHS)
def test_progress_and_show_untagged(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    url = live_dashboard.url
    sign_in(page, url, org.key)
    with org.api() as api:
        sentences = {name: progress_sentence(f.total_records, f.untagged) for name, f in (
            (name, api.facets(project, QueryFilters()))
            for name, project in org.projects.items())}
    assert sentences[PROJECT] == progress_sentence(len(ROWS), len(expected_rows(
        lambda t: not t)))
    # The project cards say the same.
    for name, project in org.projects.items():
        expect(page.locator(f"#count-p-{project}")).to_contain_text(sentences[name])
    if width == 390:
        assert_no_sideways_scroll(page)

    # On the queries page, under the title, with a filter chosen all the same.
    open_project(page, url, org.projects[PROJECT], "?lang=de")
    progress = page.locator("[data-progress]")
    expect(progress).to_contain_text(sentences[PROJECT])
    bar = page.get_by_role("progressbar", name="Queries tagged")
    expect(bar).to_be_visible()
    tagged = len(ROWS) - len(expected_rows(lambda t: not t))
    expect(bar).to_have_attribute("value", str(tagged))
    expect(bar).to_have_attribute("max", str(len(ROWS)))
    progress.get_by_role("link", name="Show untagged", exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]untagged=1(&|$)"))
    expect(page).not_to_have_url(re.compile(r"lang="))
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    assert shown_rows(page) == expected_rows(lambda tags: not tags)
    expect(page.locator("details[data-tag-picker] input[name=untagged]")).to_be_checked()
    expect(progress).to_contain_text(sentences[PROJECT])
    if width == 390:
        assert_no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_progress_and_totals_follow_an_edit_and_its_undo(page, live_dashboard, org, width):
    """In the untagged view: a bulk Apply, its Undo (z), a row's own edit and its Undo — after
    each, without a reload, the progress line and the list's total are the API's facets."""
    page.set_viewport_size({"width": width, "height": 860})
    project = org.projects["Second"]
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, project, "?untagged=1&sort=query")
    wait_counted(page)
    progress = page.locator("[data-progress]")
    count = page.locator("#results .results__count")
    notice = page.locator("#notices [data-edit-notice]")

    def agree_with_the_api() -> None:
        with org.api() as api:
            whole = api.facets(project, QueryFilters())
            untagged = api.facets(project, QueryFilters(untagged=True))
        expect(progress).to_contain_text(progress_sentence(whole.total_records, whole.untagged))
        expect(count).to_have_text(re.compile(rf" of {untagged.total_records:,} quer"))

    def tag_then_undo(open_dialog, tag: str, done: str, undone: str) -> None:
        """`open_dialog`, tick `tag`, Apply, then Undo (z): the API's counts after each."""
        open_dialog()
        page.get_by_role("dialog").get_by_role("checkbox", name=tag, exact=True).check()
        page.get_by_role("dialog").get_by_role("button", name="Apply", exact=True).click()
        expect(notice).to_contain_text(done)
        agree_with_the_api()
        page.locator("h1").click()
        page.keyboard.press("z")
        expect(notice).to_contain_text(undone)
        agree_with_the_api()

    def selected_rows() -> None:
        page.get_by_role("checkbox", name="Select rain jacket", exact=True).check()
        page.get_by_role("button", name="Add tags", exact=True).click()

    agree_with_the_api()
    tag_then_undo(selected_rows, "local", "Added ‘local’ to 1 query.",
                  "Undone: ‘local’ removed again from 1 query.")
    # A row's own edit (its quick edit), then its Undo.
    tag_then_undo(page.get_by_role("button", name="Edit tags of regenjacke wasserdicht").click,
                  "question", "added ‘question’", "Undone")
    with org.api() as api:
        assert api.facets(project, QueryFilters()).untagged == 3
    assert csp_errors(page) == []


def view_name(name: str, count: int | None = None) -> re.Pattern:
    """A saved view's link by its accessible name: the name, a comma, the count and its noun
    (Chromium puts a space before the comma, at the hidden text's edge)."""
    number = r"[\d,]+ quer(y|ies)" if count is None else \
        f"{count:,} {'query' if count == 1 else 'queries'}"
    return re.compile(rf"^{re.escape(name)} ?, {number}$")


def params(address: str) -> set[tuple[str, str]]:
    return set(parse_qsl(urlsplit(address).query))


@pytest.mark.parametrize("width", WIDTHS)
def test_saved_views_save_open_rename_delete_undo(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    url = live_dashboard.url
    project = org.projects[PROJECT]
    name, renamed = f"DE untagged {width}", f"German queue {width}"
    sign_in(page, url, org.key)
    open_project(page, url, project, "?lang=de&untagged=1")
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    saved_address = page.url
    show_filters(page)
    section = page.locator("#saved-views")
    expect(page.get_by_role("heading", name="Saved views")).to_be_visible()
    section.locator("summary", has_text="Save view").click()
    field = section.get_by_label("View name", exact=True)
    expect(field).to_be_visible()
    if width == 390:
        assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    field.fill(name)
    section.get_by_role("button", name="Save", exact=True).click()
    expect(section).to_contain_text(f"Saved the view “{name}”.")
    count = len({t for t, lang, _c, tags in ROWS if lang == "de" and not tags})
    with org.api() as api:
        kept = {v.name: v.total_records for v in api.list_views(project)}
    assert kept[name] == count
    link = section.get_by_role("link", name=view_name(name, count))
    expect(link).to_be_visible()

    # Elsewhere, then open it from its link: the same view.
    open_project(page, url, project)
    show_filters(page)
    link.click()
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    assert params(page.url) == params(saved_address)
    assert shown_rows(page) == {t for t, lang, _c, tags in ROWS if lang == "de" and not tags}
    expect(page.locator("details[data-tag-picker] input[name=untagged]")).to_be_checked()

    # Rename.
    show_filters(page)
    section.locator("summary", has_text=re.compile(rf"^Change\s*{re.escape(name)}$")).click()
    section.get_by_label(f"New name for {name}", exact=True).fill(renamed)
    section.get_by_role("button", name=f"Rename {name}", exact=True).click()
    expect(section).to_contain_text(f"Renamed the view to “{renamed}”.")
    expect(section.get_by_role("link", name=view_name(renamed, count))).to_be_visible()
    expect(section.get_by_role("link", name=re.compile(rf"^{re.escape(name)} "))).to_have_count(0)

    # Delete, then Undo.
    section.locator("summary", has_text=re.compile(rf"^Change\s*{re.escape(renamed)}$")).click()
    section.get_by_role("button", name=f"Delete {renamed}", exact=True).click()
    expect(section).to_contain_text(f"Deleted the view “{renamed}”.")
    expect(section.get_by_role("link", name=view_name(renamed, count))).to_have_count(0)
    with org.api() as api:
        assert renamed not in {v.name for v in api.list_views(project)}
    section.get_by_role("button", name="Undo", exact=True).click()
    restored = section.get_by_role("link", name=view_name(renamed, count))
    expect(restored).to_be_visible()
    with org.api() as api:
        assert renamed in {v.name for v in api.list_views(project)}
    open_project(page, url, project)
    show_filters(page)
    section.get_by_role("link", name=view_name(renamed, count)).click()
    expect(page.get_by_role("link", name="Remove filter Untagged", exact=True)).to_be_visible()
    assert params(page.url) == params(saved_address)
    if width == 390:
        assert_no_sideways_scroll(page)
    assert csp_errors(page) == []


def test_saved_views_by_keyboard_keep_the_focus(page, live_dashboard, org):
    """Save (a name, Enter), Rename, Delete and Undo from the keyboard alone: after each the
    focus is on the section's sentence (after a delete, on its Undo), so Tab goes on from
    there instead of from the top of the page."""
    page.set_viewport_size({"width": 1280, "height": 860})
    url = live_dashboard.url
    project = org.projects[PROJECT]
    name, renamed = "Keys only", "Keys only renamed"
    sign_in(page, url, org.key)
    open_project(page, url, project, "?lang=es")
    section = page.locator("#saved-views")
    keys = page.keyboard

    def focused_text() -> str:
        return page.evaluate("document.activeElement.outerHTML.slice(0, 200)")

    def tab_to(locator, most: int = 80) -> None:
        for _ in range(most):
            if locator.evaluate("e => e === document.activeElement"):
                return
            keys.press("Tab")
        raise AssertionError(focused_text())

    # Save: the summary, Enter, Tab to the name, type it, Enter.
    tab_to(section.locator("summary", has_text="Save view"))
    keys.press("Enter")
    keys.press("Tab")
    expect(section.get_by_label("View name", exact=True)).to_be_focused()
    keys.type(name)
    keys.press("Enter")
    note = section.get_by_role("status")
    expect(note).to_contain_text(f"Saved the view “{name}”.")
    expect(note).to_be_focused()
    keys.press("Tab")  # on from the sentence: the views' links
    assert section.evaluate("s => s.contains(document.activeElement)"), focused_text()

    # Rename: Change, Enter, the field, a new name, Enter.
    tab_to(section.locator("summary", has_text=re.compile(rf"^Change\s*{re.escape(name)}$")))
    keys.press("Enter")
    keys.press("Tab")
    expect(section.get_by_label(f"New name for {name}", exact=True)).to_be_focused()
    keys.press("ControlOrMeta+a")
    keys.type(renamed)
    keys.press("Enter")
    expect(note).to_contain_text(f"Renamed the view to “{renamed}”.")
    expect(note).to_be_focused()

    # Delete: the Undo it offers has the focus; Enter brings the view back.
    tab_to(section.locator("summary", has_text=re.compile(rf"^Change\s*{re.escape(renamed)}$")))
    keys.press("Enter")
    tab_to(section.get_by_role("button", name=f"Delete {renamed}", exact=True))
    keys.press("Enter")
    expect(note).to_contain_text(f"Deleted the view “{renamed}”.")
    undo = section.get_by_role("button", name="Undo", exact=True)
    expect(undo).to_be_focused()
    with org.api() as api:
        assert renamed not in {v.name for v in api.list_views(project)}
    keys.press("Enter")
    expect(note).to_contain_text(f"Saved the view “{renamed}”.")
    expect(note).to_be_focused()
    expect(section.get_by_role("link", name=view_name(renamed))).to_be_visible()
    with org.api() as api:
        assert renamed in {v.name for v in api.list_views(project)}
    assert axe_serious(page) == []
    assert csp_errors(page) == []


# --- a deployment without the extensions ------------------------------------------------------


def test_without_the_extension_none_of_it(page, plain_dashboard, org):
    sign_in(page, plain_dashboard, org.key)
    open_project(page, plain_dashboard, org.projects[PROJECT], "?untagged=1&nottag=brand")
    expect(page.locator("tr[data-row]")).to_have_count(len(ROWS))  # no tag logic applied
    open_tag_picker(page)
    expect(page.locator("details[data-tag-picker] input[data-include]").first).to_be_visible()
    for gone in ("input[name=untagged]", "input[name=nottag]", "input[name=tagmatch]",
                 "[data-progress]", "#saved-views", "#filters[data-counts-url]"):
        expect(page.locator(gone)).to_have_count(0)
    # No counts beside the options.
    assert page.evaluate("[...document.querySelectorAll('[data-count]')]"
                         ".every(e => !e.textContent.trim())")
    expect(page.get_by_role("heading", name="Saved views")).to_have_count(0)
    expect(page.get_by_role("link", name="Show untagged")).to_have_count(0)
    expect(page.get_by_role("link", name=re.compile(r"^Remove filter (Untagged|Not tag)"))) \
        .to_have_count(0)
