"""Organization settings → API in headless Chromium: sign in, generate a key (shown once, with
a working copy button), reload and revisit (never shown again), revoke (→ 401), project-scoped
keys, CSRF and the sign-in throttle — and the dashboard signed in with a project-scoped key.

The settings pages are served by the service app alone (tests/conftest.py's LiveServer); the
last test goes through the dashboard, whose embedded mode routes /settings to the service.
"""

from __future__ import annotations

import hashlib
import re

import pytest
import requests
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from sqlalchemy import select

from service.org import admin, keys
from service.store.db import session_scope
from service.store.models import ApiKey, Project
from tests.browser import axe_serious
from tests.support.e2e import (
    ADMIN_EMAIL,
    ADMIN_PASSWORD,
    assert_no_sideways_scroll,
    settings_sign_in,
)

pytestmark = pytest.mark.browser

EMAIL, PASSWORD = ADMIN_EMAIL, ADMIN_PASSWORD  # the `site` fixture's administrator


def sign_in(page, site, password=PASSWORD, path="/settings/api"):
    settings_sign_in(page, site.url + path, EMAIL, password)


def generate(page, name: str, project: str | None = None, screenshot=None) -> str:
    page.get_by_role("link", name="Generate key").click()
    expect(page.get_by_role("heading", name="Generate an API key")).to_be_visible()
    if screenshot:
        page.screenshot(path=screenshot)
        assert axe_serious(page) == []
    page.get_by_label("Name").fill(name)
    if project:
        page.get_by_label("Project").select_option(label=project)
    page.get_by_role("button", name="Generate key").click()
    expect(page.get_by_role("heading", name="Your new API key")).to_be_visible()
    return page.get_by_label("API key", exact=True).input_value()


def api(site, key: str, path="/api/projects/list", project_id=None, method="GET"):
    headers = {"x-api-key": key}
    if project_id:
        headers["x-project-id"] = project_id
    return requests.request(method, site.url + path, headers=headers, timeout=10,
                            json={} if method == "POST" else None)


def stored_keys(world) -> list[ApiKey]:
    return world.run(lambda s: list(s.scalars(select(ApiKey).order_by(ApiKey.id))))


def key_row(page, name: str):
    return page.get_by_role("table", name="API keys").get_by_role("row").filter(has_text=name)


def csp_errors(page) -> list[str]:
    return [m for m in page.console_messages if "Content Security Policy" in m]


def test_sign_in_generate_copy_reload_revisit_and_revoke(page, context, site, screenshots):
    world = site.world
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)

    page.goto(site.url + "/settings/api")
    expect(page).to_have_url(re.compile(r"/settings/signin\?next="))
    expect(page.get_by_text("Please sign in to see that page.")).to_be_visible()
    page.screenshot(path=screenshots / "settings-signin.png")
    assert axe_serious(page) == []

    # A wrong password: a sentence, the password not kept.
    page.get_by_label("Email").fill(EMAIL)
    page.get_by_label("Password").fill("not the password at all")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text(
        "That email and password do not match an account.")
    expect(page.get_by_label("Password")).to_have_value("")

    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(site.url + "/settings/api")
    expect(page.get_by_role("heading", name="API keys", level=1)).to_be_visible()
    expect(page.get_by_text(EMAIL)).to_be_visible()

    # Generate: the whole key, once, with a copy button that works.
    key = generate(page, "Nightly export")
    assert key.startswith("tdk_live_") and len(key) >= len("tdk_live_") + 32
    expect(page.get_by_text("It cannot be shown again")).to_be_visible()
    copy = page.get_by_role("button", name="Copy")
    expect(copy).to_be_visible()
    page.screenshot(path=screenshots / "settings-new-key.png")
    assert axe_serious(page) == []
    copy.click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("The key is on your clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == key
    assert api(site, key).status_code == 200

    # The database holds its hash, never the key.
    rows = stored_keys(world)
    assert len(rows) == 2
    assert rows[-1].key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in repr([vars(row) for row in rows])

    # Reloading the page that showed it sends the form again: no key, and no second key.
    page.reload()
    expect(page.get_by_role("heading", name="This key was already generated")).to_be_visible()
    expect(page.get_by_text("It cannot be shown again.")).to_be_visible()
    assert key not in page.content()
    assert len(stored_keys(world)) == 2
    # Revisiting: only its ends.
    page.goto(site.url + "/settings/api")
    row = key_row(page, "Nightly export")
    expect(row).to_contain_text(f"tdk_live_…{key[-4:]}")
    expect(row).to_contain_text("All projects")
    expect(row).to_contain_text("Active")
    assert key not in page.content()
    # Back to the page that showed it: the browser may not keep it (no-store), nor show it.
    try:
        page.go_back()
    except PlaywrightError as error:
        assert "ERR_CACHE_MISS" in str(error)  # "Confirm form resubmission", not the page
        expect(page).to_have_url(re.compile(r"^chrome-error://"))
    assert key not in page.content()
    page.goto(site.url + "/settings/api")

    # Revoke, after a confirmation; the key answers 401 at once.
    page.get_by_role("link", name="Revoke Nightly export").click()
    expect(page.get_by_role("heading", name="Revoke this key?")).to_be_visible()
    page.screenshot(path=screenshots / "settings-revoke.png")
    assert api(site, key).status_code == 200  # asking is not doing
    page.get_by_role("button", name="Revoke", exact=True).click()
    expect(page).to_have_url(re.compile(r"/settings/api\?revoked=\d+$"))
    expect(page.get_by_role("status").first).to_contain_text("is revoked")
    expect(key_row(page, "Nightly export")).to_contain_text("Revoked")
    assert api(site, key).status_code == 401
    assert api(site, world.key).status_code == 200

    # Both actions are on record, with who did them.
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name="Activity")).to_be_visible()
    records = page.get_by_role("table", name="Activity").get_by_role("row").filter(
        has_text=f"…{key[-4:]}")
    expect(records).to_have_count(2)
    expect(records.nth(0)).to_contain_text("Key revoked")
    expect(records.nth(1)).to_contain_text("Key generated")
    expect(records.nth(0)).to_contain_text(EMAIL)
    page.screenshot(path=screenshots / "settings-activity.png")
    assert axe_serious(page) == []
    assert csp_errors(page) == []

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_text("You are signed out.")).to_be_visible()
    page.goto(site.url + "/settings/api")
    expect(page).to_have_url(re.compile(r"/settings/signin"))


def test_a_project_scoped_key_reaches_only_its_project(page, site, screenshots):
    world = site.world
    sign_in(page, site)
    key = generate(page, "Shop robot", project="Shop search",
                   screenshot=screenshots / "settings-generate.png")
    page.get_by_role("link", name="I have copied the key").click()
    row = key_row(page, "Shop robot")
    expect(row).to_contain_text("Shop search")
    expect(key_row(page, "Unnamed key")).to_contain_text("All projects")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=screenshots / "settings-api.png", full_page=True)
    assert axe_serious(page) == []

    listed = api(site, key).json()["results"]
    assert [p["id"] for p in listed] == [world.project_id]
    assert api(site, key, "/api/queries/list", world.project_id, "POST").status_code == 200
    assert api(site, key, "/api/queries/list", world.other_project_id, "POST").status_code == 404
    assert api(site, key, "/api/tags/list", world.other_project_id, "POST").status_code == 404


def test_a_form_without_its_csrf_token_is_rejected(page, site, screenshots):
    sign_in(page, site)
    page.get_by_role("link", name="Generate key").click()
    page.get_by_label("Name").fill("Forged")
    page.evaluate("document.querySelectorAll('main input[name=csrf_token]')"
                  ".forEach(field => field.remove())")
    page.get_by_role("button", name="Generate key").click()
    expect(page.get_by_role("heading", name="That form has expired")).to_be_visible()
    page.screenshot(path=screenshots / "settings-error.png")
    assert len(stored_keys(site.world)) == 1
    assert not re.search(r"tdk_live_[A-Za-z0-9_-]{32,}", page.content())


def test_wrong_passwords_are_throttled(page, site, screenshots):
    for attempt in range(5):
        sign_in(page, site, password=f"wrong password {attempt}")
        expect(page.get_by_role("alert")).to_contain_text("do not match an account")
    sign_in(page, site)  # even the right one, now
    expect(page.get_by_role("alert")).to_contain_text("Too many sign-in attempts.")
    expect(page).to_have_url(re.compile(r"/settings/signin"))
    page.screenshot(path=screenshots / "settings-throttled.png")


def test_the_dashboard_signed_in_with_a_project_scoped_key_lands_in_that_project(
        page, live_dashboard):
    dashboard = live_dashboard

    def make(session):
        org_id = session.scalar(select(ApiKey.org_id).where(  # the demo organization
            ApiKey.key_hash == keys.digest(dashboard.demo_key)))
        project = session.scalars(select(Project).where(Project.org_id == org_id)
                                  .order_by(Project.name)).all()[-1]
        return admin.create_key(session, org_id, "tdk", project_id=project.id), project

    with session_scope(dashboard.service_app) as session:
        key, project = make(session)
        assert session.scalar(select(ApiKey.project_id).where(
            ApiKey.key_hash == keys.digest(key))) == project.id

    page.goto(dashboard.url + "/signin")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{dashboard.url}/projects/{project.id}/queries")
    expect(page.get_by_role("heading", name="Queries", level=1)).to_be_visible()
    expect(page.get_by_role("navigation", name="Project")).to_contain_text(project.name)
    # The projects page offers nothing else: it goes straight to the one project too.
    page.goto(dashboard.url + "/projects")
    page.wait_for_url(f"{dashboard.url}/projects/{project.id}/queries")

    # An organization-wide key still sees every project.
    context = page.context.browser.new_context()
    try:
        other = context.new_page()
        other.goto(dashboard.url + "/signin")
        other.get_by_role("button", name="Use the demo key").click()
        other.wait_for_url(f"{dashboard.url}/projects")
        expect(other.get_by_role("link", name=project.name, exact=True)).to_be_visible()
    finally:
        context.close()

    # The settings area is reached at the dashboard's own address, too (embedded mode).
    page.goto(dashboard.url + "/settings/api")
    expect(page).to_have_url(re.compile(r"/settings/signin\?next="))
    expect(page.get_by_role("heading", name="Organization settings")).to_be_visible()


# The details under a new key, measured in the page: each one's box against the card's inner
# edge, and the gaps between the key box, the details and the button under them.
_REVEAL_LAYOUT = """() => {
  const card = document.querySelector(".reveal");
  const style = getComputedStyle(card);
  const inner = card.getBoundingClientRect().right - parseFloat(style.borderRightWidth)
    - parseFloat(style.paddingRight);
  const facts = card.querySelector(".facts");
  const outside = [...facts.querySelectorAll("dt, dd, dd *")]
    .filter(e => e.getBoundingClientRect().right > inner + 0.5 || e.scrollWidth > e.clientWidth + 1
                 && getComputedStyle(e).display !== "inline")
    .map(e => e.tagName + ": " + e.textContent.trim().slice(0, 30));
  const key = card.querySelector(".reveal__key").getBoundingClientRect();
  const first = facts.querySelector("dt").getBoundingClientRect();
  const actions = card.querySelector(".actions").getBoundingClientRect();
  return {outside, gap: first.top - key.bottom,
          after: actions.top - facts.getBoundingClientRect().bottom};
}"""


def test_a_new_key_with_a_long_unbroken_name_fits_its_card(page, site, screenshots):
    name = "keyword_research_team_laptop_in_the_meeting_room_on_floor_3x"  # 60, no spaces
    sign_in(page, site)
    generate(page, name)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=screenshots / f"settings-generated-{width}.png", full_page=True)
        assert_no_sideways_scroll(page)
        layout = page.evaluate(_REVEAL_LAYOUT)
        assert layout["outside"] == [], width
        # No blank band: the details follow the key box as closely as the button follows them.
        assert layout["gap"] <= layout["after"] + 1, (width, layout)
        assert axe_serious(page) == [], width
    expect(page.get_by_text(name)).to_be_visible()
