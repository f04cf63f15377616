"""The one rule of where sign-in returns people to (weblib/redirects.py), as the dashboard and
the settings area each configure it: the same refusals and the same longest page for both,
and each UI's own pages. Through HTTP: tests/security/test_signin.py,
tests/dashboard/test_auth.py, tests/service/test_settings.py."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import pytest
from flask import Blueprint, Flask, url_for

from dashboard import signin as dashboard_signin
from service.settings import views as settings_views
from tests.security.test_signin import HOSTILE_NEXT, browser_target
from weblib.redirects import LONGEST_NEXT, safe_next

SITE = "http://127.0.0.1:5000"
# Gunicorn's longest request line (its default `limit_request_line`, bytes).
LONGEST_REQUEST_LINE = 4094


@pytest.fixture(scope="module")
def dashboard():
    """The dashboard's rule, with the sign-in pages its url_for names."""
    app = Flask(__name__)
    auth = Blueprint("auth", __name__)
    auth.add_url_rule("/signin", "signin", lambda: "")
    auth.add_url_rule("/signout", "signout", lambda: "")
    app.register_blueprint(auth)
    with app.test_request_context():
        yield dashboard_signin.safe_next


RULES = {"settings": settings_views.safe_next}


@pytest.fixture(params=["dashboard", "settings"])
def rule(request, dashboard):
    return dashboard if request.param == "dashboard" else RULES[request.param]


@pytest.mark.parametrize("hostile", sorted({unquote(value) for value in HOSTILE_NEXT}
                                           | set(HOSTILE_NEXT)))
def test_no_ui_returns_anyone_to_another_site(rule, hostile):
    """Every form of test_signin's hostile `next`, decoded or not: refused, or a path that a
    browser resolves to this very site."""
    accepted = rule(hostile)
    if accepted is not None:
        assert urlsplit(browser_target(SITE, accepted)).netloc == urlsplit(SITE).netloc


@pytest.mark.parametrize("character", ["\t", "\n", "\r", "\x00", "\x1b", "\x7f", "\ud800"])
def test_a_character_no_text_may_hold_is_refused_by_both(rule, character):
    assert rule(f"/settings/api{character}x") is None
    assert rule(f"/projects{character}") is None


def test_both_return_to_a_page_of_at_most_the_same_length(dashboard):
    for rule, start in ((dashboard, "/projects?q="), (settings_views.safe_next,
                                                      "/settings/activity?q=")):
        longest = start + "x" * (LONGEST_NEXT - len(start))
        assert rule(longest) == longest
        assert rule(longest + "x") is None


def test_the_longest_page_fits_in_the_sign_in_address(dashboard):
    """Quoted once more into the sign-in page's address, the longest page of percent-encoded
    text still fits in gunicorn's request line."""
    start = "/projects/0d8f4c1e-8a4b-4b8e-9f59-1b1f7f3b2a6c/queries?q="
    longest = (start + "%D0%96" * LONGEST_NEXT)[:LONGEST_NEXT]
    assert dashboard(longest) == longest
    line = f"GET {url_for('auth.signin', next=longest)} HTTP/1.1"
    assert len(line.encode()) <= LONGEST_REQUEST_LINE


def test_each_ui_keeps_its_own_pages(dashboard):
    assert dashboard("/projects/x/queries?q=shoes") == "/projects/x/queries?q=shoes"
    assert dashboard("/settings/api") == "/settings/api"  # a page of the same site
    for refused in ("/signin", "/signout", "/api/projects/list", "/static/app.css"):
        assert dashboard(refused) is None
    settings = settings_views.safe_next
    assert settings("/settings/activity?page=2") == "/settings/activity?page=2"
    for refused in ("/projects", "/settings", "/settings/signin", "/settings/signout",
                    "/settings/static/settings.css", "/api/projects/list"):
        assert settings(refused) is None


def test_the_rule_refuses_what_makes_no_sense_to_return_to():
    assert safe_next(None) is None and safe_next("") is None
    assert safe_next("/a", refused=("/a",)) is None
    assert safe_next("/a/b", refused=("/a",)) == "/a/b"  # an exact path, not a prefix
    assert safe_next("/a/b", refused=("/a/",)) is None
    assert safe_next("/settingsx", within="/settings/") is None
