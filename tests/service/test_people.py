"""Organization settings → People, as routes: the administrators listed; one added with a
password typed twice or with a one-time link (shown once, stored as its hash, single use,
expiring); one removed after a confirmation, never the last, yourself signed out; every
change in the activity log, the removed person still named there.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from html import unescape

import pytest
from sqlalchemy import create_engine, select, update

from service.org import accounts, audit
from service.store.models import KeyEvent, OrgEvent, PasswordLink, User, utcnow
from tests.service.migrating import model_differences
from tests.support.dashboard import csrf_token

ANN = "ann@example.com"
BEN = "ben@example.com"
PASSWORD = "correct horse battery staple"
NEW_PASSWORD = "a brand new long password"
LINK_IN_PAGE = re.compile(r'id="password-link" value="([^"]+)"')


class Browser:
    """A test client of /settings for one person."""

    def __init__(self, app):
        self.client = app.test_client()

    def get(self, path: str):
        return self.client.get(path)

    def text(self, path: str) -> str:
        response = self.get(path)
        assert response.status_code == 200, (path, response.status_code)
        return response.get_data(as_text=True)

    def post(self, path: str, form_page: str | None = None, **data):
        token = csrf_token(self.text(form_page or path))
        return self.client.post(path, data={"csrf_token": token, **data})

    def sign_in(self, email=ANN, password=PASSWORD):
        return self.post("/settings/signin", email=email, password=password)

    def add(self, email, method="link", password="", repeat=None):
        return self.post("/settings/people/add", email=email, method=method,
                         password=password, repeat=password if repeat is None else repeat)

    def remove(self, user_id: int):
        return self.post(f"/settings/people/{user_id}/remove")

    def signed_in_as(self) -> str | None:
        page = self.get("/settings/people")
        if page.status_code != 200:
            return None
        return re.search(r'class="account__email">.*?</span>([^<]+)</span>',
                         page.get_data(as_text=True)).group(1)


@pytest.fixture
def people(world):
    """The world with one administrator, Ann (`user_id`)."""
    return world.with_administrator(ANN, PASSWORD)


@pytest.fixture
def ann(service_app, people) -> Browser:
    browser = Browser(service_app)
    assert browser.sign_in().status_code == 303
    return browser


def user(world, email) -> User | None:
    return world.run(lambda s: s.scalar(select(User).where(User.email == email)))


def changes(world) -> list[tuple]:
    return world.run(lambda s: [(e.action, e.subject, e.detail, e.user_id, e.actor_email)
                                for e in s.scalars(select(OrgEvent).order_by(OrgEvent.id))])


def rows(page: str) -> list[str]:
    return re.findall(r"<tr[^>]* data-user-id=\"\d+\"[^>]*>(.*?)</tr>", page, re.S)


# --- the list ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/settings/people", "/settings/people/add",
                                  "/settings/people/1/remove"])
def test_people_pages_ask_to_sign_in_first(service_app, people, path):
    response = Browser(service_app).get(path)
    assert response.status_code == 303
    assert response.headers["Location"] == f"/settings/signin?next={path}"


def test_the_list_names_each_administrator_and_when_they_were_added(ann, people):
    other_org, _, _ = people.new_org("Elsewhere")
    people.run(lambda s: accounts.create_user(s, other_org, "zoe@example.com", PASSWORD))
    people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    page = ann.text("/settings/people")
    assert '<a href="/settings/people" aria-current="page">People</a>' in page
    listed = rows(page)
    assert [re.search(r"[a-z]+@example\.com", row).group(0) for row in listed] == [ANN, BEN]
    assert "(you)" in listed[0] and "(you)" not in listed[1]
    assert all("UTC</time>" in row and ">Set</span>" in row for row in listed)
    assert "zoe@example.com" not in page
    assert 'href="/settings/people/add"' in page and "Add administrator" in page
    assert f"Remove<span class=\"visually-hidden\"> {BEN}</span>" in page


# --- adding with a password typed twice --------------------------------------------------------


def test_an_administrator_added_with_a_typed_password_signs_in_with_it(ann, people,
                                                                       service_app):
    response = ann.add("  Ben@Example.COM ", "password", PASSWORD)
    ben = user(people, BEN)
    assert ben is not None and ben.org_id == people.org_id
    assert (response.status_code, response.headers["Location"]) == (
        303, f"/settings/people?added={ben.id}")
    page = ann.text(response.headers["Location"])
    assert f"{BEN} is an administrator now." in page
    assert changes(people) == [("person.added", BEN, "With a password typed by whoever added them.",
                                people.user_id, ANN)]
    assert world_links(people) == []

    other = Browser(service_app)
    assert other.sign_in(BEN, PASSWORD).status_code == 303
    assert other.signed_in_as() == BEN


@pytest.mark.parametrize("email,method,password,repeat,message", [
    ("", "link", "", "", "Please enter the email address of the new administrator."),
    ("not an email", "link", "", "", "That is not an email address."),
    (BEN, "password", "", "", "at least 12 characters"),
    (BEN, "password", "short", "short", "at least 12 characters"),
    (BEN, "password", PASSWORD, PASSWORD + "!", "The two passwords are not the same."),
    (BEN, "password", " " * 14, " " * 14, "cannot be only spaces"),
    (BEN, "sms", "", "", "Choose how the new administrator gets their password."),
])
def test_the_add_form_says_what_is_wrong(ann, people, email, method, password, repeat,
                                         message):
    response = ann.add(email, method, password, repeat)
    assert response.status_code == 400
    page = unescape(response.get_data(as_text=True))
    assert message in page
    assert 'aria-invalid="true"' in page
    assert password == "" or password not in page  # a typed password is not sent back
    assert people.run(lambda s: s.query(User).count()) == 1
    assert changes(people) == []


def test_an_email_that_has_an_account_is_refused_with_a_sentence(ann, people):
    people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    other_org, _, _ = people.new_org("Elsewhere")
    people.run(lambda s: accounts.create_user(s, other_org, "zoe@example.com", PASSWORD))
    here = ann.add("BEN@example.com")
    assert here.status_code == 409
    assert f"{BEN} is already an administrator here." in here.get_data(as_text=True)
    elsewhere = ann.add("zoe@example.com", "password", PASSWORD)
    assert elsewhere.status_code == 409
    assert "There is already a Tagdesk account for zoe@example.com, in another organization." \
        in elsewhere.get_data(as_text=True)
    assert changes(people) == []


# --- adding with a one-time link ---------------------------------------------------------------


def world_links(world) -> list[PasswordLink]:
    return world.run(lambda s: list(s.scalars(select(PasswordLink).order_by(PasswordLink.id))))


def added_with_link(browser: Browser, email=BEN) -> str:
    response = browser.add(email)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Cache-Control"] == "no-store"
    return unescape(LINK_IN_PAGE.search(response.get_data(as_text=True)).group(1))


def token_of(link: str) -> str:
    return link.rsplit("#", 1)[1]


def opened(browser: Browser, link: str):
    """The link opened as its page does it: the token, read from the link's fragment, sent
    in the body of a POST (the form to choose a password, or a sentence)."""
    token = csrf_token(browser.text("/settings/password"))
    return browser.client.post("/settings/password/choose",
                               data={"csrf_token": token, "link": link})


def choose(browser: Browser, link: str, password: str, repeat: str | None = None):
    """The link opened, then the password typed twice and sent."""
    form = opened(browser, link)
    if form.status_code != 200:
        return form
    return browser.client.post("/settings/password/choose", data={
        "csrf_token": csrf_token(form.get_data(as_text=True)), "token": token_of(link),
        "password": password, "repeat": password if repeat is None else repeat})


def test_a_one_time_link_is_shown_once_and_kept_only_as_its_hash(ann, people):
    link = added_with_link(ann)
    # The token is in the fragment: no request line (nor access log) ever carries it.
    match = re.fullmatch(r"http://localhost/settings/password#([A-Za-z0-9_-]{43})", link)
    assert match, link
    token = match.group(1)
    stored = world_links(people)
    assert len(stored) == 1
    assert stored[0].token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in repr([vars(row) for row in stored])
    assert timedelta(days=6, hours=23) < stored[0].expires_at - stored[0].created_at \
        <= timedelta(days=7)
    assert changes(people) == [("person.added", BEN,
                                "With a one-time link to choose their password.", people.user_id,
                                ANN)]
    page = ann.text("/settings/people")
    assert token not in page
    ben_row = [row for row in rows(page) if BEN in row][0]
    assert "Not yet chosen" in ben_row and "their link works until" in ben_row
    # Until they choose one, no password signs them in.
    assert Browser(ann.client.application).sign_in(BEN, PASSWORD).status_code == 401


def test_the_link_sets_a_password_once_and_signs_its_person_in(ann, people, service_app):
    link = added_with_link(ann)
    ben = Browser(service_app)
    form = opened(ben, link)
    assert form.status_code == 200
    form = form.get_data(as_text=True)
    assert "Choose your password" in form and BEN in form and "Acme" in form
    assert "Set password" in form and "Repeat password" in form

    different = choose(ben, link, NEW_PASSWORD, NEW_PASSWORD + "x")
    assert different.status_code == 400
    assert "The two passwords are not the same." in different.get_data(as_text=True)
    short = choose(ben, link, "short")
    assert short.status_code == 400 and "at least 12 characters" in short.get_data(as_text=True)

    done = choose(ben, link, NEW_PASSWORD)
    assert (done.status_code, done.headers["Location"]) == (303, "/settings/people?welcome=1")
    assert "Your password is set, and you are signed in." in ben.text(done.headers["Location"])
    assert ben.signed_in_as() == BEN
    assert changes(people)[-1] == ("person.password_set", BEN, "With their one-time link.",
                                   user(people, BEN).id, BEN)
    assert world_links(people)[0].used_at is not None
    assert ">Set</span>" in [row for row in rows(ann.text("/settings/people"))
                             if BEN in row][0]

    # Used: refused with a sentence, whether looked at or sent again.
    again = Browser(service_app)
    used = opened(again, link)
    assert used.status_code == 410
    assert "This link has already been used" in used.get_data(as_text=True)
    assert again.sign_in(BEN, NEW_PASSWORD).status_code == 303
    assert again.signed_in_as() == BEN


def test_a_link_opened_twice_sets_the_password_once(ann, people, service_app):
    link = added_with_link(ann)
    first, second = Browser(service_app), Browser(service_app)
    # Both forms open at once.
    tokens = [csrf_token(opened(first, link).get_data(as_text=True)),
              csrf_token(opened(second, link).get_data(as_text=True))]
    done = first.client.post("/settings/password/choose", data={
        "csrf_token": tokens[0], "token": token_of(link), "password": NEW_PASSWORD,
        "repeat": NEW_PASSWORD})
    late = second.client.post("/settings/password/choose", data={
        "csrf_token": tokens[1], "token": token_of(link), "password": "another password!",
        "repeat": "another password!"})
    assert done.status_code == 303
    assert late.status_code == 410
    assert "This link has already been used" in late.get_data(as_text=True)
    assert second.signed_in_as() is None
    assert [c[0] for c in changes(people)].count("person.password_set") == 1
    assert Browser(service_app).sign_in(BEN, NEW_PASSWORD).status_code == 303


def test_an_expired_link_is_refused_with_a_sentence(ann, people, service_app):
    link = added_with_link(ann)
    ben = Browser(service_app)
    token = csrf_token(opened(ben, link).get_data(as_text=True))
    people.run(lambda s: s.execute(update(PasswordLink).values(
        expires_at=utcnow() - timedelta(seconds=1))))
    expired = opened(ben, link)
    assert expired.status_code == 410
    page = expired.get_data(as_text=True)
    assert "This link has expired" in page
    assert "works for 7 days" in page and "Ask an administrator" in page
    sent = ben.client.post("/settings/password/choose", data={
        "csrf_token": token, "token": token_of(link), "password": NEW_PASSWORD,
        "repeat": NEW_PASSWORD})
    assert sent.status_code == 410
    assert Browser(service_app).sign_in(BEN, NEW_PASSWORD).status_code == 401
    assert "Link expired" in ann.text("/settings/people")


@pytest.mark.parametrize("token", ["nope", "x" * 43, "y" * 500, ""])
def test_a_link_that_is_not_ours_is_a_sentence(service_app, people, token):
    response = opened(Browser(service_app), f"http://localhost/settings/password#{token}")
    assert response.status_code == 404
    assert "This link does not work" in response.get_data(as_text=True)


def test_a_link_made_before_the_token_moved_to_the_fragment_still_works(ann, people,
                                                                        service_app):
    """Links are good for 7 days: one of the old form (/settings/password/<token>) goes on to
    the page links open now, with its token in the fragment; a form sent from the old page
    still sets the password."""
    link = added_with_link(ann)
    old = f"/settings/password/{token_of(link)}"
    ben = Browser(service_app)
    moved = ben.get(old)
    assert (moved.status_code, moved.headers["Location"]) == (
        303, f"/settings/password#{token_of(link)}")
    form = csrf_token(ben.text("/settings/password"))
    done = ben.client.post(old, data={"csrf_token": form, "password": NEW_PASSWORD,
                                      "repeat": NEW_PASSWORD})
    assert done.status_code == 303 and ben.signed_in_as() == BEN
    # A path that is no token of ours is not sent on (nor echoed into a header).
    for path in ("x%0D%0ALocation:%20evil.example", "%E2%98%83", "a" * 101):
        refused = Browser(service_app).get(f"/settings/password/{path}")
        assert refused.status_code == 404 and "Location" not in refused.headers
        assert "This link does not work" in refused.get_data(as_text=True)


def test_the_link_of_a_removed_person_no_longer_works(ann, people, service_app):
    link = added_with_link(ann)
    assert ann.remove(user(people, BEN).id).status_code == 303
    assert opened(Browser(service_app), link).status_code == 404
    assert world_links(people) == []


def test_a_new_link_replaces_an_expired_one(ann, people, service_app):
    old_link = added_with_link(ann)
    people.run(lambda s: s.execute(update(PasswordLink).values(
        expires_at=utcnow() - timedelta(seconds=1))))
    ben_id = user(people, BEN).id
    ben_row = [row for row in rows(ann.text("/settings/people")) if BEN in row][0]
    assert "Link expired" in ben_row and f"/settings/people/{ben_id}/link" in ben_row
    assert "New link" in ben_row

    response = ann.post(f"/settings/people/{ben_id}/link", form_page="/settings/people")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    page = response.get_data(as_text=True)
    assert f"A new link for {BEN}" in page
    new_link = unescape(LINK_IN_PAGE.search(page).group(1))
    assert new_link != old_link and len(world_links(people)) == 1
    assert changes(people)[-1] == (
        "person.link_renewed", BEN, "A new one-time link; the ones before it no longer work.",
        people.user_id, ANN)
    # The old link no longer works; the new one sets the password.
    assert opened(Browser(service_app), old_link).status_code == 404
    ben = Browser(service_app)
    done = choose(ben, new_link, NEW_PASSWORD)
    assert done.status_code == 303 and ben.signed_in_as() == BEN


def test_a_new_link_while_the_first_still_works_replaces_it(ann, people, service_app):
    old_link = added_with_link(ann)
    ben_id = user(people, BEN).id
    assert "New link" in [row for row in rows(ann.text("/settings/people")) if BEN in row][0]
    assert ann.post(f"/settings/people/{ben_id}/link",
                    form_page="/settings/people").status_code == 200
    assert opened(Browser(service_app), old_link).status_code == 404


def test_no_new_link_for_someone_who_chose_their_password(ann, people, service_app):
    ben_id = people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    assert "New link" not in [row for row in rows(ann.text("/settings/people"))
                              if BEN in row][0]
    response = ann.post(f"/settings/people/{ben_id}/link", form_page="/settings/people")
    assert response.status_code == 303
    assert "has chosen their password already" in ann.text(response.headers["Location"])
    assert world_links(people) == []
    assert Browser(service_app).sign_in(BEN, PASSWORD).status_code == 303


def test_a_new_link_needs_the_csrf_token_and_a_person_of_this_organization(ann, people):
    added_with_link(ann)
    ben_id = user(people, BEN).id
    assert ann.client.post(f"/settings/people/{ben_id}/link").status_code == 400
    other_org, _, _ = people.new_org("Elsewhere")
    zoe = people.run(lambda s: accounts.create_user(s, other_org, "zoe@example.com", PASSWORD))
    token = csrf_token(ann.text("/settings/people"))
    assert ann.client.post(f"/settings/people/{zoe}/link",
                           data={"csrf_token": token}).status_code == 404
    assert len(world_links(people)) == 1


# --- removing ---------------------------------------------------------------------------------


def test_removing_asks_first_then_the_person_is_gone_and_still_named_in_the_log(
        ann, people, service_app):
    ben_id = people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    ben = Browser(service_app)
    assert ben.sign_in(BEN, PASSWORD).status_code == 303
    # Ben leaves traces: a key generated, a change made.
    key_page = ben.text("/settings/api/generate")
    form_token = re.search(r'name="form_token" value="([^"]+)"', key_page).group(1)
    assert ben.client.post("/settings/api/generate", data={
        "csrf_token": csrf_token(key_page), "form_token": form_token, "name": "Ben's robot",
        "project": ""}).status_code == 200
    people.run(lambda s: audit.record_change(s, people.org_id, "project.created", "Ben's",
                                             user_id=ben_id))

    ask = ann.text(f"/settings/people/{ben_id}/remove")
    assert f"Remove {BEN}?" in unescape(ask)
    assert ">Remove administrator</button>" in ask
    assert user(people, BEN) is not None  # asking is not doing

    response = ann.remove(ben_id)
    assert response.status_code == 303
    assert re.fullmatch(r"/settings/people\?removed=\d+", response.headers["Location"])
    assert f"{BEN} is no longer an administrator." in ann.text(response.headers["Location"])
    assert user(people, BEN) is None
    assert ben.get("/settings/api").status_code == 303  # signed out, from the next request

    key_events = people.run(lambda s: list(s.scalars(select(KeyEvent))))
    assert [(e.user_id, e.actor_email) for e in key_events] == [(None, BEN)]
    assert changes(people)[-2:] == [("project.created", "Ben's", "", None, BEN),
                                    ("person.removed", BEN, "", people.user_id, ANN)]
    log = ann.text("/settings/activity")
    assert "Administrator removed" in log and "Key generated" in log
    assert log.count(BEN) >= 3  # removed, and the one who generated a key and made a project
    assert BEN not in ann.text("/settings/people").split("<main", 1)[1].split("</main>")[0] \
        .replace(f"{BEN} is no longer an administrator.", "")


def test_the_last_administrator_cannot_be_removed(ann, people):
    ask = ann.text(f"/settings/people/{people.user_id}/remove")
    sentence = (f"{ANN} is the only administrator of Acme, so they cannot be removed: an "
                "organization always keeps at least one. Add another administrator first.")
    assert sentence in ask
    assert "Remove administrator</button>" not in ask
    token = csrf_token(ann.text("/settings/people"))
    refused = ann.client.post(f"/settings/people/{people.user_id}/remove",
                              data={"csrf_token": token})
    assert refused.status_code == 409
    assert sentence in refused.get_data(as_text=True)
    assert user(people, ANN) is not None and ann.signed_in_as() == ANN
    assert changes(people) == []


def test_removing_yourself_signs_you_out(ann, people, service_app):
    people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    ask = ann.text(f"/settings/people/{people.user_id}/remove")
    assert "This is you. You are signed out at once" in ask
    response = ann.remove(people.user_id)
    assert (response.status_code, response.headers["Location"]) == (
        303, "/settings/signin?signed_out=1")
    assert "You are signed out." in ann.text(response.headers["Location"])
    assert ann.get("/settings/people").status_code == 303
    assert user(people, ANN) is None
    assert changes(people) == [("person.removed", ANN, "Removed themselves.", None, ANN)]
    ben = Browser(service_app)
    ben.sign_in(BEN, PASSWORD)
    assert ANN in ben.text("/settings/activity")


def test_people_of_other_organizations_are_not_there(ann, people):
    other_org, _, _ = people.new_org("Elsewhere")
    zoe = people.run(lambda s: accounts.create_user(s, other_org, "zoe@example.com", PASSWORD))
    assert ann.get(f"/settings/people/{zoe}/remove").status_code == 404
    token = csrf_token(ann.text("/settings/people"))
    assert ann.client.post(f"/settings/people/{zoe}/remove",
                           data={"csrf_token": token}).status_code == 404
    assert user(people, "zoe@example.com") is not None


def test_people_forms_need_their_csrf_token(ann, people):
    assert ann.client.post("/settings/people/add", data={
        "email": BEN, "method": "password", "password": PASSWORD,
        "repeat": PASSWORD}).status_code == 400
    people.run(lambda s: accounts.create_user(s, people.org_id, BEN, PASSWORD))
    assert ann.client.post(f"/settings/people/{user(people, BEN).id}/remove").status_code == 400
    assert user(people, BEN) is not None


def test_emails_are_shown_as_text_never_as_markup(ann, people):
    people.run(lambda s: accounts.create_user(s, people.org_id, "<b>x</b>@example.com",
                                              PASSWORD))
    page = ann.text("/settings/people")
    assert "<b>x</b>@example.com" not in page and "&lt;b&gt;x&lt;/b&gt;@example.com" in page


# --- the migration ----------------------------------------------------------------------------


def test_migration_0015_creates_exactly_the_models_table(database_url):
    engine = create_engine(database_url)
    try:
        differences = model_differences(engine)
        assert [d for d in differences if "password_links" in repr(d)] == []
    finally:
        engine.dispose()
