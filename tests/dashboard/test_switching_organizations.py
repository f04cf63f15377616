"""Signing out and in again with another organization's key lands on that key's projects,
never on the previous organization's project: neither its last-used cookie nor a `next` kept
from the old session (the back button to a project page, then sign-in) leads there."""

from __future__ import annotations

import pytest

from service.org import admin
from tests.support.dashboard import project_url


@pytest.fixture
def second_org(shop):
    """Another organization with two projects: (key, {project ids})."""
    org_id, key, first = shop.new_org("Second org")
    second = shop.run(lambda s: admin.create_project(s, org_id, "Second project"))
    return key, {first, second}


def test_signing_in_with_another_key_lands_on_its_projects(auth, shop, second_org):
    key, their_projects = second_org
    auth.sign_in()
    assert auth.client.get(project_url(shop)).status_code == 200  # the last project used
    auth.sign_out()

    landed = auth.sign_in(key=key)
    assert landed.status_code == 303
    start = auth.client.get(landed.headers["Location"])
    assert start.headers["Location"] == "/projects"
    page = auth.client.get("/projects").get_data(as_text=True)
    assert "Second project" in page and "Their project" in page
    assert shop.project_id not in page


def test_a_page_of_the_previous_organization_is_not_where_sign_in_leads(auth, shop,
                                                                         second_org):
    key, their_projects = second_org
    view = project_url(shop, query="q=shoes")
    auth.sign_in()
    assert auth.client.get(view).status_code == 200
    auth.sign_out()

    # The back button: the old project's page asks for sign-in, with it as `next`.
    asked = auth.client.get(view)
    assert asked.headers["Location"].startswith("/signin?next=")
    landed = auth.client.post(asked.headers["Location"], data={
        "csrf_token": auth.token(asked.headers["Location"]), "api_key": key})
    assert landed.status_code == 303
    assert landed.headers["Location"] == "/projects"
    page = auth.client.get("/projects").get_data(as_text=True)
    assert "That page belongs to a project this key cannot open." in page
    assert "Second project" in page


def test_a_page_of_the_same_organization_is_still_where_sign_in_leads(auth, shop):
    view = project_url(shop, suffix="tags")
    asked = auth.client.get(view)
    landed = auth.client.post(asked.headers["Location"], data={
        "csrf_token": auth.token(asked.headers["Location"]), "api_key": shop.key})
    assert landed.headers["Location"] == view
