"""Organization settings → People in headless Chromium: the list, adding an administrator with
a one-time link (shown once, copied; opened by the new person, who chooses a password twice
and is signed in; the link opened again refused; an expired link refused) and with a password
typed twice, removing one after a confirmation, the last administrator kept, and removing
yourself signing you out. Every new page has no serious accessibility violation.

The settings pages are served by the service app alone (tests/conftest.py's LiveServer).
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from playwright.sync_api import expect
from sqlalchemy import update

from service.store.models import PasswordLink, utcnow
from tests.browser import axe_serious
from tests.support.e2e import ADMIN_EMAIL, ADMIN_PASSWORD, csp_errors, settings_sign_in

pytestmark = pytest.mark.browser

ANN, PASSWORD = ADMIN_EMAIL, ADMIN_PASSWORD  # the `site` fixture's one administrator
BEN = "ben@example.com"
CARL = "carl@example.com"
DORA = "dora@example.com"
BENS_PASSWORD = "ben's own long password"


def sign_in(page, site, email=ANN, password=PASSWORD):
    settings_sign_in(page, site.url + "/settings/signin", email, password)
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def people_row(page, email: str):
    return page.get_by_role("table", name="Administrators").get_by_role("row").filter(
        has_text=email)


def add_with_password(page, email: str, password: str) -> None:
    """Add an administrator with a password typed twice (its fields appear with the choice)."""
    page.get_by_role("link", name="Add administrator").click()
    page.get_by_label("Email").fill(email)
    page.get_by_label("A password you type now").check()
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Repeat password").fill(password)
    page.get_by_role("button", name="Add administrator").click()


def add_with_link(page, email: str) -> str:
    page.get_by_role("link", name="Add administrator").click()
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Add administrator").click()
    expect(page.get_by_role("heading", name=f"{email} is added")).to_be_visible()
    return page.get_by_label("One-time link").input_value()


def test_add_with_a_one_time_link_which_works_once(page, context, browser, site,
                                                   screenshots):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    sign_in(page, site)
    page.get_by_role("link", name="People").click()
    expect(page.get_by_role("heading", name="People", level=1)).to_be_visible()
    expect(people_row(page, ANN)).to_contain_text("(you)")
    page.screenshot(path=screenshots / "settings-people.png")
    assert axe_serious(page) == []

    page.get_by_role("link", name="Add administrator").click()
    expect(page.get_by_role("heading", name="Add an administrator")).to_be_visible()
    # The link is the first choice: no password to type, so its fields are not shown.
    expect(page.get_by_label("A one-time link: they choose their own password")).to_be_checked()
    expect(page.get_by_label("Password", exact=True)).to_be_hidden()
    page.screenshot(path=screenshots / "settings-person-add.png")
    assert axe_serious(page) == []
    page.get_by_role("link", name="Cancel").click()

    link = add_with_link(page, BEN)
    # The token is in the fragment, which no request line (nor access log) carries.
    assert re.fullmatch(re.escape(site.url) + r"/settings/password#[A-Za-z0-9_-]{43}", link)
    expect(page.get_by_text("It cannot be shown again")).to_be_visible()
    page.screenshot(path=screenshots / "settings-person-link.png")
    assert axe_serious(page) == []
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("status")).to_have_text("The link is on your clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == link
    page.get_by_role("link", name="I have copied the link").click()
    expect(people_row(page, BEN)).to_contain_text("Not yet chosen")
    assert link not in page.content()

    # Ben opens it, in a browser of his own.
    bens = browser.new_context()
    try:
        ben = bens.new_page()
        ben.goto(link)
        expect(ben.get_by_role("heading", name="Choose your password")).to_be_visible()
        expect(ben.get_by_label("Email")).to_have_value(BEN)
        # The page's script sent the token in a POST and took it out of the address bar.
        assert link.split("#")[1] not in ben.url
        assert link.split("#")[1] not in str(ben.evaluate("location.href"))
        ben.screenshot(path=screenshots / "settings-password.png")
        assert axe_serious(ben) == []
        ben.get_by_label("Password", exact=True).fill(BENS_PASSWORD)
        ben.get_by_label("Repeat password").fill(BENS_PASSWORD + " typo")
        ben.get_by_role("button", name="Set password").click()
        expect(ben.get_by_text("The two passwords are not the same.")).to_be_visible()
        assert axe_serious(ben) == []
        ben.get_by_label("Password", exact=True).fill(BENS_PASSWORD)
        ben.get_by_label("Repeat password").fill(BENS_PASSWORD)
        ben.get_by_role("button", name="Set password").click()
        expect(ben.get_by_text("Your password is set, and you are signed in.")).to_be_visible()
        expect(ben.get_by_role("banner")).to_contain_text(BEN)
        expect(people_row(ben, BEN)).to_contain_text("Set")

        # The same link again: refused with a sentence.
        ben.goto(link)
        expect(ben.get_by_role("heading", name="This link has already been used")).to_be_visible()
        expect(ben.get_by_role("alert")).to_contain_text("works only once")
        ben.screenshot(path=screenshots / "settings-password-used.png")
        assert axe_serious(ben) == []
    finally:
        bens.close()

    # He signs in with it, like anyone.
    page.reload()
    expect(people_row(page, BEN)).to_contain_text("Set")
    others = browser.new_context()
    try:
        again = others.new_page()
        sign_in(again, site, BEN, BENS_PASSWORD)
    finally:
        others.close()
    assert csp_errors(page) == []


def test_an_expired_link_is_refused(page, browser, site, screenshots):
    sign_in(page, site)
    page.get_by_role("link", name="People").click()
    link = add_with_link(page, DORA)
    site.world.run(lambda s: s.execute(update(PasswordLink).values(
        expires_at=utcnow() - timedelta(minutes=1))))
    page.get_by_role("link", name="I have copied the link").click()
    expect(people_row(page, DORA)).to_contain_text("Link expired")
    context = browser.new_context()
    try:
        dora = context.new_page()
        dora.goto(link)
        expect(dora.get_by_role("heading", name="This link has expired")).to_be_visible()
        expect(dora.get_by_role("alert")).to_contain_text("Ask an administrator")
        expect(dora.get_by_role("button", name="Set password")).to_have_count(0)
        dora.screenshot(path=screenshots / "settings-password-expired.png")
        assert axe_serious(dora) == []

        # A new link from the list, by keyboard; the expired one stays refused.
        page.screenshot(path=screenshots / "settings-people-new-link.png")
        assert axe_serious(page) == []
        page.get_by_role("button", name=f"New link for {DORA}").focus()
        page.keyboard.press("Enter")
        expect(page.get_by_role("heading", name=f"A new link for {DORA}")).to_be_visible()
        renewed = page.get_by_label("One-time link").input_value()
        assert renewed != link
        dora.goto(renewed)
        expect(dora.get_by_role("button", name="Set password")).to_be_visible()
        dora.goto(link)
        expect(dora.get_by_role("heading", name="This link does not work")).to_be_visible()
    finally:
        context.close()


def test_add_with_a_typed_password_remove_and_remove_yourself(page, browser, site,
                                                              screenshots):
    sign_in(page, site)
    page.get_by_role("link", name="People").click()

    # The only administrator cannot be removed: a sentence, no button.
    page.get_by_role("link", name=f"Remove {ANN}").click()
    expect(page.get_by_role("alert")).to_contain_text(
        f"{ANN} is the only administrator of Acme")
    expect(page.get_by_role("button", name="Remove administrator")).to_have_count(0)
    page.screenshot(path=screenshots / "settings-person-last.png")
    assert axe_serious(page) == []
    page.get_by_role("link", name="Back to People").click()

    # A password typed twice.
    add_with_password(page, CARL, PASSWORD)
    expect(page.get_by_role("status")).to_contain_text(f"{CARL} is an administrator now.")
    expect(people_row(page, CARL)).to_contain_text("Set")

    # Removing asks first.
    page.get_by_role("link", name=f"Remove {CARL}").click()
    expect(page.get_by_role("heading", name=f"Remove {CARL}?")).to_be_visible()
    page.screenshot(path=screenshots / "settings-person-remove.png")
    assert axe_serious(page) == []
    page.get_by_role("button", name="Remove administrator").click()
    expect(page.get_by_role("status")).to_contain_text(f"{CARL} is no longer an administrator.")
    expect(people_row(page, CARL)).to_have_count(0)

    # Removing yourself signs you out; the one left sees it in the log.
    add_with_password(page, BEN, BENS_PASSWORD)
    page.get_by_role("link", name=f"Remove {ANN}").click()
    expect(page.get_by_text("This is you.")).to_be_visible()
    page.get_by_role("button", name="Remove administrator").click()
    expect(page.get_by_text("You are signed out.")).to_be_visible()
    page.goto(site.url + "/settings/people")
    expect(page).to_have_url(re.compile(r"/settings/signin\?next="))

    sign_in(page, site, BEN, BENS_PASSWORD)
    page.get_by_role("link", name="Activity").click()
    log = page.get_by_role("table", name="Activity")
    expect(log.get_by_role("row").filter(has_text="Administrator removed")).to_have_count(2)
    expect(log.get_by_role("row").filter(has_text="Administrator added")).to_have_count(2)
    expect(log.get_by_role("row").filter(has_text="Removed themselves.")).to_contain_text(ANN)
    assert csp_errors(page) == []
