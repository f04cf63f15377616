"""Organization settings → Projects, as routes: the projects with their query counts (read
from the counters), a new project, renaming, the project's tags with their counts, a new tag,
editing and deleting a tag (after a confirmation), each change on record — and the API over
real HTTP showing the result. Another organization's ids are 404; hostile names are escaped
or refused with a sentence.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest
from sqlalchemy import select, text

from service.api.query_filters import list_queries
from service.bodies.validation import QueryListBody
from service.engine.held import Held
from service.engine.tables import Query, query_tags
from service.org import accounts, admin, palette
from service.settings import project_changes
from service.settings.project_forms import colour_code
from service.store.models import OrgEvent, Project, Tag
from tests.service.counters import assert_counters_exact
from tests.support.api import Api

EMAIL = "ann.admin@example.com"
PASSWORD = "correct horse battery staple"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
OLD = datetime(2020, 1, 2, 3, 4, 5)
OLD_STAMP = "2020-01-02T03:04:05.000Z"


class Settings:
    """A browser-like test client for /settings, signed in as the world's administrator."""

    def __init__(self, app, world):
        self.app = app
        self.world = world
        self.client = app.test_client()

    def page(self, path: str):
        return self.client.get(path)

    def html(self, path: str) -> str:
        response = self.page(path)
        assert response.status_code == 200, response.status_code
        return response.get_data(as_text=True)

    def token(self, path: str) -> str:
        return CSRF_FIELD.search(self.page(path).get_data(as_text=True)).group(1)

    def post(self, path: str, data: dict | None = None, csrf_from: str = "/settings/projects"):
        return self.client.post(path, data={"csrf_token": self.token(csrf_from), **(data or {})})

    def sign_in(self, email=EMAIL):
        return self.client.post("/settings/signin", data={
            "csrf_token": self.token("/settings/signin"), "email": email, "password": PASSWORD})

    # The pages' forms.
    def create_project(self, name):
        return self.post("/settings/projects", {"name": name})

    def rename(self, project_id, name):
        return self.post(f"/settings/projects/{project_id}/rename", {"name": name})

    def create_tag(self, project_id, name, color):
        return self.post(f"/settings/projects/{project_id}/tags", {"name": name, "color": color})

    def edit_tag(self, project_id, tag_id, name, color):
        return self.post(f"/settings/projects/{project_id}/tags/{tag_id}/edit",
                         {"name": name, "color": color})

    def delete_tag(self, project_id, tag_id):
        return self.post(f"/settings/projects/{project_id}/tags/{tag_id}/delete")

    def follow(self, response) -> str:
        assert response.status_code == 303, response.get_data(as_text=True)
        return self.html(response.headers["Location"])


@pytest.fixture
def signed_in(service_app, world) -> Settings:
    settings = Settings(service_app, world.with_administrator(EMAIL, PASSWORD))
    assert settings.sign_in().status_code == 303
    return settings


def project_url(project_id: str) -> str:
    return f"/settings/projects/{project_id}"


def changes(world) -> list[OrgEvent]:
    return world.run(lambda s: list(s.scalars(select(OrgEvent).order_by(OrgEvent.id))))


def notice(html: str) -> str:
    match = re.search(r'<div class="notice notice--success" role="status"><p>(.*?)</p>', html,
                      re.S)
    return match.group(1) if match else ""


def field_error(html: str) -> str:
    match = re.search(r'<p class="field__error" id="[^"]+">(.*?)</p>', html, re.S)
    return match.group(1) if match else ""


def tag_rows(html: str) -> dict[str, tuple[int, str, str]]:
    """The project page's tags: name → (id, colour attribute, number of queries)."""
    rows = re.findall(r'<tr role="row" data-tag-id="(\d+)">\s*<td role="cell" class="col-tag">'
                      r'<span class="tag-chip" data-chip-colour="([^"]*)">(.*?)</span></td>.*?'
                      r'<td role="cell" class="col-count"><span class="stack-label" '
                      r'aria-hidden="true">Queries: </span>([\d,]+)</td>', html, re.S)
    return {name: (int(tag_id), colour, count) for tag_id, colour, name, count in rows}


def api_tags(api) -> dict[str, dict]:
    answer = api.tags(limit=1000)
    assert answer.status_code == 200, answer.text
    return {tag["name"]: tag for tag in answer.json()["results"]}


def api_queries(api, **body) -> dict[str, dict]:
    answer = api.queries(limit=1000, **body)
    assert answer.status_code == 200, answer.text
    return {row["query"]: row for row in answer.json()["results"]}


def age_queries(world):
    """Every query last changed long ago, so that a change now is plain to see. Written around
    the engine: each project is read once, which builds its bitmaps again."""
    world.run(lambda s: s.execute(text("UPDATE queries SET updated_at = :old"), {"old": OLD}))
    for project_id in (world.project_id, world.other_project_id):
        world.run(lambda s, p=project_id: list_queries(s, p, QueryListBody(), Held()))


# --- signing in -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/settings/projects", "/settings/projects/x",
                                  "/settings/projects/x/tags/1/edit",
                                  "/settings/projects/x/tags/1/delete"])
def test_every_projects_page_asks_to_sign_in_first(service_app, world, path):
    response = service_app.test_client().get(path)
    assert response.status_code == 303
    assert response.headers["Location"] == f"/settings/signin?next={path}"


def test_the_navigation_leads_to_projects(signed_in):
    page = signed_in.html("/settings/api")
    assert '<a href="/settings/projects">Projects</a>' in page
    assert '<a href="/settings/projects" aria-current="page">Projects</a>' in signed_in.html(
        "/settings/projects")


# --- the projects and their counts -----------------------------------------------------------


def test_the_projects_list_shows_query_counts_from_the_counters(signed_in, statements):
    world = signed_in.world
    world.add_queries([(f"query {i}", "en", "US", ["brand"] if i % 2 else []) for i in range(7)])
    world.add_queries([("help", "en", "GB", [])], project_id=world.other_project_id)
    statements.clear()
    page = signed_in.html("/settings/projects")
    rows = re.findall(r'<a href="/settings/projects/([^"]+)">(.*?)</a></td>\s*'
                      r'<td class="col-count">([\d,]+)</td>\s*<td class="col-count">([\d,]+)</td>',
                      page)
    assert rows == [(world.other_project_id, "Help centre", "1", "0"),
                    (world.project_id, "Shop search", "7", "4")]
    # The counts are the projects' counters: no statement reads the queries table.
    assert not [s for s in statements if re.search(r"\bFROM queries\b|\bJOIN queries\b", s)]


def test_the_projects_list_is_the_organizations_own(signed_in):
    _, _, theirs = signed_in.world.new_org()
    page = signed_in.html("/settings/projects")
    assert "Their project" not in page and theirs not in page


# --- creating and renaming projects ---------------------------------------------------------


def test_create_a_project_on_record_and_in_the_api(signed_in, api):
    world = signed_in.world
    response = signed_in.create_project("  Spring sale  ")
    assert response.status_code == 303
    project_id = response.headers["Location"].split("/")[3].split("?")[0]
    page = signed_in.follow(response)
    assert notice(page) == "The project “Spring sale” is created. You can add its tags below."
    assert '<h1 class="project-title">Spring sale</h1>' in page
    assert "0 queries and 0 tags." in page

    stored = world.run(lambda s: s.get(Project, project_id))
    assert (stored.org_id, stored.name) == (world.org_id, "Spring sale")
    event = changes(world)[-1]
    assert (event.action, event.subject, event.user_id, event.actor_email) == (
        "project.created", "Spring sale", world.user_id, EMAIL)
    assert {p["name"]: p["id"] for p in api.projects().json()["results"]}["Spring sale"] == (
        project_id)
    listed = signed_in.html("/settings/projects")
    assert f'<a href="/settings/projects/{project_id}">Spring sale</a>' in listed
    # The notice is for the person who made the change, once they land on the page.
    assert notice(signed_in.html(project_url(project_id))) == ""


@pytest.mark.parametrize("name", ["Shop search", "shop SEARCH", "  Shop search ", "SHOP SEARCH"])
def test_a_project_name_the_organization_has_is_refused(signed_in, name):
    response = signed_in.create_project(name)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert field_error(page) == ("Your organization already has a project named “Shop search”. "
                                 "Please choose a different name.")
    assert 'aria-invalid="true"' in page
    assert len(signed_in.world.run(lambda s: s.scalars(select(Project)).all())) == 2
    assert changes(signed_in.world) == []


def test_another_organizations_project_names_are_free(signed_in):
    signed_in.world.new_org()  # it has "Their project"
    assert signed_in.create_project("Their project").status_code == 303


@pytest.mark.parametrize("name,sentence", [
    ("", "Please give the project a name."),
    ("   ", "Please give the project a name."),
    ("x" * 201, "The name can be at most 200 characters long."),
    ("Line\nbreak", "The name cannot contain control characters, such as line breaks or tabs."),
    ("Tab\there", "The name cannot contain control characters, such as line breaks or tabs."),
    ("Null\x00byte", "The name cannot contain control characters, such as line breaks or tabs."),
])
def test_unusable_project_names_are_refused_with_a_sentence(signed_in, name, sentence):
    response = signed_in.create_project(name)
    assert response.status_code == 400
    assert field_error(response.get_data(as_text=True)) == sentence
    assert changes(signed_in.world) == []


def test_a_hostile_project_name_is_shown_as_text(signed_in):
    name = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    page = signed_in.follow(signed_in.create_project(name))
    assert "<script>alert" not in page and "<img src=x" not in page
    assert ("&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
            "&lt;img src=x onerror=alert(1)&gt;") in page
    listed = signed_in.html("/settings/projects")
    assert "<script>alert" not in listed and "&lt;script&gt;" in listed


def test_rename_a_project(signed_in, api):
    world = signed_in.world
    url = project_url(world.project_id)
    page = signed_in.follow(signed_in.rename(world.project_id, "Shop search (DE)"))
    assert notice(page) == "The project is renamed “Shop search (DE)”."
    assert 'value="Shop search (DE)"' in page
    event = changes(world)[-1]
    assert (event.action, event.subject, event.detail) == (
        "project.renamed", "Shop search (DE)", "Renamed from “Shop search”.")
    assert "Shop search (DE)" in [p["name"] for p in api.projects().json()["results"]]

    # Its own name, in other capitals: allowed. Another project's name: refused.
    assert signed_in.rename(world.project_id, "shop search (de)").status_code == 303
    refused = signed_in.rename(world.project_id, "help CENTRE")
    assert refused.status_code == 400
    assert field_error(refused.get_data(as_text=True)) == (
        "Your organization already has a project named “Help centre”. Please choose a "
        "different name.")
    # The same name again: nothing to record.
    count = len(changes(world))
    response = signed_in.rename(world.project_id, "shop search (de)")
    assert response.headers["Location"] == url
    assert len(changes(world)) == count
    bad = signed_in.rename(world.project_id, "")
    assert bad.status_code == 400
    assert field_error(bad.get_data(as_text=True)) == "Please give the project a name."


# --- tags: create ---------------------------------------------------------------------------


def test_create_a_tag_on_record_and_in_the_api(signed_in, api):
    world = signed_in.world
    response = signed_in.create_tag(world.project_id, " Winter <sale> ", "  00AA5F ")
    assert response.headers["Location"].endswith("#tags")
    page = signed_in.follow(response)
    assert notice(page) == "The tag “Winter &lt;sale&gt;” is created."
    tag_id, colour, count = tag_rows(page)["Winter &lt;sale&gt;"]
    assert (colour, count) == ("#00aa5f", "0")
    assert api_tags(api)["Winter <sale>"] == {
        "id": tag_id, "project": world.project_id, "name": "Winter <sale>", "color": "#00aa5f"}
    event = changes(world)[-1]
    assert (event.action, event.subject, event.detail, event.user_id) == (
        "tag.created", "Winter <sale>", "In “Shop search”, colour #00aa5f.", world.user_id)


def test_the_new_tag_form_suggests_a_colour_from_the_palette(signed_in):
    page = signed_in.html(project_url(signed_in.world.project_id))
    suggested = re.search(r'id="tag-colour" name="color" value="([^"]+)"', page).group(1)
    assert suggested == palette.PALETTE[0]  # the world's tags use none of the palette


@pytest.mark.parametrize("name", ["brand", "BRAND", " Brand ", "bRaNd", "brand\u200b",
                                  "b\u200crand", "\ufeffBrand", "\uff42\uff52\uff41\uff4e\uff44"])
def test_a_tag_name_the_project_has_is_refused_without_regard_to_case(signed_in, name):
    world = signed_in.world
    response = signed_in.create_tag(world.project_id, name, "#123456")
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert field_error(page) == (
        "This project already has a tag named “brand” (names are compared as they read: "
        "capital letters and invisible characters make no difference). Please choose a "
        "different name.")
    assert 'value="#123456"' in page  # what was typed stays
    assert changes(world) == []
    # The same name in another project is a different tag.
    assert signed_in.create_tag(world.other_project_id, name, "#123456").status_code == 303


def test_tag_names_are_compared_as_the_api_compares_them(signed_in, api):
    world = signed_in.world
    created = api.call("POST", "/api/tags/create", json={"name": "Straße", "color": "#112233"})
    assert created.status_code == 201
    response = signed_in.create_tag(world.project_id, "STRASSE", "#123456")
    assert response.status_code == 400
    assert "already has a tag named “Straße”" in field_error(response.get_data(as_text=True))


@pytest.mark.parametrize("colour", [
    "", "red", "#12345", "#1234567", "#12345g", "rgb(1,2,3)", "#fff",
    '#123456" onmouseover="alert(1)', "#123456;background:url(x)", "javascript:alert(1)",
])
def test_colours_that_are_not_rrggbb_are_refused_before_any_style(signed_in, colour):
    world = signed_in.world
    response = signed_in.create_tag(world.project_id, "Fresh", colour)
    assert response.status_code == 400
    page = response.get_data(as_text=True)
    assert field_error(page) in (
        "Please choose a colour.",
        "Please enter the colour as # followed by six digits or letters from a to f, such as "
        "#1f77b4.")
    # The preview gets no colour at all, and nothing typed escapes its attribute.
    assert 'data-colour-preview data-chip-colour=""' in page
    assert 'onmouseover="alert' not in page
    assert world.run(lambda s: s.scalar(select(Tag).where(Tag.name == "Fresh"))) is None


@pytest.mark.parametrize("name,sentence", [
    ("", "Please give the tag a name."),
    ("a\tb", "The name cannot contain control characters, such as line breaks or tabs."),
    ("x" * 201, "The name can be at most 200 characters long."),
    ("ß" * 150, "The name can be at most 200 characters long (some letters count twice, as "
                "“ß” does)."),
    ("brand\u202e", "The name must not contain characters that change the direction of the "
                    "text (U+202A–U+202E, U+2066–U+2069)."),
    ("\u200b\u2060", "The name must contain a visible character."),
])
def test_unusable_tag_names_are_refused_with_a_sentence(signed_in, name, sentence):
    response = signed_in.create_tag(signed_in.world.project_id, name, "#123456")
    assert response.status_code == 400
    assert field_error(response.get_data(as_text=True)) == sentence


def test_the_contrast_check_is_the_wcag_rule_and_never_fails_for_black_or_white():
    """The server-side check behind the warning: black or white text on the colour must
    reach 4.5:1. By the WCAG formula the better of the two never falls below ~4.58:1, so
    the warning cannot show for any #rrggbb colour — its worst cases included."""
    assert project_changes.readable("#5d60ff")  # about the worst: 4.58:1 with black
    assert project_changes.readable("#777777") and project_changes.readable("#000000")
    for colour in ("#5d60ff", "#767676", "#777777", "#0052cc", "#ffffff", "#000000"):
        best = max(palette.contrast_ratio(colour, "#000000"),
                   palette.contrast_ratio(colour, "#ffffff"))
        assert best >= 4.58
    assert colour_code("#ABCDEF") == colour_code("abcdef") == "#abcdef"
    assert colour_code("#abc") is None and colour_code(None) is None


# --- tags: edit -------------------------------------------------------------------------------


def test_edit_a_tag_keeps_its_id_and_its_queries(signed_in, api):
    world = signed_in.world
    world.add_queries([("red shoes", "en", "US", ["brand", "sale"]), ("blue", "en", "US", [])])
    age_queries(world)
    brand = world.tags["brand"]
    form = signed_in.html(f"{project_url(world.project_id)}/tags/{brand}/edit")
    assert "<h1>Edit the tag “brand”</h1>" in form
    assert 'id="tag-name" name="name" value="brand"' in form
    assert 'id="tag-colour" name="color" value="#1f77b4"' in form

    page = signed_in.follow(signed_in.edit_tag(world.project_id, brand, "Brand name", "#0B5394"))
    assert notice(page) == "The tag “Brand name” is saved."
    assert tag_rows(page)["Brand name"] == (brand, "#0b5394", "1")
    assert "brand" not in tag_rows(page)
    assert api_tags(api)["Brand name"] == {"id": brand, "project": world.project_id,
                                           "name": "Brand name", "color": "#0b5394"}
    rows = api_queries(api)
    assert sorted(rows["red shoes"]["tags"]) == sorted([brand, world.tags["sale"]])
    assert rows["red shoes"]["updatedAt"] == OLD_STAMP  # the query's tags did not change
    event = changes(world)[-1]
    assert (event.action, event.subject, event.detail) == (
        "tag.edited", "Brand name",
        "In “Shop search”: renamed from “brand”; colour #1f77b4 changed to #0b5394.")
    assert world.run(lambda s: s.get(Tag, brand).name_folded) == "brand name"
    assert_counters_exact(world)


def test_edit_a_tag_refuses_another_tags_name_and_allows_its_own(signed_in):
    world = signed_in.world
    brand = world.tags["brand"]
    refused = signed_in.edit_tag(world.project_id, brand, "SALE", "#1f77b4")
    assert refused.status_code == 400
    page = refused.get_data(as_text=True)
    assert "already has a tag named “sale”" in field_error(page)
    assert "<h1>Edit the tag “brand”</h1>" in page and 'value="SALE"' in page
    # Its own name in other capitals: a rename.
    assert signed_in.edit_tag(world.project_id, brand, "BRAND", "#1f77b4").status_code == 303
    assert world.run(lambda s: s.get(Tag, brand).name) == "BRAND"
    # Nothing changed: nothing recorded.
    count = len(changes(world))
    assert signed_in.edit_tag(world.project_id, brand, "BRAND", "#1F77B4").status_code == 303
    assert len(changes(world)) == count
    bad = signed_in.edit_tag(world.project_id, brand, "BRAND", "blue")
    assert bad.status_code == 400
    assert world.run(lambda s: s.get(Tag, brand).color) == "#1f77b4"


# --- tags: delete -----------------------------------------------------------------------------


def test_delete_a_tag_after_a_confirmation(signed_in, api):
    world = signed_in.world
    tags = world.tags
    world.add_queries([("red shoes", "en", "US", ["brand", "sale"]),
                       ("blue shoes", "de", "DE", ["brand"]),
                       ("green shoes", "en", "US", ["sale"]),
                       ("socks", "fr", "FR", [])])
    world.add_queries([("help", "en", "GB", [])], project_id=world.other_project_id)
    age_queries(world)
    url = f"{project_url(world.project_id)}/tags/{tags['brand']}/delete"
    assert tag_rows(signed_in.html(project_url(world.project_id)))["brand"][2] == "2"

    confirm = signed_in.html(url)
    assert "<h1 id=\"delete-heading\">Delete the tag “brand”?</h1>" in confirm
    assert "2 queries carry this tag." in confirm
    assert "Delete tag</button>" in confirm
    # Asking is not doing.
    assert api_queries(api, tagIds=[tags["brand"]]).keys() == {"red shoes", "blue shoes"}

    response = signed_in.post(url, csrf_from=url)
    page = signed_in.follow(response)
    assert notice(page) == ("The tag “brand” is deleted. It was removed from 2 queries of "
                            "“Shop search”.")
    assert "brand" not in tag_rows(page)
    assert tag_rows(page)["sale"][2] == "2"

    # The API: the tag is gone, the queries that carried it lost it and changed now; the
    # others did not change.
    assert "brand" not in api_tags(api)
    rows = api_queries(api)
    assert rows["red shoes"]["tags"] == [tags["sale"]]
    assert rows["blue shoes"]["tags"] == []
    assert rows["red shoes"]["updatedAt"] != OLD_STAMP
    assert rows["red shoes"]["updatedAt"] == rows["blue shoes"]["updatedAt"]
    assert rows["green shoes"]["updatedAt"] == rows["socks"]["updatedAt"] == OLD_STAMP
    newest = api.queries(sort=[{"field": "updatedAt", "direction": "desc"}], limit=2).json()
    assert {row["query"] for row in newest["results"]} == {"red shoes", "blue shoes"}
    assert api.queries(tagIds=[tags["sale"]]).json()["page"]["totalRecords"] == 2
    assert api.queries(tagIds=[tags["brand"]]).json()["page"]["totalRecords"] == 0
    assert api.queries().json()["page"]["totalRecords"] == 4
    assert world.run(lambda s: s.scalar(select(text("count(*)")).select_from(query_tags).where(
        query_tags.c.tag_id == tags["brand"]))) == 0
    assert_counters_exact(world)

    event = changes(world)[-1]
    assert (event.action, event.subject, event.detail, event.actor_email) == (
        "tag.deleted", "brand", "It was removed from 2 queries of “Shop search”.", EMAIL)
    # Gone: its pages are 404, and deleting again changes nothing.
    assert signed_in.page(url).status_code == 404
    assert signed_in.client.post(url, data={
        "csrf_token": signed_in.token("/settings/projects")}).status_code == 404
    assert len([e for e in changes(world) if e.action == "tag.deleted"]) == 1


def test_delete_a_tag_no_query_carries(signed_in, api):
    world = signed_in.world
    url = f"{project_url(world.project_id)}/tags/{world.tags['local']}/delete"
    assert "No query carries this tag." in signed_in.html(url)
    page = signed_in.follow(signed_in.post(url, csrf_from=url))
    assert notice(page) == "The tag “local” is deleted. It was on no queries of “Shop search”."
    assert "local" not in api_tags(api)


def test_deleting_one_of_many_keeps_every_counter_exact(signed_in, api):
    world = signed_in.world
    names = list(world.tags)
    world.add_queries([(f"query {i}", ["en", "de"][i % 2], ["US", "DE", "AT"][i % 3],
                        [names[j] for j in range(4) if (i >> j) & 1]) for i in range(256)])
    before = api_tags(api)
    url = f"{project_url(world.project_id)}/tags/{world.tags['sale']}/delete"
    assert "128 queries carry this tag." in signed_in.html(url)
    signed_in.follow(signed_in.post(url, csrf_from=url))
    assert_counters_exact(world)
    after = api_tags(api)
    assert set(before) - set(after) == {"sale"}
    for name in ("brand", "question", "local"):
        assert api.queries(tagIds=[world.tags[name]]).json()["page"]["totalRecords"] == 128
    assert api.queries(query="query 1").json()["page"]["totalRecords"] == 111  # 1, 10-19, 100-199


def test_deleting_a_tag_while_its_queries_are_retagged_stays_exact(signed_in, api):
    """Set-tags calls that take the tag off its queries, or put it on others, while it is
    deleted: the deletion waits for them (or is tried again), a call that comes too late to
    add it is told the tag is not there (400, never a 500), and every counter is exact."""
    world = signed_in.world
    tags = world.tags
    rows = [(f"query {i}", "en", "US", ["brand"] if i % 2 else ["brand", "sale"])
            for i in range(60)]
    world.add_queries(rows)
    url = f"{project_url(world.project_id)}/tags/{tags['brand']}/delete"
    token = signed_in.token(url)
    choices = [[tags["sale"]], [tags["sale"], tags["brand"]], [tags["question"]]]

    def retag(worker: int) -> list[tuple[int, str]]:
        client = Api(api.base_url, world.key, world.project_id)
        answers = []
        for round_ in range(4):
            answer = client.set_tags([
                {"query": q, "language": "en", "country": "US",
                 "tagIds": choices[(worker + round_) % 3]}
                for q, *_ in rows[worker * 10:(worker + 1) * 10]])
            answers.append((answer.status_code, answer.text))
        return answers

    with ThreadPoolExecutor(7) as pool:
        retagging = [pool.submit(retag, worker) for worker in range(6)]
        deletion = pool.submit(lambda: signed_in.client.post(url, data={"csrf_token": token}))
        answers = [a for future in retagging for a in future.result()]
        deleted = deletion.result()
    assert deleted.status_code == 303, deleted.get_data(as_text=True)
    for status, body in answers:
        assert status == 200 or (status == 400 and (
            f"Tag {tags['brand']} is not a tag of this project." in body)), (status, body)
    assert world.run(lambda s: s.get(Tag, tags["brand"])) is None
    assert_counters_exact(world)
    assert "brand" not in api_tags(api)
    assert all(tags["brand"] not in row["tags"] for row in api_queries(api).values())


# --- safety -----------------------------------------------------------------------------------


def test_another_organizations_projects_and_tags_are_404(signed_in):
    world = signed_in.world
    _, _, theirs = world.new_org()
    their_tag = world.run(lambda s: admin.create_tag(s, theirs, "private", "#123456"))
    mine, my_tag = world.project_id, world.tags["brand"]
    token = signed_in.token("/settings/projects")
    gets = [project_url(theirs), f"{project_url(theirs)}/tags/{their_tag}/edit",
            f"{project_url(theirs)}/tags/{their_tag}/delete",
            # Their tag under my project, my tag under my other project.
            f"{project_url(mine)}/tags/{their_tag}/edit",
            f"{project_url(mine)}/tags/{their_tag}/delete",
            f"{project_url(world.other_project_id)}/tags/{my_tag}/delete",
            project_url("not-a-project"), project_url("x" * 500),
            # Ids are compared as the service writes them (on PostgreSQL, as uuids).
            project_url(mine.upper()), project_url(mine + "0"), f"{project_url(mine)[:-1]}g",
            f"{project_url(mine)}/tags/99999999999999/edit",
            f"{project_url(mine)}/tags/0/delete"]
    for path in gets:
        assert signed_in.page(path).status_code == 404, path
    posts = {f"{project_url(theirs)}/rename": {"name": "Mine now"},
             f"{project_url(theirs)}/tags": {"name": "Mine", "color": "#123456"},
             f"{project_url(theirs)}/tags/{their_tag}/edit": {"name": "x", "color": "#123456"},
             f"{project_url(theirs)}/tags/{their_tag}/delete": {},
             f"{project_url(mine)}/tags/{their_tag}/edit": {"name": "x", "color": "#123456"},
             f"{project_url(mine)}/tags/{their_tag}/delete": {}}
    for path, data in posts.items():
        response = signed_in.client.post(path, data={"csrf_token": token, **data})
        assert response.status_code == 404, path
        assert "Page not found" in response.get_data(as_text=True)
    assert world.run(lambda s: s.get(Project, theirs).name) == "Their project"
    assert world.run(lambda s: s.get(Tag, their_tag).name) == "private"
    assert changes(world) == []


def test_forms_without_their_csrf_token_change_nothing(signed_in):
    world = signed_in.world
    url = f"{project_url(world.project_id)}/tags/{world.tags['brand']}/delete"
    for path, data in [("/settings/projects", {"name": "Forged"}),
                       (f"{project_url(world.project_id)}/rename", {"name": "Forged"}),
                       (f"{project_url(world.project_id)}/tags", {"name": "x", "color": "#123456"}),
                       (url, {})]:
        response = signed_in.client.post(path, data=data)
        assert response.status_code == 400
        assert "That form has expired" in response.get_data(as_text=True)
    assert world.run(lambda s: s.get(Tag, world.tags["brand"])) is not None
    assert changes(world) == []


def test_a_notice_shows_only_the_persons_own_change(signed_in, service_app):
    world = signed_in.world
    location = signed_in.create_project("Mine").headers["Location"]
    other_email = "bob@example.com"
    world.run(lambda s: accounts.create_user(s, world.org_id, other_email, PASSWORD))
    bob = Settings(service_app, world)
    assert bob.sign_in(email=other_email).status_code == 303
    assert notice(bob.html(location)) == ""
    assert notice(signed_in.html(location)) != ""
    base = location.split("?")[0]
    for odd in ("abc", "-1", "99999999999999999999", "²", "1e3"):
        assert notice(signed_in.html(f"{base}?done={odd}")) == ""


@pytest.mark.parametrize("query", ["page", "revoked", "done"])
def test_numbers_in_the_address_that_are_not_ascii_digits_are_ignored(signed_in, query):
    """"²" is a digit to str.isdigit but not to int(): a page, not a 500."""
    for path in ("/settings/activity", "/settings/api", project_url(signed_in.world.project_id)):
        assert signed_in.page(f"{path}?{query}=%C2%B2").status_code == 200, path


def test_a_tag_with_a_stored_colour_that_is_not_rrggbb_gets_no_colour(signed_in):
    """A colour stored by other means (an older import, a hand-made row) never reaches a
    data attribute that weblib/static/colour-field.js paints from."""
    world = signed_in.world
    world.run(lambda s: s.execute(text("UPDATE tags SET color = 'red' WHERE id = :id"),
                                  {"id": world.tags["brand"]}))
    page = signed_in.html(project_url(world.project_id))
    assert tag_rows(page)["brand"][1] == ""
    edit = signed_in.html(f"{project_url(world.project_id)}/tags/{world.tags['brand']}/edit")
    assert 'data-colour-preview data-chip-colour=""' in edit


def test_the_pages_carry_no_inline_script_or_style(signed_in):
    world = signed_in.world
    for path in ("/settings/projects", project_url(world.project_id),
                 f"{project_url(world.project_id)}/tags/{world.tags['brand']}/edit",
                 f"{project_url(world.project_id)}/tags/{world.tags['brand']}/delete"):
        response = signed_in.page(path)
        page = response.get_data(as_text=True)
        assert "style=" not in page and "<style" not in page
        assert not re.search(r"<script(?![^>]*\bsrc=)", page)
        assert "style-src 'self'" in response.headers["Content-Security-Policy"]


def test_the_queries_table_is_untouched_by_editing(signed_in):
    world = signed_in.world
    world.add_queries([("red shoes", "en", "US", ["brand"])])
    age_queries(world)
    signed_in.rename(world.project_id, "Renamed")
    signed_in.edit_tag(world.project_id, world.tags["brand"], "Renamed tag", "#000000")
    assert world.run(lambda s: s.scalar(select(Query.updated_at))) == OLD
