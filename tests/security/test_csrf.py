"""CSRF: every state-changing route (POST, PUT, PATCH, DELETE) of the dashboard and of the
service's settings area, read from their URL maps — a route added tomorrow is covered the day
it is added — refuses a request without the session's token, or with another session's. The
visitor is signed in to both, so the refusal can only be the CSRF check's; the same request
with the token gets past it (the positive control), and nothing the refused requests aimed at
has changed.

The API's state-changing routes are exempt from CSRF because nothing ambient authenticates
them: a request with the signed-in cookies but no x-api-key is a 401.
"""

from __future__ import annotations

import secrets

import pytest
from sqlalchemy import select

from service.imports import import_jobs
from service.org import accounts, admin, keys
from service.settings import password_links
from service.store.db import session_scope
from service.store.models import ApiKey, PasswordLink, Tag, User, new_uuid
from tests.support.security import make_org, row_keys, start_site, tag_rows

STATE_CHANGING = {"POST", "PUT", "PATCH", "DELETE"}
DASHBOARD_SENTENCE = "security check expired"
SETTINGS_SENTENCE = "That form has expired"
ROWS = [("winter boots", "en", "US", []), ("regenjacke", "de", "DE", [])]


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("csrf"), sqlite_template)
    site.org = make_org(site.service_app, "Acme", {"Shop search": ROWS},
                        {"brand": "#1f77b4"}, email="ann@acme.example")
    yield site
    site.stop()


def signed_in_visitor(site):
    visitor = site.visitor()
    assert visitor.sign_in(site.org.key).status_code == 303
    assert visitor.settings_sign_in(site.org.email).status_code == 303
    return visitor


def spare_key_id(site) -> int:
    """A key of the organization that a revoke may aim at."""
    with session_scope(site.service_app) as session:
        key = admin.create_key(session, site.org.org_id, "tdk", name="spare")
        return session.scalar(select(ApiKey.id).where(ApiKey.key_hash == keys.digest(key)))


def waiting_import(site, project_id: str) -> str:
    """An upload waiting for its columns to be chosen, that the columns form may aim at."""
    with session_scope(site.service_app) as session:
        return import_jobs.create(session, site.org.org_id, project_id, None, None,
                                  "waiting.csv", 1, new_uuid(), "test",
                                  import_jobs.CHOOSING).id


def spare_person(site) -> tuple[int, str]:
    """An administrator of the organization that a removal may aim at, added with a one-time
    link: (their id, the link's token)."""
    with session_scope(site.service_app) as session:
        user_id = accounts.create_user(session, site.org.org_id,
                                       f"spare-{secrets.token_hex(4)}@acme.example",
                                       "a long enough password")
        token, _ = password_links.issue(session, user_id)
        return user_id, token


def state_changing_routes(app, prefix_filter=lambda rule: True) -> list[tuple[object, str]]:
    found = [(rule, method) for rule in app.url_map.iter_rules() if prefix_filter(rule.rule)
             for method in sorted(rule.methods & STATE_CHANGING)]
    # Signing out goes last: the positive control really signs out.
    return sorted(found, key=lambda pair: pair[0].endpoint.endswith("signout"))


def url_for_rule(app, rule, method: str, values: dict) -> str:
    missing = set(rule.arguments) - set(values)
    assert not missing, (f"{rule.rule}: give this test a value for {sorted(missing)} so the "
                         "route is checked with a real, reachable target")
    adapter = app.url_map.bind("localhost")
    return adapter.build(rule.endpoint, {name: values[name] for name in rule.arguments},
                         method=method)


def csrf_refusal(response, visitor, settings_area: bool) -> bool:
    """Whether the response is the CSRF check's refusal (and not anything else)."""
    if settings_area:
        return response.status_code == 400 and SETTINGS_SENTENCE in response.text
    if response.status_code == 400:
        return DASHBOARD_SENTENCE in response.text
    if response.status_code == 303:  # a whole-page form: back, with the sentence flashed
        landed = visitor.get(response.headers["Location"], allow_redirects=True)
        return DASHBOARD_SENTENCE in landed.text
    return False


def test_every_state_changing_route_refuses_requests_without_the_sessions_token(site):
    visitor = signed_in_visitor(site)
    stranger = signed_in_visitor(site)  # another session: its tokens are not the visitor's
    project_id = site.org.project_id
    tag_id = site.org.tags["Shop search"]["brand"]
    edit_id = tag_rows(visitor, project_id, tag_id, row_keys(visitor, project_id)[:1])
    values = {"project_id": project_id, "edit_id": edit_id, "key_id": spare_key_id(site),
              "tag_id": tag_id, "view_id": "1", "rule_id": "1",
              "import_id": waiting_import(site, project_id)}
    values["user_id"], values["token"] = spare_person(site)
    foreign = {"dashboard": stranger.token(f"/projects/{project_id}/queries"),
               "settings": stranger.token("/settings/api/generate")}

    dashboard = state_changing_routes(site.app)
    settings = state_changing_routes(site.service_app, lambda rule: not rule.startswith("/api/"))
    endpoints = {rule.endpoint for rule, _ in dashboard + settings}
    assert {"auth.signin", "auth.signout", "bulk.apply", "bulk.confirm", "bulk.undo",
            "export.start", "views.create", "views.delete", "rules.create", "rules.pause",
            "rules.delete", "settings.signin", "settings.generate",
            "settings.revoke"} <= endpoints, endpoints

    checked = []
    for app, routes, area in ((site.app, dashboard, "dashboard"),
                              (site.service_app, settings, "settings")):
        for rule, method in routes:
            url = url_for_rule(app, rule, method, values)
            for token in (None, foreign[area], ""):
                form = {"action": "add", "apply_tag": str(tag_id), "scope": "all",
                        "name": "sneaky", "form_token": "x" * 20, "email": site.org.email,
                        "api_key": site.org.key}
                if token is not None:
                    form["csrf_token"] = token
                for htmx in ({}, {"HX-Request": "true"}):
                    response = visitor.request(method, url, data=form, headers=htmx)
                    assert csrf_refusal(response, visitor, area == "settings"), (
                        f"{method} {url} accepted a request without the session's token "
                        f"(token {token!r}, headers {htmx}): {response.status_code} "
                        f"{response.text[:300]}")
            checked.append((area, method, url))

    # Nothing the refused requests aimed at has changed: still signed in to both, the edit
    # not undone, the spare key not revoked.
    assert visitor.get(f"/projects/{project_id}/queries").status_code == 200
    assert visitor.get("/settings/api").status_code == 200
    store = site.app.extensions["tagdesk_jobs"]
    assert store.get(edit_id).undone_by is None
    with session_scope(site.service_app) as session:
        assert session.get(ApiKey, values["key_id"]).revoked_at is None
        assert session.get(User, values["user_id"]) is not None
        assert session.scalar(select(PasswordLink.used_at).where(
            PasswordLink.user_id == values["user_id"])) is None
        assert session.get(Tag, tag_id).name == "brand"  # neither edited nor deleted
    assert len(checked) == len(dashboard) + len(settings)

    # The positive control: with the token the same requests get past the check (whatever
    # they then answer), so the refusals above were the check's doing.
    for app, routes, area in ((site.app, dashboard, "dashboard"),
                              (site.service_app, settings, "settings")):
        for rule, method in routes:
            url = url_for_rule(app, rule, method, values)
            page = f"/projects/{project_id}/queries" if area == "dashboard" \
                else "/settings/api/generate"
            token = visitor.token(page)
            response = visitor.request(method, url, data={"csrf_token": token},
                                       headers={"HX-Request": "true"})
            assert not csrf_refusal(response, visitor, area == "settings"), (method, url)


def test_the_api_is_exempt_because_cookies_never_authenticate_it(site):
    visitor = signed_in_visitor(site)
    routes = state_changing_routes(site.service_app, lambda rule: rule.startswith("/api/"))
    assert routes
    for rule, method in routes:
        response = visitor.request(method, rule.rule, json={"queries": []},
                                   headers={"x-project-id": site.org.project_id})
        assert response.status_code == 401, (method, rule.rule, response.text)
        assert "Set-Cookie" not in response.headers
