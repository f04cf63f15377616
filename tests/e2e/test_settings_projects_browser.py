"""Organization settings → Projects in headless Chromium, by the names people see: the
projects with their query counts, a new project, renaming, a project's tags, a new tag with a
live preview (a colour picker and a #rrggbb field kept in sync), editing, and deleting after a
confirmation — and the API showing the result. One flow is keyboard-only; one page is seen at
390 px; every new page is checked with axe-core, and no Content-Security-Policy error may
appear (the chips' colours are set through the DOM, which the policy allows).

The settings pages are served by the service app alone (tests/conftest.py's LiveServer).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from service.org import accounts
from tests.browser import axe_serious
from tests.support.api import Api
from tests.support.e2e import assert_no_sideways_scroll, csp_errors
from weblib.colors import contrast_ratio, text_color

pytestmark = pytest.mark.browser

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def site(live_service, world):
    """The service on a live port, with an administrator of the world's organization and a
    few queries carrying the world's tags."""
    world.run(lambda s: accounts.create_user(s, world.org_id, EMAIL, PASSWORD))
    world.add_queries([("red shoes", "en", "US", ["brand", "sale"]),
                       ("blue shoes", "de", "DE", ["brand"]),
                       ("socks", "fr", "FR", [])])
    live_service.world = world
    live_service.api = Api(live_service.url, world.key, world.project_id)
    return live_service


def sign_in(page, site, path="/settings/projects"):
    page.goto(site.url + path)
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))


def expect_chip(chip, colour: str):
    """The chip shows the colour, with black or white text as the server would choose."""
    expect(chip).to_have_css("background-color", rgb(colour))
    expect(chip).to_have_css("color", rgb(text_color(colour)))


def tag_row(page, name: str):
    return page.get_by_role("table", name="Tags").get_by_role("row").filter(
        has=page.get_by_text(name, exact=True))


def chip(page, name: str):
    return tag_row(page, name).locator(".tag-chip")


def api_tag_names(site) -> set[str]:
    return {tag["name"] for tag in site.api.tags(limit=1000).json()["results"]}


def test_projects_and_tags_by_mouse_and_form(page, site, screenshots):
    world = site.world
    sign_in(page, site, "/settings/api")
    page.get_by_role("link", name="Projects").click()
    expect(page.get_by_role("heading", name="Projects", level=1)).to_be_visible()
    projects = page.get_by_role("table", name="Projects")
    expect(projects.get_by_role("row").filter(has_text="Shop search")).to_contain_text("3")
    page.screenshot(path=screenshots / "settings-projects.png", full_page=True)
    assert axe_serious(page) == []

    # A name the organization has: a sentence, nothing made.
    page.get_by_label("Project name").fill("shop SEARCH")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_text("Your organization already has a project named “Shop search”."))\
        .to_be_visible()
    expect(page.get_by_label("Project name")).to_have_attribute("aria-invalid", "true")
    assert axe_serious(page) == []

    page.get_by_label("Project name").fill("Spring sale")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="Spring sale", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(
        "The project “Spring sale” is created. You can add its tags below.")
    assert "Spring sale" in {p["name"] for p in site.api.projects().json()["results"]}

    # Rename it.
    page.get_by_label("Project name").fill("Spring sale 2027")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Spring sale 2027", level=1)).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("The project is renamed “Spring sale 2027”.")

    # Back to the list: the project's page is reached by a link named after it.
    page.get_by_role("link", name="Projects").click()
    page.get_by_role("link", name="Shop search", exact=True).click()
    expect(page.get_by_role("heading", name="Shop search", level=1)).to_be_visible()
    expect(tag_row(page, "brand")).to_contain_text("2")
    expect_chip(chip(page, "brand"), "#1f77b4")

    # A new tag: the text field and the picker follow each other, the preview follows both.
    page.get_by_label("Tag name").fill("Winter")
    colour = page.get_by_label("Colour", exact=True)
    picker = page.get_by_label("Choose a shade")
    preview = page.locator("[data-colour-preview]")
    expect(picker).to_be_visible()
    colour.fill("#0B5394")
    expect(picker).to_have_value("#0b5394")
    expect(preview).to_have_text("Winter")
    expect_chip(preview, "#0b5394")
    picker.fill("#fbca04")
    expect(colour).to_have_value("#fbca04")
    expect_chip(preview, "#fbca04")  # black text on yellow
    expect(page.locator("[data-colour-warning]")).to_be_hidden()
    page.screenshot(path=screenshots / "settings-project.png", full_page=True)
    assert axe_serious(page) == []

    # Refused: a colour that is not #rrggbb, and a name the project has (in other capitals).
    colour.fill("yellow")
    page.get_by_role("button", name="Create tag").click()
    expect(page.get_by_text("Please enter the colour as # followed by six digits")).to_be_visible()
    expect(page.get_by_label("Colour", exact=True)).to_have_value("yellow")
    page.get_by_label("Tag name").fill("BRAND")
    page.get_by_label("Colour", exact=True).fill("#fbca04")
    page.get_by_role("button", name="Create tag").click()
    expect(page.get_by_text("This project already has a tag named “brand”")).to_be_visible()
    assert axe_serious(page) == []

    page.get_by_label("Tag name").fill("Winter")
    page.get_by_role("button", name="Create tag").click()
    expect(page.get_by_role("status")).to_have_text("The tag “Winter” is created.")
    expect(tag_row(page, "Winter")).to_contain_text("#fbca04")
    expect_chip(chip(page, "Winter"), "#fbca04")
    assert "Winter" in api_tag_names(site)

    # Edit: same fields, the tag keeps its id.
    winter_id = {t["name"]: t["id"] for t in site.api.tags().json()["results"]}["Winter"]
    page.get_by_role("link", name="Edit Winter").click()
    expect(page.get_by_role("heading", name="Edit the tag “Winter”")).to_be_visible()
    expect(page.get_by_label("Colour", exact=True)).to_have_value("#fbca04")
    assert axe_serious(page) == []
    page.get_by_label("Tag name").fill("Winter sale")
    page.get_by_label("Choose a shade").fill("#5a32a3")
    expect_chip(page.locator("[data-colour-preview]"), "#5a32a3")
    expect(page.locator("[data-colour-preview]")).to_have_text("Winter sale")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("The tag “Winter sale” is saved.")
    assert {t["name"]: t for t in site.api.tags().json()["results"]}["Winter sale"] == {
        "id": winter_id, "project": world.project_id, "name": "Winter sale", "color": "#5a32a3"}

    # Delete, after a confirmation that says how many queries carry it.
    before = {r["query"]: r for r in site.api.queries().json()["results"]}
    page.get_by_role("link", name="Delete brand").click()
    expect(page.get_by_role("heading", name="Delete the tag “brand”?")).to_be_visible()
    expect(page.get_by_text("2 queries carry this tag.")).to_be_visible()
    page.screenshot(path=screenshots / "settings-tag-delete.png")
    assert axe_serious(page) == []
    assert "brand" in api_tag_names(site)  # asking is not doing
    page.get_by_role("button", name="Delete tag").click()
    expect(page.get_by_role("status")).to_have_text(
        "The tag “brand” is deleted. It was removed from 2 queries of “Shop search”.")
    expect(tag_row(page, "brand")).to_have_count(0)
    assert "brand" not in api_tag_names(site)
    after = {r["query"]: r for r in site.api.queries().json()["results"]}
    assert after["red shoes"]["tags"] == [world.tags["sale"]]
    assert after["blue shoes"]["tags"] == []
    assert after["red shoes"]["updatedAt"] > before["red shoes"]["updatedAt"]
    assert after["socks"]["updatedAt"] == before["socks"]["updatedAt"]

    # Every change is on record, with who made it.
    page.get_by_role("link", name="Activity").click()
    log = page.get_by_role("table", name="Activity")
    for action in ("Project created", "Project renamed", "Tag created", "Tag edited",
                   "Tag deleted"):
        expect(log.get_by_role("row").filter(has_text=action).first).to_contain_text(EMAIL)
    assert csp_errors(page) == []


def focus_by_tab(page, locator, most: int = 60) -> None:
    """Press Tab until `locator` has the focus, as a keyboard user would."""
    for _ in range(most):
        if locator.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{locator} never got the focus")


def test_keyboard_only_new_tag_rename_and_delete(page, site):
    world = site.world
    sign_in(page, site, f"/settings/projects/{world.project_id}")
    expect(page.get_by_role("heading", name="Shop search", level=1)).to_be_visible()

    # A new tag, typed: name, then past the picker to the code, then Enter.
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    focus_by_tab(page, page.get_by_label("Tag name"))
    page.keyboard.type("Gift ideas")
    page.keyboard.press("Tab")
    expect(page.get_by_label("Choose a shade")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Colour", exact=True)).to_be_focused()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("#116329")
    expect_chip(page.locator("[data-colour-preview]"), "#116329")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Create tag")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("The tag “Gift ideas” is created.")
    assert "Gift ideas" in api_tag_names(site)

    # Rename the project: its field, then Enter.
    focus_by_tab(page, page.get_by_label("Project name"))
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Shop search DE")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("The project is renamed “Shop search DE”.")

    # Delete a tag: its link, the confirmation's button.
    focus_by_tab(page, page.get_by_role("link", name="Delete sale"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Delete the tag “sale”?")).to_be_visible()
    expect(page.get_by_text("1 query carries this tag.")).to_be_visible()
    focus_by_tab(page, page.get_by_role("button", name="Delete tag"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("The tag “sale” is deleted.")
    assert "sale" not in api_tag_names(site)
    assert csp_errors(page) == []


def test_a_project_page_at_390_pixels(page, site, screenshots):
    world = site.world
    page.set_viewport_size(PHONE)
    sign_in(page, site, f"/settings/projects/{world.project_id}")
    expect(page.get_by_role("heading", name="Shop search", level=1)).to_be_visible()
    # Nothing wider than the screen but the tags' table, which scrolls in its own frame.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for control in (page.get_by_label("Tag name"), page.get_by_label("Colour", exact=True),
                    page.get_by_role("button", name="Create tag"),
                    page.get_by_role("button", name="Save")):
        box = control.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # Cells wrap between words, never inside one: "Delete", "#1f77b4" and "question" stay whole.
    broken = page.evaluate("""() => [...document.querySelectorAll(
        '.data-table .button, .data-table code, .data-table .tag-chip')].filter(element => {
          const lines = new Set([...element.getClientRects()].map(rect => Math.round(rect.top)));
          const range = document.createRange();
          range.selectNodeContents(element.firstChild);
          return lines.size > 1 || range.getClientRects().length > 1;
        }).map(element => element.textContent)""")
    assert broken == []
    page.get_by_role("link", name="Edit question").click()
    expect(page.get_by_role("heading", name="Edit the tag “question”")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert axe_serious(page) == []
    page.go_back()
    page.screenshot(path=screenshots / "settings-project-phone.png", full_page=True)
    assert axe_serious(page) == []


def test_the_page_computes_contrast_as_the_server_does(page, site):
    """colour-field.js and weblib/colors.py agree; black or white text always reaches 4.5:1 (the
    warning, kept for other text colours, stays empty even at the worst colours)."""
    sign_in(page, site, f"/settings/projects/{site.world.project_id}")
    colours = ["#000000", "#ffffff", "#777777", "#767676", "#5d60ff", "#0052cc", "#fbca04",
               "#ff0000", "#00ff00", "#0000ff", "#c2e0c6", "#123456"]
    page.wait_for_function("() => window.tagdeskColours !== undefined")  # a deferred script
    computed = page.evaluate(
        "colours => colours.map(c => [window.tagdeskColours.contrast(c, '#000000'), "
        "window.tagdeskColours.contrast(c, '#ffffff'), window.tagdeskColours.textColour(c)])",
        colours)
    for colour, (black, white, text) in zip(colours, computed, strict=True):
        assert black == pytest.approx(contrast_ratio(colour, "#000000"), abs=1e-9)
        assert white == pytest.approx(contrast_ratio(colour, "#ffffff"), abs=1e-9)
        assert text == text_color(colour)
    field = page.get_by_label("Colour", exact=True)
    for colour in ("#5d60ff", "#777777"):
        field.fill(colour)
        expect(page.locator("[data-colour-warning]")).to_have_text("")
        expect_chip(page.locator("[data-colour-preview]"), colour)
    # Not a colour yet: the preview goes grey, nothing else.
    field.fill("#12")
    expect(page.locator("[data-colour-preview]")).not_to_have_css(
        "background-color", rgb("#123456"))
    assert csp_errors(page) == []


def test_a_name_typed_before_the_script_runs_shows_in_the_preview(page, site):
    """The colour field's script (weblib/static/colour-field.js) is deferred: on a slow line
    people can type before it runs."""
    sign_in(page, site)
    expect(page.get_by_role("heading", name="Projects", level=1)).to_be_visible()
    held = []
    page.route(re.compile(r"/colour-field\.js"), lambda route: held.append(route))
    with page.expect_request(re.compile(r"/colour-field\.js")):
        page.goto(f"{site.url}/settings/projects/{site.world.project_id}", wait_until="commit")
    page.get_by_label("Tag name").fill("Early bird")
    expect(page.locator("[data-colour-preview]")).to_have_text("New tag")
    assert len(held) == 1
    for route in held:
        route.continue_()
    expect(page.locator("[data-colour-preview]")).to_have_text("Early bird")


def test_hostile_names_stay_text(page, site):
    world = site.world
    sign_in(page, site, f"/settings/projects/{world.project_id}")
    name = '<img src=x onerror="document.title=\'owned\'">'
    page.get_by_label("Tag name").fill(name)
    expect(page.locator("[data-colour-preview]")).to_have_text(name)
    page.get_by_role("button", name="Create tag").click()
    expect(page.get_by_role("status")).to_have_text(f"The tag “{name}” is created.")
    expect(tag_row(page, name)).to_have_count(1)
    page.get_by_role("link", name=f"Delete {name}").click()
    expect(page.get_by_role("heading", name=f"Delete the tag “{name}”?")).to_be_visible()
    assert page.title() != "owned" and not re.search(r"<img src=x", page.content())
    assert axe_serious(page) == []


@pytest.mark.parametrize("width", [1280, PHONE["width"]])
def test_a_tag_merged_by_keyboard_alone_on_a_page_that_fits(page, site, width):
    """The Merge page at 1280 and 390 px: its first field starts where the card's padding ends
    (no blank band above it), each choice's count sits on its name's line, nothing scrolls
    sideways; then the merge chosen and sent by keyboard alone, and the API without the tag."""
    world = site.world
    page.set_viewport_size({"width": width, "height": 844})
    tags = {tag["name"]: tag["id"] for tag in site.api.tags().json()["results"]}
    sign_in(page, site, f"/settings/projects/{world.project_id}/tags/{tags['brand']}/merge")
    expect(page.get_by_role("heading", name="Merge the tag “brand” into another")).to_be_visible()
    assert_no_sideways_scroll(page)
    assert axe_serious(page) == []
    form, legend = page.locator("form.card"), page.locator("form.card legend")
    padding = float(form.evaluate("form => getComputedStyle(form).paddingTop")[:-2])
    assert legend.bounding_box()["y"] - form.bounding_box()["y"] <= padding + 2
    for option in page.locator(".choice__option").all():
        name, count = option.locator("label").bounding_box(), option.locator(".hint").bounding_box()
        middle = lambda box: box["y"] + box["height"] / 2  # noqa: E731
        assert abs(middle(name) - middle(count)) <= 2, option.text_content()

    # Tab reaches the group at its first choice; the arrows choose within it.
    focus_by_tab(page, page.get_by_role("radio", name="local"))
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("radio", name="sale")).to_be_checked()
    focus_by_tab(page, page.get_by_role("button", name="Merge"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("brand")
    assert "brand" not in api_tag_names(site)
    assert csp_errors(page) == []
