"""Every change to a tag is on the organization's record (the settings' Activity page), wherever
it was made: a tag created through the API (as the dashboard's picker creates it), by an import
that creates the tags it lacks (in the settings and on the command line), on the command line;
edited and merged through the API. Each entry says who and where from. Over real HTTP on a live
service, SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

import pytest
from sqlalchemy import select

from service.store.models import OrgEvent
from tests.support.api import Api
from tests.support.imports import Administrator

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def administrator(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def _text(cell: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<br>", " | ",
                                                    re.sub(r"<(?!br>)[^>]+>", "", cell)))).strip()


def activity(administrator: Administrator) -> list[tuple[str, str, str]]:
    """The settings' Activity rows, newest first: (who, action, what) as text."""
    page = administrator.get("/settings/activity").text
    rows = re.findall(r'class="col-who">(.*?)</td>\s*<td role="cell" class="col-did">(.*?)</td>'
                      r'\s*<td role="cell" class="col-what">(.*?)</td>', page, re.S)
    return [tuple(_text(cell) for cell in row) for row in rows]


def tag_events(world) -> list[tuple[str, str, str, int | None, str | None]]:
    """The record's tag changes, oldest first: (action, subject, detail, user, caller's label)."""
    return world.run(lambda s: [
        (e.action, e.subject, e.detail, e.user_id, e.actor_name) for e in s.scalars(
            select(OrgEvent).where(OrgEvent.org_id == world.org_id,
                                   OrgEvent.action.like("tag.%")).order_by(OrgEvent.id))])


def test_a_tag_created_through_the_api_as_the_dashboards_picker_does_is_recorded(
        live_service, world, administrator):
    api = Api(live_service.url, world.key, world.project_id)
    made = api.post("/api/tags/create", {"name": "Winter sale"},
                    **{"X-Tagdesk-Actor": quote("Ana Núñez", safe="")})
    assert made.status_code == 201, made.text
    refused = api.post("/api/tags/create", {"name": "winter SALE"})
    assert refused.status_code == 409  # refused: nothing to record
    (event,) = tag_events(world)
    assert event == ("tag.created", "Winter sale",
                     f"In “Shop search”, colour {made.json()['color']}. Through the API.",
                     None, "Ana Núñez")
    who, action, what = activity(administrator)[0]
    assert action == "Tag created" and what.startswith("Winter sale In “Shop search”")
    assert who.startswith("Key ") and who.endswith(f"…{world.key[-4:]} | Caller's label: Ana Núñez")


def test_tags_edited_and_merged_through_the_api_say_so(live_service, world, administrator):
    api = Api(live_service.url, world.key, world.project_id)
    edited = api.post("/api/tags/update", {"id": world.tags["sale"], "name": "Sale"})
    assert edited.status_code == 200, edited.text
    merged = api.post("/api/tags/merge", {"id": world.tags["sale"], "intoId": world.tags["brand"]})
    assert merged.status_code == 200, merged.text
    events = tag_events(world)
    assert [(action, subject) for action, subject, *_ in events] == [
        ("tag.edited", "Sale"), ("tag.merged", "Sale")]
    assert all(detail.endswith(" Through the API.") for _a, _s, detail, *_ in events), events
    assert [row[1] for row in activity(administrator)[:2]] == ["Tag merged", "Tag edited"]


def test_tags_an_import_in_the_settings_creates_are_recorded_with_its_file_and_person(
        world, administrator):
    columns = administrator.upload(world.project_id,
                                   "Keyword;Labels\nschuhe;brand|seasonal\nsocken;Outdoor\n",
                                   name="Queries.csv")
    started = administrator.post(columns, data={
        "csrf_token": administrator.csrf(columns), "query_column": "Keyword",
        "language": "de", "country": "DE", "tags_columns": "Labels",
        "tags_separator": "|", "create_tags": "1", "action": "import"})
    assert started.status_code == 303, started.text[:2000]
    assert administrator.finished(started.headers["Location"])["added"] == 2
    events = tag_events(world)
    assert [(action, subject, user) for action, subject, _d, user, _l in events] == [
        ("tag.created", "seasonal", world.user_id), ("tag.created", "Outdoor", world.user_id)]
    assert all(detail.endswith("By the import of “Queries.csv”.") for _a, _s, detail, *_ in
               events), events
    rows = activity(administrator)
    created = [row for row in rows if row[1] == "Tag created"]
    assert [(who, what.split(" In ")[0]) for who, _action, what in created] == [
        (EMAIL, "Outdoor"), (EMAIL, "seasonal")]


def test_tags_made_on_the_command_line_are_recorded_as_its_own(world, flask_cli, tmp_path,
                                                               administrator):
    path = tmp_path / "tags.csv"
    path.write_text("query,language,country,tags\na1,en,US,product;price\n", encoding="utf-8")
    checked = flask_cli("import-queries", world.project_id, path, "--create-tags", "--dry-run")
    assert checked.exit_code == 0, checked.output
    assert tag_events(world) == []  # a dry run changes nothing, its record included
    made = flask_cli("import-queries", world.project_id, path, "--create-tags")
    assert made.exit_code == 0, made.output
    alone = flask_cli("create-tag", world.project_id, "gift", "#00aa5f")
    assert alone.exit_code == 0, alone.output
    assert [(a, s, d, u) for a, s, d, u, _l in tag_events(world)] == [
        ("tag.created", "product", "In “Shop search”, colour "
         f"{_colour(world, 'product')}. By the import of “tags.csv”.", None),
        ("tag.created", "price", "In “Shop search”, colour "
         f"{_colour(world, 'price')}. By the import of “tags.csv”.", None),
        ("tag.created", "gift", "In “Shop search”, colour #00aa5f. On the command line.", None)]
    rows = [row for row in activity(administrator) if row[1] == "Tag created"]
    assert [(who, what.split(" In ")[0]) for who, _a, what in rows] == [
        ("Command line", "gift"), ("Command line", "price"), ("Command line", "product")]


def _colour(world, name: str) -> str:
    from service.store.models import Tag
    return world.run(lambda s: s.scalar(select(Tag.color).where(
        Tag.project_id == world.project_id, Tag.name == name)))
