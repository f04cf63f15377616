"""Settings sessions over real HTTP (a live service on loopback): a session ends on the server
when its person signs out, is removed, or gets a new password, so that a copied cookie is worth
nothing afterwards; an id once given never names anyone else (a removed person's cookie never
signs in the next person created); ids out of any row's range are 404 like unknown ones; two
administrators who remove each other at once get a page each, never a 500.

SQLite, and with TAGDESK_TEST_POSTGRES=1 PostgreSQL, with TAGDESK_TEST_REDIS=1 as well
PostgreSQL with Redis for the service's counters.
"""

from __future__ import annotations

import html
import logging
import re
import threading
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import requests
from sqlalchemy import select

from service.org import accounts
from service.store.models import Project, User
from tests.service.commands import command_line, last_line
from tests.support.dashboard import csrf_token
from tests.support.databases import REDIS_URL, database_for
from tests.support.security import SETTINGS_COOKIE, SETTINGS_PASSWORD, Visitor

ANN = "ann@acme.example"
SECOND = "second@acme.example"
NEWB = "newb@elsewhere.example"
BACKENDS = [
    pytest.param(("sqlite", None), id="sqlite"),
    pytest.param(("postgres", None), id="postgres", marks=pytest.mark.postgres),
    pytest.param(("postgres", REDIS_URL), id="postgres-redis",
                 marks=[pytest.mark.postgres, pytest.mark.redis]),
]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def database_url(backend, request, tmp_path, sqlite_template) -> str:
    return database_for(backend[0], request, tmp_path, sqlite_template)


@pytest.fixture
def service_config(service_config, backend) -> dict:
    return {**service_config, "REDIS_URL": backend[1],
            # Sign-in is throttled per email, in Redis across tests: not what is tried here.
            "SETTINGS_SIGNIN_LIMIT": "10000/minute",
            "SETTINGS_SIGNIN_LIMIT_PER_EMAIL": "10000/minute"}


@pytest.fixture
def acme(world):
    """The world's organization with Ann, its administrator."""
    return world.with_administrator(ANN, SETTINGS_PASSWORD)


class Person(Visitor):
    """A browser of the settings area."""

    def sign_in(self, email: str, password: str = SETTINGS_PASSWORD) -> None:
        response = self.settings_sign_in(email, password)
        assert response.status_code == 303, response.text[:500]
        assert self.get("/settings/api").status_code == 200

    def send(self, path: str, form_page: str, **data) -> requests.Response:
        return self.post(path, data={"csrf_token": self.token(form_page), **data})

    def signed_in_as(self) -> str | None:
        page = self.get("/settings/people")
        if page.status_code != 200:
            return None
        return re.search(r'class="account__email">.*?</span>([^<]+)</span>', page.text).group(1)


def person(live_service) -> Person:
    return Person(live_service.url)


def copy_of(visitor: Visitor) -> str:
    value = visitor.cookie(SETTINGS_COOKIE)
    assert value
    return value


def replayed(live_service, cookie: str) -> Visitor:
    """A browser of someone else holding only a copy of this cookie."""
    stranger = Visitor(live_service.url)
    stranger.http.cookies.set(SETTINGS_COOKIE, cookie, domain=urlsplit(live_service.url).hostname,
                              path="/settings")
    return stranger


def assert_sent_to_sign_in(response: requests.Response) -> None:
    assert response.status_code == 303, (response.status_code, response.text[:300])
    assert response.headers["Location"].startswith("/settings/signin")


def projects_named(world, name: str) -> list[str]:
    return world.run(lambda s: list(s.scalars(select(Project.org_id).where(Project.name == name))))


def replay_is_refused(live_service, world, cookie: str, csrf: str, project: str) -> None:
    """The copied cookie neither shows a page nor makes a project (with the CSRF token its
    session had, so that only the session can refuse it)."""
    assert_sent_to_sign_in(replayed(live_service, cookie).get("/settings/api"))
    assert_sent_to_sign_in(replayed(live_service, cookie).get("/settings/people"))
    made = replayed(live_service, cookie).post("/settings/projects",
                                               data={"csrf_token": csrf, "name": project})
    assert made.status_code in (303, 400), made.status_code
    if made.status_code == 303:
        assert made.headers["Location"].startswith("/settings/signin"), made.headers["Location"]
    assert projects_named(world, project) == []


# --- 1. an id is never given twice ---------------------------------------------------------------


def test_a_removed_persons_cookie_never_signs_in_the_next_person_created(live_service, acme,
                                                                          service_app):
    ann = person(live_service)
    ann.sign_in(ANN)
    added = ann.send("/settings/people/add", "/settings/people/add", email=SECOND,
                     method="password", password=SETTINGS_PASSWORD, repeat=SETTINGS_PASSWORD)
    assert added.status_code == 303, added.text[:500]
    second_id = acme.run(lambda s: s.scalar(select(User.id).where(User.email == SECOND)))
    second = person(live_service)
    second.sign_in(SECOND)
    cookie = copy_of(second)
    csrf = csrf_token(second.get("/settings/projects").text)

    removed = ann.send(f"/settings/people/{second_id}/remove",
                       f"/settings/people/{second_id}/remove")
    assert removed.status_code == 303
    other_org, _, _ = acme.new_org("Elsewhere")
    created = command_line(service_app)("create-user", other_org, NEWB,
                                        input=SETTINGS_PASSWORD + "\n")
    newb_id = int(last_line(created))

    replay_is_refused(live_service, acme, cookie, csrf, "Made by a removed person")
    assert newb_id != second_id  # never given twice (SQLite: AUTOINCREMENT, migration 0024)
    # Nor did it ever sign in the new person, in their organization.
    assert NEWB not in replayed(live_service, cookie).get("/settings/people").text
    # The new person signs in as themselves, in their own organization.
    newb = person(live_service)
    newb.sign_in(NEWB)
    assert newb.signed_in_as() == NEWB


def test_no_id_of_a_key_tag_person_or_event_is_given_twice(live_service, acme, service_app):
    """Each kind of row that has an integer id: the newest one deleted, the next one made gets
    a new id."""
    from sqlalchemy import delete, func

    from service.org import admin, audit
    from service.settings import password_links
    from service.store.models import ApiKey, KeyEvent, OrgEvent, PasswordLink, Tag

    def newest_then_next(model, make):
        first = acme.run(make)
        acme.run(lambda s: s.execute(delete(model).where(model.id == first)))
        assert acme.run(lambda s: s.scalar(select(func.max(model.id)))) != first
        following = acme.run(make)
        assert following > first, (model.__tablename__, first, following)

    counter = iter(range(1000))

    def key(s):
        admin.create_key(s, acme.org_id, "tdk")
        return s.scalar(select(func.max(ApiKey.id)))

    def tag(s):
        return admin.create_tag(s, acme.project_id, f"tag {next(counter)}", "#1f77b4")

    def user(s):
        return accounts.create_user(s, acme.org_id, f"p{next(counter)}@acme.example",
                                    SETTINGS_PASSWORD)

    def org_event(s):
        return audit.record_change(s, acme.org_id, "tag.created", "x").id

    def key_event(s):
        api_key = s.scalar(select(ApiKey).order_by(ApiKey.id))
        return audit.record(s, api_key, audit.GENERATED).id

    def link(s):
        return password_links.issue(s, acme.user_id)[1].id

    for model, make in ((ApiKey, key), (Tag, tag), (User, user), (OrgEvent, org_event),
                        (KeyEvent, key_event), (PasswordLink, link)):
        newest_then_next(model, make)


# --- 2. a session ends on the server -------------------------------------------------------------


def test_signing_out_ends_the_session_for_every_copy_of_the_cookie(live_service, acme):
    ann = person(live_service)
    ann.sign_in(ANN)
    cookie = copy_of(ann)
    csrf = csrf_token(ann.get("/settings/projects").text)
    # The copy works while the session does.
    assert replayed(live_service, cookie).get("/settings/api").status_code == 200

    out = ann.send("/settings/signout", "/settings/api")
    assert_sent_to_sign_in(out)
    replay_is_refused(live_service, acme, cookie, csrf, "Made after signing out")
    # Signing in again is a new session, which works.
    ann.sign_in(ANN)
    assert copy_of(ann) != cookie


def test_removing_a_person_ends_each_of_their_sessions(live_service, acme):
    ben_id = acme.run(lambda s: accounts.create_user(s, acme.org_id, SECOND,
                                                     SETTINGS_PASSWORD))
    browsers = [person(live_service), person(live_service)]
    cookies, tokens = [], []
    for browser in browsers:
        browser.sign_in(SECOND)
        cookies.append(copy_of(browser))
        tokens.append(csrf_token(browser.get("/settings/projects").text))
    ann = person(live_service)
    ann.sign_in(ANN)
    assert ann.send(f"/settings/people/{ben_id}/remove",
                    f"/settings/people/{ben_id}/remove").status_code == 303
    for index, (cookie, csrf) in enumerate(zip(cookies, tokens, strict=True)):
        replay_is_refused(live_service, acme, cookie, csrf, f"Made by a removed person {index}")


def test_a_new_password_ends_the_other_sessions_in_that_browser(live_service, acme):
    """Ann opens Ben's one-time link in her own browser (a shared computer) and sets his
    password there: the browser is Ben's now, and Ann's session in it is over, copies too."""
    ann = person(live_service)
    ann.sign_in(ANN)
    page = ann.send("/settings/people/add", "/settings/people/add", email=SECOND,
                    method="link", password="", repeat="")
    assert page.status_code == 200
    link = link_in(page.text)
    ann_cookie = copy_of(ann)
    ann_csrf = csrf_token(ann.get("/settings/projects").text)

    done = open_link_and_set_password(ann, link, "Ben's own long password")
    assert done.status_code == 303, done.text[:500]
    assert ann.signed_in_as() == SECOND
    replay_is_refused(live_service, acme, ann_cookie, ann_csrf, "Made by Ann's old session")


def test_a_new_password_ends_every_session_of_its_person(live_service, acme):
    """A session of the person from before their new password (made here directly: the only
    way to a new password is the one-time link, used before any sign-in) is over after it."""
    from service.settings import sessions as settings_sessions

    ann = person(live_service)
    ann.sign_in(ANN)
    page = ann.send("/settings/people/add", "/settings/people/add", email=SECOND,
                    method="link", password="", repeat="")
    link = link_in(page.text)
    ben_id = acme.run(lambda s: s.scalar(select(User.id).where(User.email == SECOND)))
    old_secret = acme.run(lambda s: settings_sessions.start(s, ben_id, timedelta(hours=1)))
    assert acme.run(lambda s: settings_sessions.user_of(s, old_secret)).email == SECOND

    ben = person(live_service)
    assert open_link_and_set_password(ben, link, "Ben's own long password").status_code == 303
    assert ben.signed_in_as() == SECOND
    assert acme.run(lambda s: settings_sessions.user_of(s, old_secret)) is None
    assert ann.signed_in_as() == ANN  # nobody else's session is touched


# --- 7. ids out of range --------------------------------------------------------------------------

OUT_OF_RANGE = [str(2**31), str(2**31 + 1), str(2**63 - 1), str(2**63), str(2**64),
                "9" * 40, "0", "-1", "-" + str(2**63)]
ID_ROUTES = [("GET", "/settings/api/{}/revoke"), ("POST", "/settings/api/{}/revoke"),
             ("GET", "/settings/people/{}/remove"), ("POST", "/settings/people/{}/remove"),
             ("POST", "/settings/people/{}/link"),
             ("GET", "/settings/projects/{project}/tags/{}/edit"),
             ("POST", "/settings/projects/{project}/tags/{}/edit"),
             ("GET", "/settings/projects/{project}/tags/{}/delete"),
             ("POST", "/settings/projects/{project}/tags/{}/delete")]


def test_ids_out_of_range_are_404_like_unknown_ones(live_service, acme):
    ann = person(live_service)
    ann.sign_in(ANN)
    token = csrf_token(ann.get("/settings/api").text)
    unknown = ann.get("/settings/people/999999/remove")
    assert unknown.status_code == 404
    seen = []
    for method, route in ID_ROUTES:
        for value in OUT_OF_RANGE + [str(2**31 - 1)]:
            path = route.format(value, project=acme.project_id)
            data = {"csrf_token": token, "name": "x", "color": "#1f77b4"} \
                if method == "POST" else None
            response = ann.request(method, path, data=data)
            seen.append((method, path, response.status_code))
            if response.status_code == 404:
                assert "Page not found" in response.text or "not found" in response.text.lower()
    assert [s for s in seen if s[2] != 404] == []
    assert ann.get("/settings/api").status_code == 200  # still signed in, nothing changed


# --- 8. two administrators remove each other at once ----------------------------------------------

ROUNDS = 8


def test_two_administrators_removing_each_other_at_once_get_a_page_each(live_service, acme):
    """Each round: an organization whose only administrators are A and B; A removes B and B
    removes A, the two requests sent at the same moment. One of them always remains; the
    other is told in words, never with a 500."""
    raced = 0
    for round_ in range(ROUNDS):
        org_id, _, _ = acme.new_org(f"Round {round_}")
        emails = [f"a{round_}@round.example", f"b{round_}@round.example"]
        ids = [acme.run(lambda s, e=e, o=org_id: accounts.create_user(s, o, e,
                                                                      SETTINGS_PASSWORD))
               for e in emails]
        browsers = [person(live_service) for _ in emails]
        targets = [f"/settings/people/{other}/remove" for other in reversed(ids)]
        tokens = []
        for browser, email, target in zip(browsers, emails, targets, strict=True):
            browser.sign_in(email)
            tokens.append(browser.token(target))
        start = threading.Barrier(2)
        responses: list = [None, None]

        def remove(index, browser, target, token, start=start, responses=responses):
            start.wait()
            responses[index] = browser.post(target, data={"csrf_token": token})

        threads = [threading.Thread(target=remove, args=(index, browsers[index], targets[index],
                                                         tokens[index])) for index in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = [response.status_code for response in responses]
        assert all(status < 500 for status in statuses), (
            round_, statuses, [response.text[:800] for response in responses])
        left = acme.run(lambda s, ids=ids: list(s.scalars(
            select(User.email).where(User.id.in_(ids)))))
        assert len(left) == 1, (round_, left)  # one always remains
        winner = emails.index(left[0])
        lost = responses[1 - winner]
        assert statuses[winner] == 303
        assert responses[winner].headers["Location"].startswith("/settings/people?removed=")
        assert browsers[winner].signed_in_as() == left[0]
        if lost.status_code == 409:
            # Both were on their way at once: the second is told what happened, in words.
            raced += 1
            assert "You are no longer an administrator" in lost.text
            assert "Another administrator removed you from Round" in lost.text
            assert "your change was not made" in lost.text
            assert "Go to sign-in" in lost.text
        else:
            # The winner had finished before the other request was looked at: sent to sign
            # in, as anyone whose session is over.
            assert_sent_to_sign_in(lost)
        assert browsers[1 - winner].signed_in_as() is None
    # The requests did meet (each round, before the fix, the second one was a 500).
    assert raced >= 1


# --- the one-time link --------------------------------------------------------------------------


def link_in(page: str) -> str:
    return html.unescape(re.search(r'id="password-link" value="([^"]+)"', page).group(1))


def open_link_and_set_password(browser: Visitor, link: str, password: str) -> requests.Response:
    """What a browser does with a one-time link: it asks for the page without the fragment
    (/settings/password#<token>: the token stays in the browser), whose script sends the token
    in the body of a POST; then the password, typed twice. (A link of the old form,
    /settings/password/<token>, is opened as it was: its page, then its form.)"""
    if "#" not in link:
        path = link.removeprefix(browser.base_url)
        form = browser.get(path)
        assert form.status_code == 200, form.text[:300]
        return browser.post(path, data={"csrf_token": csrf_token(form.text),
                                        "password": password, "repeat": password})
    address, token = link.split("#", 1)
    page = browser.get(address.removeprefix(browser.base_url))
    assert page.status_code == 200, page.text[:300]
    assert 'id="open-link"' in page.text and "password-link.js" in page.text
    form = browser.post("/settings/password/choose", data={"csrf_token": csrf_token(page.text),
                                                    "link": token})
    assert form.status_code == 200, form.text[:300]
    return browser.post("/settings/password/choose", data={
        "csrf_token": csrf_token(form.text), "token": token, "password": password,
        "repeat": password})


def test_a_one_time_links_token_is_in_no_request_line_the_server_logs(live_service, acme,
                                                                       caplog):
    """Werkzeug logs each request line, as a proxy in front would: the link is made, opened
    and used, and its token is in none of them."""
    caplog.set_level(logging.INFO, logger="werkzeug")
    ann = person(live_service)
    ann.sign_in(ANN)
    page = ann.send("/settings/people/add", "/settings/people/add", email=SECOND,
                    method="link", password="", repeat="")
    link = link_in(page.text)
    token = re.search(r"[A-Za-z0-9_-]{43}$", link).group(0)
    ben = person(live_service)
    done = open_link_and_set_password(ben, link, "Ben's own long password")
    assert done.status_code == 303
    assert ben.signed_in_as() == SECOND
    lines = [record.getMessage() for record in caplog.records if record.name == "werkzeug"]
    assert any("POST /settings/password" in line for line in lines), lines
    assert [line for line in lines if token in line] == []
