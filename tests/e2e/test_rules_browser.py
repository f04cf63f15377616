"""Rules in headless Chromium, at 1280 px and at 390 px: Make a rule from this view (a
filtered queries view), a Pattern, a Rule name, a tag to add, Preview (its sentence is the
API's preview), Save rule by keyboard alone, the job that gives the tag to the current
matches; the Rules page (the rule, its condition in words, its counts), Pause and Resume,
Edit (Preview says the difference), Delete; refusals in sentences with what was typed kept;
and, against a deployment without the extension, no Rules tab and no Make a rule link.

The API (queryapi through /api) is the ground truth; every test works in a project of its
own of an organization of its own (made through the service's admin layer)."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from queryapi import QueryFilters
from tests.browser import axe_serious
from tests.e2e.test_bulk_browser import open_project, sign_in, snapshot
from tests.support.e2e import assert_no_sideways_scroll, csp_errors, make_org

pytestmark = pytest.mark.browser

ROWS = [
    ("wanderschuhe damen", "de", "DE", []),
    ("laufschuhe herren", "de", "DE", []),
    ("schuhe günstig", "de", "AT", ["sale"]),
    ("markenschuhe herren", "de", "DE", ["brand"]),
    ("regenjacke wasserdicht", "de", "DE", []),
    ("running shoes", "en", "US", []),
    ("schuh store london", "en", "GB", []),
    ("winter boots", "en", "US", ["sale"]),
]
WIDTHS = [1280, 390]
REFUSALS = "Refusals"


@pytest.fixture(scope="module")
def org(live_dashboard):
    return make_org(live_dashboard, "Rules e2e",
                    {**{f"Rules {width}": ROWS for width in WIDTHS},
                     **{f"Removal {width}": ROWS for width in WIDTHS}, REFUSALS: ROWS})


def matching(pattern: str, lang: str = "de") -> set[str]:
    return {text for text, language, _country, _tags in ROWS
            if language == lang and re.search(pattern, text)}


def focused(locator) -> bool:
    return locator.evaluate("e => e === document.activeElement")


def tab_to(page, locator, most: int = 40) -> None:
    """Press Tab until `locator` has the focus (at most `most` times)."""
    for _ in range(most):
        if focused(locator):
            return
        page.keyboard.press("Tab")
    assert focused(locator), page.evaluate("document.activeElement.outerHTML.slice(0, 200)")


def preview_sentence(found) -> str:
    noun = "query" if found.matching == 1 else "queries"
    lack = "lacks" if found.lacking == 1 else "lack"
    return (f"This rule matches {found.matching:,} {noun}; {found.lacking:,} of them {lack} "
            "its tags.")


def wait_for_job(page, org, project_name: str, sentence: str, expected: dict) -> None:
    """Wait for the job Save rule started: its panel says `sentence` when done, and the
    API's tags are `expected`. (The Rules page shows only unfinished jobs: one that ended
    before the page was drawn has no panel.)"""
    panel = page.locator("[data-job]")
    if panel.count():
        expect(panel.first).to_contain_text(sentence, timeout=20_000)
    deadline = time.monotonic() + 20
    while snapshot(org, project_name) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    assert snapshot(org, project_name) == expected


def send_form(page, button: str) -> None:
    """Click the rule form's `button` and wait until its answer has replaced the form: the
    answer before (the same sentence, the same values) would satisfy the checks that follow
    while the old form is still on the page, and a field filled then would be lost."""
    page.locator("#rule-form-body").evaluate("body => body.dataset.answered = 'before'")
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.locator("#rule-form-body[data-answered='before']")).to_have_count(0)


def fits(page, width: int) -> None:
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_no_sideways_scroll(page)


@pytest.mark.parametrize("width", WIDTHS)
def test_make_preview_save_pause_edit_delete(page, live_dashboard, org, width):
    page.set_viewport_size({"width": width, "height": 860})
    url = live_dashboard.url
    name, renamed = f"Shoes {width}", f"Shoes and jackets {width}"
    project_name = f"Rules {width}"
    project, sale = org.projects[project_name], org.tags[project_name]["sale"]
    before = snapshot(org, project_name)
    sign_in(page, url, org.key)
    open_project(page, url, project, "?lang=de")
    expect(page.get_by_role("link", name="Remove filter Language: German (de)", exact=True)) \
        .to_be_visible()

    # Make a rule from this view: the form says the view's condition in words.
    page.get_by_role("link", name="Make a rule from this view", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/projects/{project}/rules/new\?lang=de$"))
    expect(page.get_by_role("heading", name="New rule", level=1)).to_be_visible()
    expect(page.locator(".rule-form__condition")).to_contain_text("German (de)")
    fits(page, width)

    # Keyboard only: Pattern, Rule name, the tag, Preview.
    pattern = page.get_by_label("Pattern", exact=True)
    pattern.focus()
    page.keyboard.type("schuh")
    page.keyboard.press("Tab")
    assert focused(page.get_by_label("Rule name", exact=True))
    page.keyboard.type(name)
    tags = page.get_by_role("group", name="Tags to add")
    tab_to(page, tags.get_by_role("checkbox", name="sale", exact=True))
    page.keyboard.press("Space")
    expect(tags.get_by_role("checkbox", name="sale", exact=True)).to_be_checked()
    tab_to(page, page.get_by_role("button", name="Preview", exact=True))
    page.keyboard.press("Enter")

    preview = page.get_by_role("region", name="Preview")
    expect(preview).to_be_visible()
    # The focus stays on Preview, drawn again.
    expect(page.get_by_role("button", name="Preview", exact=True)).to_be_focused()
    with org.api() as api:
        found = api.preview_rule(project, QueryFilters(languages=("de",), pattern="schuh"),
                                 (sale,))
    assert (found.matching, found.lacking) == (len(matching("schuh")), 3)
    expect(preview.get_by_role("status")).to_have_text(preview_sentence(found))
    expect(preview.locator("li")).to_have_count(found.lacking)
    assert {q.query for q in found.sample} == set(
        preview.locator(".rule-preview__query").all_inner_texts())
    # What was typed is kept; nothing changed yet.
    expect(pattern).to_have_value("schuh")
    expect(page.get_by_label("Rule name", exact=True)).to_have_value(name)
    expect(tags.get_by_role("checkbox", name="sale", exact=True)).to_be_checked()
    assert snapshot(org, project_name) == before
    fits(page, width)
    assert axe_serious(page) == []

    # Save rule, by keyboard: the next Tab.
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save rule", exact=True)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/projects/{project}/rules$"))
    expect(page.locator("body")).to_contain_text(f"Saved the rule “{name}”. Adding its tags "
                                                 f"to the {found.lacking} queries that lack "
                                                 "them")
    wait_for_job(page, org, project_name, f"added ‘sale’ to {found.lacking} queries", {
        q: names | {"sale"} if q in matching("schuh") else names for q, names in before.items()})

    # The Rules page: its tab current, the rule, its condition in words, its counts. (A job
    # this small may end before the page's panel polls, so the page is loaded again.)
    page.reload()
    expect(page.get_by_role("link", name="Rules", exact=True)).to_have_attribute(
        "aria-current", "page")
    rule = page.locator("li.rule", has=page.get_by_role("heading", name=name, exact=True))
    expect(rule).to_have_count(1)
    expect(rule.locator(".rule__words")).to_have_text("Text matches “schuh” · German (de) → sale")
    count = len(matching("schuh"))
    expect(rule.locator(".rule__counts")).to_have_text(
        f"Matches {count} queries now; {count} of them carry its tags.")
    expect(rule.locator(".rule__tags .chip")).to_have_text(["sale"])
    with org.api() as api:
        (listed,) = api.list_rules(project)
    assert (listed.name, listed.matching, listed.carrying, listed.tag_ids) == (
        name, count, count, (sale,))
    fits(page, width)
    assert axe_serious(page) == []

    # Pause, then Resume: the buttons' names change.
    page.get_by_role("button", name=f"Pause {name}", exact=True).click()
    expect(page.locator("body")).to_contain_text(f"Paused the rule “{name}”")
    expect(page.get_by_role("button", name=f"Resume {name}", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name=f"Pause {name}", exact=True)).to_have_count(0)
    expect(rule.locator(".badge")).to_have_text("Paused")
    with org.api() as api:
        assert api.list_rules(project)[0].paused
    page.get_by_role("button", name=f"Resume {name}", exact=True).click()
    expect(page.locator("body")).to_contain_text(f"Resumed the rule “{name}”")
    expect(page.get_by_role("button", name=f"Pause {name}", exact=True)).to_be_visible()
    expect(rule.locator(".badge")).to_have_count(0)
    with org.api() as api:
        assert not api.list_rules(project)[0].paused

    # Edit: rename, widen the pattern; Preview says the difference.
    page.get_by_role("link", name=f"Edit {name}", exact=True).click()
    expect(page.get_by_role("heading", name=f"Edit {name}", level=1)).to_be_visible()
    expect(pattern).to_have_value("schuh")
    expect(tags.get_by_role("checkbox", name="sale", exact=True)).to_be_checked()
    page.get_by_label("Rule name", exact=True).fill(renamed)
    pattern.fill("schuh|jacke")
    page.get_by_role("button", name="Preview", exact=True).click()
    with org.api() as api:
        changed = api.preview_rule(project, QueryFilters(languages=("de",),
                                                         pattern="schuh|jacke"), (sale,))
    wider = len(matching("schuh|jacke"))
    assert (changed.matching, changed.lacking) == (wider, 1)
    expect(preview.get_by_role("status")).to_have_text(
        f"Now it matches {count} queries; changed, it would match {wider} queries, and "
        f"{changed.lacking} of them {'lacks' if changed.lacking == 1 else 'lack'} its tags.")
    expect(preview.locator(".rule-preview__query")).to_have_text(["regenjacke wasserdicht"])
    fits(page, width)
    page.get_by_role("button", name="Save rule", exact=True).click()
    expect(page).to_have_url(re.compile(rf"/projects/{project}/rules$"))
    expect(page.locator("body")).to_contain_text(f"Saved the rule “{renamed}”.")
    wait_for_job(page, org, project_name, "added ‘sale’ to 1 query", {
        q: names | {"sale"} if q in matching("schuh|jacke") else names
        for q, names in before.items()})
    page.reload()
    renamed_rule = page.locator("li.rule", has=page.get_by_role("heading", name=renamed,
                                                                exact=True))
    expect(renamed_rule.locator(".rule__counts")).to_have_text(
        f"Matches {wider} queries now; {wider} of them carry its tags.")
    expect(page.get_by_role("heading", name=name, exact=True)).to_have_count(0)

    # Delete: the rule goes, the tags it added stay.
    page.get_by_role("button", name=f"Delete {renamed}", exact=True).click()
    expect(page.locator("body")).to_contain_text(
        f"Deleted the rule “{renamed}”. The tags it added stay.")
    expect(page.get_by_role("heading", name=renamed, exact=True)).to_have_count(0)
    expect(page.get_by_role("heading", name="No rules yet")).to_be_visible()
    with org.api() as api:
        assert api.list_rules(project) == ()
    assert snapshot(org, project_name) == {
        q: names | {"sale"} if q in matching("schuh|jacke") else names
        for q, names in before.items()}
    fits(page, width)
    assert csp_errors(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_chip_says_its_rule_and_deleting_takes_back_its_tags_undoably(
        page, live_dashboard, org, width, screenshots):
    project_name = f"Removal {width}"
    project = org.projects[project_name]
    before = snapshot(org, project_name)
    with org.api() as api:
        sale = next(tag.id for tag in api.iter_tags(project) if tag.name == "sale")
        rule = api.create_rule(project, "Price words", QueryFilters(text="schuh"), (sale,))
        applied = api.apply_rule(project, rule.id)
    tagged = snapshot(org, project_name)
    assert applied.tagged == len({q for q in before if "schuh" in q and "sale" not in
                                  before[q]}) > 0
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_dashboard.url, org.key)
    open_project(page, live_dashboard.url, project, "?q=laufschuhe")
    chip = page.locator("td.col-tags .chip", has_text="sale")
    expect(chip).to_have_attribute("title", re.compile(
        r"^Added by the rule “Price words” on \d+ \w{3} \d{4}, [\d:]+ UTC$"))

    page.goto(f"{live_dashboard.url}/projects/{project}/rules")
    page.get_by_text("Also remove the tags it added", exact=False).click()  # its label's text
    expect(page.get_by_role("checkbox", name="Also remove the tags it added (Price words)")
           ).to_be_checked()
    fits(page, width)
    page.screenshot(path=screenshots / f"rules-delete-{width}.png", full_page=True)
    assert axe_serious(page) == []
    page.get_by_role("button", name="Delete Price words", exact=True).click()
    expect(page.locator("body")).to_contain_text(
        "Removing the tags the rule “Price words” added, then deleting it")
    wait_for_job(page, org, project_name, "Removed the tags the rule", before)
    with org.api() as api:
        assert api.list_rules(project) == ()

    page.goto(f"{live_dashboard.url}/projects/{project}/activity")
    done = (f"Removed the tags the rule “Price words” had added from {applied.tagged} "
            f"{'query' if applied.tagged == 1 else 'queries'}; the rule is deleted")
    expect(page.locator("main")).to_contain_text(done)
    fits(page, width)
    assert axe_serious(page) == []
    page.get_by_role("button", name=re.compile(r"^Undo: Remove ‘sale’")).first.click()
    deadline = time.monotonic() + 20
    while snapshot(org, project_name) != tagged and time.monotonic() < deadline:
        time.sleep(0.2)
    assert snapshot(org, project_name) == tagged
    assert csp_errors(page) == []


def test_refusals_are_sentences_and_keep_what_was_typed(page, live_dashboard, org):
    url = live_dashboard.url
    project = org.projects[REFUSALS]
    sign_in(page, url, org.key)
    open_project(page, url, project, "?lang=de&untagged=1")
    page.get_by_role("link", name="Make a rule from this view", exact=True).click()
    expect(page.locator(".rule-form__condition")).to_contain_text("German (de) · Untagged")

    pattern, name = page.get_by_label("Pattern", exact=True), page.get_by_label("Rule name",
                                                                                 exact=True)
    pattern.fill("(unclosed")
    name.fill("Broken")
    page.get_by_role("group", name="Tags to add").get_by_role(
        "checkbox", name="sale", exact=True).check()
    for button in ("Preview", "Save rule"):
        send_form(page, button)
        alert = page.get_by_role("alert")
        expect(alert).to_contain_text(re.compile(r"The pattern is not valid: .+\."))
        expect(pattern).to_have_value("(unclosed")
        expect(name).to_have_value("Broken")
        expect(page.get_by_role("checkbox", name="sale", exact=True)).to_be_checked()
        expect(page.get_by_role("region", name="Preview")).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"/projects/{project}/rules/new\?"))

    # No name, no tag: both said at once.
    name.fill("")
    page.get_by_role("checkbox", name="sale", exact=True).uncheck()
    send_form(page, "Save rule")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Give the rule a name.")
    expect(alert).to_contain_text("Choose at least one tag for the rule to add.")
    expect(pattern).to_have_value("(unclosed")
    # A pattern over 1,000 characters.
    pattern.evaluate("e => { e.removeAttribute('maxlength'); e.value = 'a'.repeat(1001); }")
    name.fill("Long")
    page.get_by_role("checkbox", name="sale", exact=True).check()
    send_form(page, "Preview")
    expect(page.get_by_role("alert")).to_have_text(
        "A pattern can be at most 1,000 characters; this one has 1,001.")
    expect(name).to_have_value("Long")
    with org.api() as api:
        assert api.list_rules(project) == ()
    assert axe_serious(page) == []
    assert csp_errors(page) == []


def in_view(locator) -> bool:
    return locator.evaluate("""e => { const box = e.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight; }""")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_refusal_by_keyboard_takes_the_focus_to_its_sentences(page, live_dashboard, org,
                                                                width):
    page.set_viewport_size({"width": width, "height": 900})
    url = live_dashboard.url
    project = org.projects[REFUSALS]
    sign_in(page, url, org.key)
    page.goto(f"{url}/projects/{project}/rules/new?lang=de")
    pattern = page.get_by_label("Pattern", exact=True)
    save = page.get_by_role("button", name="Save rule", exact=True)

    # Tab to Pattern, type "(", Tab to Save rule, Enter: the form's own refusal (no name, no
    # tag) is on screen and has the focus, so Tab goes on from the top of the form.
    tab_to(page, pattern)
    page.keyboard.type("(")
    tab_to(page, save)
    page.keyboard.press("Enter")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Give the rule a name.")
    expect(alert).to_be_focused()
    assert in_view(alert)
    expect(pattern).not_to_have_attribute("aria-invalid", "true")

    # Named, a tag chosen: the service refuses the pattern; the field says so too.
    tab_to(page, page.get_by_label("Rule name", exact=True))
    page.keyboard.type("Broken")
    tab_to(page, page.get_by_role("checkbox", name="sale", exact=True))
    page.keyboard.press("Space")
    for button in ("Save rule", "Preview"):
        tab_to(page, page.get_by_role("button", name=button, exact=True))
        page.evaluate("document.querySelector('#rule-form-body').dataset.answered = 'before'")
        page.keyboard.press("Enter")
        expect(page.locator("#rule-form-body[data-answered='before']")).to_have_count(0)
        expect(alert).to_contain_text(re.compile(r"The pattern is not valid: .+\."))
        expect(alert).to_be_focused()
        assert in_view(alert)
        expect(pattern).to_have_attribute("aria-invalid", "true")
        described = pattern.get_attribute("aria-describedby").split()
        sentences = [page.locator(f"#{each}").inner_text() for each in described]
        assert any(re.match(r"The pattern is not valid: .+\.", s) for s in sentences)
    fits(page, width)
    assert axe_serious(page) == []
    with org.api() as api:
        assert api.list_rules(project) == ()
    assert csp_errors(page) == []


# --- a deployment without the extension -------------------------------------------------------


def test_without_the_extension_no_rules(page, plain_dashboard, org):
    project = org.projects[REFUSALS]
    sign_in(page, plain_dashboard, org.key)
    open_project(page, plain_dashboard, project, "?lang=de")
    expect(page.get_by_role("link", name="Tags", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Rules", exact=True)).to_have_count(0)
    expect(page.get_by_role("link", name="Make a rule from this view")).to_have_count(0)
    response = page.goto(f"{plain_dashboard}/projects/{project}/rules")
    assert response.status == 404
