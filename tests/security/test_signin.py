"""Signing in, attacked: open redirects through `next` (and the Referer a refused form falls
back to), brute force, and session fixation — on the dashboard's sign-in and on the service's
settings sign-in (/settings, served by the embedded service at the dashboard's address).

Everything runs against a live dashboard over loopback. Each visitor comes from a client
address of its own, so the per-address throttle counts only its own attempts.
"""

from __future__ import annotations

import html
import re
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import limits.storage.memory
import pytest
import requests

import weblib.throttle
from tests.support.databases import REDIS_URL
from tests.support.security import (
    DASHBOARD_COOKIE,
    SETTINGS_COOKIE,
    SETTINGS_PASSWORD,
    Visitor,
    make_org,
    random_address,
    start_site,
)

WINDOW_SECONDS = 3
ATTEMPTS = 3
LIMIT = f"{ATTEMPTS} per {WINDOW_SECONDS} seconds"
WRONG_KEY = "tdk_live_" + "W" * 43

# Values of `next`, as they appear in the query string (percent-encoding included): other
# sites, scheme-relative and backslash forms, scripts, control characters, and their encodings.
HOSTILE_NEXT = [
    "//evil.example/", "///evil.example/", "/\\evil.example", "\\\\evil.example",
    "/\\/evil.example", "https://evil.example/", "http:evil.example", "http:/evil.example",
    "https:/\\evil.example", "javascript:alert(1)", "JaVaScRiPt:alert(1)",
    "data:text/html,<script>alert(1)</script>", "//evil.example@127.0.0.1/",
    "%2F%2Fevil.example", "%2F%5Cevil.example", "%5C%5Cevil.example", "%252F%252Fevil.example",
    "https%3A%2F%2Fevil.example", "%09%2F%2Fevil.example", "%2F%09%2Fevil.example",
    "%2F%0A%2Fevil.example", "%0D%0A%2F%2Fevil.example", "java%0Ascript:alert(1)",
    "%20%2F%2Fevil.example", "%E3%80%82%2F%2Fevil.example", "/%2F%2Fevil.example",
    "%2F.%2F%2Fevil.example",
]
# A few go through a whole settings sign-in too (each checks a password: scrypt is slow).
SETTINGS_POSTED = ["//evil.example/", "/\\evil.example", "https://evil.example/",
                   "%2F%09%2Fevil.example"]


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("signin"), sqlite_template, SIGNIN_LIMIT=LIMIT,
                      SERVICE={"SETTINGS_SIGNIN_LIMIT": LIMIT,
                               "SETTINGS_SIGNIN_LIMIT_PER_EMAIL": "10000/minute"})
    site.org = make_org(site.service_app, "Acme", {"Shop search": [("boots", "en", "US", [])]},
                        {"brand": "#1f77b4"}, email="ann@acme.example")
    yield site
    site.stop()


def browser_target(base_url: str, location: str) -> str:
    """Where a browser goes for this Location: the URL standard drops tabs and newlines and
    surrounding spaces and control characters, and reads a backslash as a slash."""
    cleaned = re.sub(r"[\t\n\r]", "", location).strip("".join(map(chr, range(33))))
    return urljoin(base_url + "/", cleaned.replace("\\", "/"))


def assert_stays_home(site, response: requests.Response) -> None:
    assert response.status_code in (302, 303), (response.status_code, response.text[:300])
    target = urlsplit(browser_target(site.url, response.headers["Location"]))
    home = urlsplit(site.url)
    assert (target.scheme, target.netloc) == (home.scheme, home.netloc), \
        response.headers["Location"]


# --- open redirects ------------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", HOSTILE_NEXT)
def test_the_dashboard_never_sends_anyone_to_another_site_after_sign_in(site, hostile):
    visitor = site.visitor()
    form = visitor.get("/signin?next=" + hostile).text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
    # The form posts back here, carrying `next` only if it is a path of this site.
    action = html.unescape(re.search(r'action="([^"]*)"[^>]*id="signin-form"', form).group(1))
    for url in (action, *parse_qs(urlsplit(action).query).get("next", [])):
        landing = urlsplit(browser_target(site.url, url))
        assert (landing.scheme, landing.netloc) == ("http", urlsplit(site.url).netloc), url
    signed_in = visitor.post("/signin?next=" + hostile,
                             data={"csrf_token": token, "api_key": site.org.key})
    assert_stays_home(site, signed_in)
    # Signed in already, the sign-in page sends people on at once: home again.
    assert_stays_home(site, visitor.get("/signin?next=" + hostile))


@pytest.mark.parametrize("hostile", HOSTILE_NEXT)
def test_the_settings_area_never_sends_anyone_to_another_site(site, settings_visitor, hostile):
    assert_stays_home(site, settings_visitor.get("/settings/signin?next=" + hostile))


@pytest.mark.parametrize("hostile", SETTINGS_POSTED)
def test_the_settings_sign_in_never_sends_anyone_to_another_site(site, hostile):
    visitor = site.visitor()
    token = visitor.token("/settings/signin?next=" + hostile)
    signed_in = visitor.post("/settings/signin?next=" + hostile, data={
        "csrf_token": token, "email": site.org.email, "password": SETTINGS_PASSWORD})
    assert_stays_home(site, signed_in)
    assert urlsplit(signed_in.headers["Location"]).path.startswith("/settings/")


@pytest.fixture(scope="module")
def settings_visitor(site) -> Visitor:
    visitor = site.visitor()
    assert visitor.settings_sign_in(site.org.email).status_code == 303
    return visitor


@pytest.mark.parametrize("referrer", [
    "https://evil.example/projects", "//evil.example/", "/\\evil.example",
    "{url}//evil.example/", "{url}/\\evil.example", "{url}/%2F%2Fevil.example",
])
def test_a_refused_form_never_returns_to_another_site(site, referrer):
    """A form without its CSRF token goes back to the page it came from — if that is ours."""
    visitor = site.visitor()
    assert visitor.sign_in(site.org.key).status_code == 303
    refused = visitor.post("/signout", headers={"Referer": referrer.format(url=site.url)})
    assert_stays_home(site, refused)


@pytest.mark.parametrize("current", [
    "https://evil.example/projects", "{url}//evil.example/", "{url}/\\evil.example",
    "{url}/%2F%2Fevil.example", "javascript:alert(1)",
])
def test_htmx_requests_sent_back_to_sign_in_stay_on_this_site(site, current):
    """A key revoked mid-session (or no session at all) sends htmx requests to sign-in by
    HX-Redirect, returning to the page named by HX-Current-URL — only if it is ours."""
    from service.org import admin
    from service.store.db import session_scope

    with session_scope(site.service_app) as session:
        key = admin.create_key(session, site.org.org_id, "tdk")
    visitor = site.visitor()
    assert visitor.sign_in(key).status_code == 303
    page = f"/projects/{site.org.project_id}/queries"
    token = visitor.token(page)
    with session_scope(site.service_app) as session:
        admin.revoke_key(session, key)
    headers = {"HX-Request": "true", "HX-Current-URL": current.format(url=site.url)}
    for response in (visitor.post(f"/projects/{site.org.project_id}/export",
                                  data={"csrf_token": token}, headers=headers),
                     site.visitor().post(f"/projects/{site.org.project_id}/export",
                                         headers=headers)):
        target = response.headers.get("HX-Redirect")
        assert target, (response.status_code, response.text[:200])
        for url in (target, *parse_qs(urlsplit(target).query).get("next", [])):
            landing = urlsplit(browser_target(site.url, url))
            assert (landing.scheme, landing.netloc) == ("http", urlsplit(site.url).netloc), url


# --- brute force ---------------------------------------------------------------------------------


def room_for(site, address: str) -> bool:
    """Whether the dashboard's and the settings' sign-in throttles would both let one more
    attempt from `address` through now (per address: the first rule of each)."""
    throttles = (site.app.extensions["tagdesk_signin_throttle"],
                 site.service_app.extensions["tagdesk_settings_throttle"])
    return all(throttle.limiter.test(item, *prefix, address)
               for throttle in throttles for item, prefix in throttle.rules[:1])


class ThrottleClock:
    """The clock the sign-in throttles count by — `time` as limits' in-memory storage and
    weblib.throttle read it — standing still until the test moves it on. A 3-second window
    in real time passed while a loaded machine checked the attempts' passwords, and the next
    attempt was let through (401 where 429 was expected); with this clock the window passes
    when the test says, and not before."""

    def __init__(self):
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def __getattr__(self, name):
        return getattr(time, name)


@pytest.fixture
def throttle_clock(monkeypatch):
    clock = ThrottleClock()
    monkeypatch.setattr(limits.storage.memory, "time", clock)
    monkeypatch.setattr(weblib.throttle, "time", clock)
    return clock


def test_brute_force_is_throttled_per_address_until_the_window_passes(site, throttle_clock):
    """Wrong API keys (dashboard) and wrong passwords (settings): after ATTEMPTS, the right
    ones are refused too, with a sentence and Retry-After, until the window has passed — for
    that client address only. The throttles' clock stands still while the attempts are made
    (however slowly) and is then moved on: just short of the window, still refused; past it,
    let through."""
    attacker = site.visitor()
    dashboard_token, settings_token = attacker.token(), attacker.token("/settings/signin")

    def with_key(key: str) -> requests.Response:
        return attacker.post("/signin", data={"csrf_token": dashboard_token, "api_key": key})

    def with_password(password: str) -> requests.Response:
        return attacker.post("/settings/signin", data={
            "csrf_token": settings_token, "email": site.org.email, "password": password})

    for _ in range(ATTEMPTS):
        assert with_key(WRONG_KEY).status_code == 401
    for _ in range(ATTEMPTS):
        assert with_password("not the password at all").status_code == 401

    for throttled in (with_key(WRONG_KEY), with_key(site.org.key),
                      with_password(SETTINGS_PASSWORD)):
        assert throttled.status_code == 429
        assert "Too many sign-in attempts" in throttled.text
        wait = int(throttled.headers["Retry-After"])
        assert 1 <= wait <= WINDOW_SECONDS
        assert f"wait {wait} second" in throttled.text
    assert attacker.get(f"/projects/{site.org.project_id}/queries").status_code == 302
    assert attacker.get("/settings/api").status_code == 303

    # Another address is not held back.
    other = site.visitor()
    assert other.sign_in(site.org.key).status_code == 303
    assert other.settings_sign_in(site.org.email).status_code == 303

    # Just short of the window, still refused; once it has passed, both throttles have room
    # for this address again (asked of them: a `test` counts nothing).
    throttle_clock.now += WINDOW_SECONDS - 0.5
    assert with_key(site.org.key).status_code == 429
    assert with_password(SETTINGS_PASSWORD).status_code == 429
    assert not room_for(site, attacker.address)
    throttle_clock.now += 1
    assert room_for(site, attacker.address), "the sign-in windows did not free a place"
    assert with_key(site.org.key).status_code == 303
    assert with_password(SETTINGS_PASSWORD).status_code == 303
    assert attacker.get(f"/projects/{site.org.project_id}/queries").status_code == 200


# --- session fixation ----------------------------------------------------------------------------


def plant(visitor: Visitor, name: str, value: str) -> None:
    """Put a cookie in a visitor's jar as the server would have set it."""
    visitor.http.cookies.set(name, value, domain=urlsplit(visitor.base_url).hostname,
                             path="/settings" if name == SETTINGS_COOKIE else "/")


def signed_in_as(site, cookie_name: str, value: str, path: str) -> bool:
    """Whether a fresh client holding only this cookie value is signed in."""
    stranger = Visitor(site.url, random_address())
    plant(stranger, cookie_name, value)
    return stranger.get(path).status_code == 200


def check_dashboard_fixation(site) -> None:
    # An attacker's own session id, obtained by visiting the sign-in page…
    attacker = site.visitor()
    attacker.get("/signin")
    planted = attacker.cookie()
    assert planted
    # …planted in the victim's browser, who then signs in.
    victim = site.visitor()
    plant(victim, DASHBOARD_COOKIE, planted)
    before = victim.cookie()
    token = victim.token()
    assert victim.cookie() == planted == before  # the planted id was in use until sign-in
    assert victim.post("/signin", data={"csrf_token": token,
                                        "api_key": site.org.key}).status_code == 303
    after = victim.cookie()
    assert after and after != planted
    page = f"/projects/{site.org.project_id}/queries"
    assert victim.get(page).status_code == 200
    assert not signed_in_as(site, DASHBOARD_COOKIE, planted, page)
    assert signed_in_as(site, DASHBOARD_COOKIE, after, page)
    # An id the server never issued is not taken up either.
    made_up = site.visitor()
    plant(made_up, DASHBOARD_COOKIE, "attacker-chosen-session-id-0123456789")
    made_up.get("/signin")
    assert made_up.cookie() != "attacker-chosen-session-id-0123456789"


def test_dashboard_sign_in_gives_a_new_session_id(site):
    check_dashboard_fixation(site)


@pytest.mark.redis
def test_dashboard_sign_in_gives_a_new_session_id_with_sessions_in_redis(tmp_path_factory,
                                                                          sqlite_template):
    site = start_site(tmp_path_factory.mktemp("redis-sessions"), sqlite_template,
                      REDIS_URL=REDIS_URL)
    try:
        site.org = make_org(site.service_app, "Acme", {"Shop": []}, {"brand": "#1f77b4"})
        check_dashboard_fixation(site)
    finally:
        site.stop()


def test_settings_sign_in_gives_a_new_session(site):
    attacker = site.visitor()
    attacker.get("/settings/signin")
    planted = attacker.cookie(SETTINGS_COOKIE)
    assert planted
    victim = site.visitor()
    plant(victim, SETTINGS_COOKIE, planted)
    token = victim.token("/settings/signin")
    assert victim.post("/settings/signin", data={
        "csrf_token": token, "email": site.org.email,
        "password": SETTINGS_PASSWORD}).status_code == 303
    after = victim.cookie(SETTINGS_COOKIE)
    assert after and after != planted
    assert victim.get("/settings/api").status_code == 200
    assert not signed_in_as(site, SETTINGS_COOKIE, planted, "/settings/api")
    assert signed_in_as(site, SETTINGS_COOKIE, after, "/settings/api")
