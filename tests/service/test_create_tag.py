"""POST /api/tags/create — an extension of the reference API — over real HTTP, on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL: created and listed, colours chosen or picked from the
palette, duplicates, bad colours, hostile names, other organizations' projects, project-scoped
keys, rate limits, and creators racing for one name."""

from __future__ import annotations

import uuid

import pytest
import requests
import yaml
from sqlalchemy import select

from service.api.openapi import SPEC
from service.org import palette
from service.store.models import Tag
from tests.support.answers import assert_bad_request
from tests.support.api import Api, racing_statuses

CREATE = "/api/tags/create"
COLOR_SENTENCE = "'color': must be # followed by six hexadecimal digits, such as #1f77b4."


def create(api: Api, body=None, **headers):
    return api.call("POST", CREATE, json=body, headers=headers)


def stored_tags(world, project_id=None) -> dict[str, str]:
    """{name: colour} of the project's tags, read from the database itself."""
    return dict(world.run(lambda session: session.execute(
        select(Tag.name, Tag.color).where(Tag.project_id == (project_id or world.project_id))
    ).all()))


def listed(api: Api, name: str) -> list[dict]:
    return [tag for tag in api.tags(name=name).json()["results"]
            if tag["name"].casefold() == name.casefold()]


# --- created and listed ------------------------------------------------------------------


def test_a_tag_is_created_with_its_colour_and_listed_like_the_others(api, world):
    response = create(api, {"name": "  Winter Sale ", "color": "#AB12CD"})
    assert response.status_code == 201, response.text
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["X-RateLimit-Remaining"].isdigit()
    created = response.json()
    assert created == {"id": created["id"], "project": world.project_id, "name": "Winter Sale",
                       "color": "#ab12cd"}
    assert isinstance(created["id"], int) and created["id"] not in world.tags.values()
    assert listed(api, "winter sale") == [created]
    # Usable at once, like any tag.
    world.add_queries([("snow boots", "en", "US", [])])
    tagged = api.set_tags([{"query": "snow boots", "language": "en", "country": "US",
                            "tagIds": [created["id"]]}])
    assert tagged.status_code == 200 and tagged.json()[0]["tags"] == [created["id"]]
    assert [q["query"] for q in api.queries(tagNames=["WINTER SALE"]).json()["results"]] == [
        "snow boots"]


@pytest.mark.parametrize("body", [{"name": "picked"}, {"name": "picked", "color": None}])
def test_without_a_colour_the_service_picks_a_readable_one_from_its_palette(api, body):
    response = create(api, body)
    assert response.status_code == 201, response.text
    color = response.json()["color"]
    assert color in palette.PALETTE
    assert palette.contrast_ratio(color, palette.text_color(color)) >= 4.5


def test_picked_colours_go_round_the_palette_least_used_first(api, world):
    # The world's four tags use none of the palette's colours: the palette in its order.
    picked = [create(api, {"name": f"new {i}"}).json()["color"]
              for i in range(len(palette.PALETTE) + 2)]
    assert picked == [*palette.PALETTE, *palette.PALETTE[:2]]
    # A colour chosen by hand counts too: it is not picked again until the others catch up.
    other = Api(api.base_url, world.key, world.other_project_id)
    assert create(other, {"name": "blue", "color": palette.PALETTE[0].upper()}).status_code == 201
    assert create(other, {"name": "next"}).json()["color"] == palette.PALETTE[1]


def test_every_palette_colour_carries_text_of_at_least_4_5_to_1():
    assert len(set(palette.PALETTE)) == len(palette.PALETTE) >= 8
    for color in palette.PALETTE:
        assert palette.readable(color), color
        assert max(palette.contrast_ratio(color, "#ffffff"),
                   palette.contrast_ratio(color, "#000000")) >= 4.5, color
    assert palette.pick({}) == palette.PALETTE[0]
    assert palette.pick(dict.fromkeys(palette.PALETTE, 1) | {palette.PALETTE[3]: 0}) == \
        palette.PALETTE[3]


# --- duplicates ----------------------------------------------------------------------------


# Names that read the same are one name: zero-width and invisible characters, full-width
# letters and composed or decomposed accents do not make another tag.
LOOK_ALIKES = ["brand\u200b", "\u200bBrand", "b\u200crand", "bran\u200dd", "brand\ufeff",
               "br\u2060and", "\uff42\uff52\uff41\uff4e\uff44", "Brand\u200e", "\u00adbrand"]


@pytest.mark.parametrize("name", ["brand", "BRAND", "  Brand  ", "bRaNd", *LOOK_ALIKES])
def test_a_name_the_project_has_is_a_409_whatever_its_case_or_look_alike(api, world, name):
    before = stored_tags(world)
    response = create(api, {"name": name, "color": "#000000"})
    assert response.status_code == 409, response.text
    assert response.json() == {"statusCode": 409, "error": "Conflict",
                               "message": 'A tag named "brand" already exists in this project.'}
    assert stored_tags(world) == before


def test_folding_is_unicode_casefolding_as_the_name_filters_use(api, world):
    assert create(api, {"name": "Straße"}).status_code == 201
    again = create(api, {"name": "STRASSE"})
    assert again.status_code == 409
    assert again.json()["message"] == 'A tag named "Straße" already exists in this project.'


def test_composed_and_decomposed_accents_are_one_name(api, world):
    assert create(api, {"name": "caf\u00e9"}).status_code == 201
    again = create(api, {"name": "Cafe\u0301"})
    assert again.status_code == 409
    assert again.json()["message"] == 'A tag named "caf\u00e9" already exists in this project.'


@pytest.mark.parametrize("name", LOOK_ALIKES + ["Cafe\u0301"])
def test_the_tag_filter_finds_a_tag_by_a_name_that_reads_the_same(api, world, name):
    cafe = create(api, {"name": "caf\u00e9"}).json()["id"]
    world.add_queries([("latte", "en", "US", ["brand"]), ("mocha", "en", "US", [])])
    tagged = api.set_tags([{"query": "mocha", "language": "en", "country": "US",
                            "tagIds": [cafe]}])
    assert tagged.status_code == 200, tagged.text
    found = api.queries(tagNames=[name]).json()["results"]
    assert [q["query"] for q in found] == ["mocha" if "af" in name else "latte"]


@pytest.mark.parametrize("name", ["brand\u202e", "\u202ednarb", "a\u202ab", "a\u202db",
                                  "x\u2066y", "x\u2067y", "x\u2068y", "x\u2069y"])
def test_a_name_with_a_bidi_control_is_a_400_sentence(api, world, name):
    before = stored_tags(world)
    response = create(api, {"name": name})
    assert response.status_code == 400
    assert response.json()["message"] == [
        "'name': must not contain characters that change the direction of the text "
        "(U+202A–U+202E, U+2066–U+2069)."]
    assert stored_tags(world) == before


def test_a_name_of_only_invisible_characters_is_a_400(api):
    response = create(api, {"name": "\u200b\u200c\ufeff"})
    assert response.status_code == 400
    assert response.json()["message"] == ["'name': must contain a visible character."]


def test_the_same_name_in_another_project_is_another_tag(api, world):
    other = Api(api.base_url, world.key, world.other_project_id)
    response = create(other, {"name": "brand"})
    assert response.status_code == 201
    assert response.json()["project"] == world.other_project_id
    assert stored_tags(world)["brand"] == "#1f77b4"


def test_creators_racing_for_one_name_get_one_tag_and_409s(api, world):
    callers = 8
    statuses = racing_statuses(
        api, callers, lambda caller, index: create(caller, {"name": "Race" if index % 2 else
                                                            "RACE"}))
    assert statuses == [201] + [409] * (callers - 1)
    assert len([name for name in stored_tags(world) if name.casefold() == "race"]) == 1


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("color", ["red", "#fff", "#12345g", "1f77b4", "#1f77b4 ", " #1f77b4",
                                   "#1f77b4ff", "", "#１２３４５６"])
def test_a_colour_that_is_not_hash_and_six_hex_digits_is_a_400_sentence(api, world, color):
    assert_bad_request(create(api, {"name": "colourful", "color": color}), [COLOR_SENTENCE])
    assert "colourful" not in stored_tags(world)


@pytest.mark.parametrize("color", [123, True, ["#1f77b4"], {"hex": "#1f77b4"}])
def test_a_colour_that_is_not_a_string_is_a_400(api, color):
    response = create(api, {"name": "colourful", "color": color})
    assert response.status_code == 400
    assert response.json()["message"] == ["'color': Input should be a valid string."]


HOSTILE = [
    '<script>alert("x")</script>',
    '<img src=x onerror="alert(1)">',
    "Robert'); DROP TABLE tags; --",
    "100% _off_ \\ %",
    "\" OR 1=1 --",
    "{{ 7*7 }} ${7*7}",
    "emoji 🏷️ and right-to-left עברית",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_stored_and_answered_verbatim(api, world, name):
    response = create(api, {"name": name})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name
    assert listed(api, name) == [response.json()]
    assert stored_tags(world)[name] == response.json()["color"]
    assert len(stored_tags(world)) == 5  # the world's four, and this one: nothing dropped


@pytest.mark.parametrize(("name", "message"), [
    ("", "'name': must not be empty or only spaces."),
    ("   ", "'name': must not be empty or only spaces."),
    ("tab\there", "'name': must not contain control characters or unpaired surrogates."),
    ("new\nline", "'name': must not contain control characters or unpaired surrogates."),
    ("nul\x00", "'name': must not contain control characters or unpaired surrogates."),
    ("del\x7f", "'name': must not contain control characters or unpaired surrogates."),
    ("esc\x1b[31m", "'name': must not contain control characters or unpaired surrogates."),
    ("x" * 201, "'name': must be at most 200 characters."),
    (" " + "x" * 200, "'name': must be at most 200 characters."),
    ("ß" * 101, "'name': must be at most 200 characters when compared without regard to "
                "case."),
])
def test_names_that_are_empty_too_long_or_hold_control_characters_are_400(
        api, world, name, message):
    response = create(api, {"name": name})
    assert response.status_code == 400
    assert response.json()["message"] == [message]
    assert len(stored_tags(world)) == 4


def test_an_unpaired_surrogate_is_a_400(api, world):
    response = api.call("POST", CREATE, data=b'{"name": "half \\ud800 a pair"}',
                        headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert len(stored_tags(world)) == 4


def test_a_name_of_200_characters_once_trimmed_is_fine(api):
    name = "n" * 198
    response = create(api, {"name": f" {name}x "[:200]})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == f"{name}x"


@pytest.mark.parametrize(("body", "message"), [
    ({}, ["'name' is required."]),
    ({"color": "#123456"}, ["'name' is required."]),
    ({"name": "x", "colour": "#123456"}, ["Unknown field 'colour'."]),
    ({"name": 5}, ["'name': Input should be a valid string."]),
    ([{"name": "x"}], ["Request body must be a JSON object."]),
])
def test_bodies_that_are_not_a_new_tag_are_400(api, world, body, message):
    response = create(api, body)
    assert response.status_code == 400
    assert response.json()["message"] == message
    assert len(stored_tags(world)) == 4


def test_no_body_is_400_and_a_body_that_is_not_json_is_415(api):
    assert api.call("POST", CREATE).json()["message"] == ["'name' is required."]
    other = api.call("POST", CREATE, data="name=x",
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert other.status_code == 415
    assert other.json()["error"] == "Unsupported Media Type"


# --- who may create where ------------------------------------------------------------------


def test_another_organizations_project_is_not_found_like_a_missing_one(api, world):
    _org_id, their_key, their_project = world.new_org("Rival")
    body = {"name": "planted", "color": "#123456"}
    foreign = create(api, body, **{"x-project-id": their_project})
    absent = create(api, body, **{"x-project-id": str(uuid.uuid4())})
    assert foreign.status_code == absent.status_code == 404
    assert foreign.json() == absent.json() == {"statusCode": 404, "message": "Project not found.",
                                               "error": "Not Found"}
    assert stored_tags(world, their_project) == {}
    # Their key cannot create in ours either.
    theirs = Api(api.base_url, their_key, world.project_id)
    assert create(theirs, body).status_code == 404
    assert "planted" not in stored_tags(world)


def test_a_project_scoped_key_creates_in_its_project_only(api, world):
    scoped = Api(api.base_url, world.new_key(project_id=world.project_id), world.project_id)
    assert create(scoped, {"name": "scoped"}).status_code == 201
    elsewhere = create(scoped, {"name": "elsewhere"}, **{"x-project-id": world.other_project_id})
    assert elsewhere.status_code == 404
    assert elsewhere.json()["message"] == "Project not found."
    assert stored_tags(world, world.other_project_id) == {}


@pytest.mark.parametrize(("headers", "status", "message"), [
    ({"x-api-key": ""}, 401, "Missing x-api-key header."),
    ({"x-api-key": "tdk_live_" + "x" * 43}, 401, "Invalid API key."),
    ({"x-project-id": ""}, 400, ["Missing x-project-id header."]),
    ({"x-project-id": "not-a-uuid"}, 400, ["x-project-id must be a project UUID."]),
])
def test_keys_and_project_headers_are_checked_as_on_every_endpoint(
        api, world, headers, status, message):
    response = create(api, {"name": "unchecked"}, **headers)
    assert response.status_code == status
    assert response.json()["message"] == message
    assert "unchecked" not in stored_tags(world)


def test_a_revoked_key_creates_nothing(api, world):
    from service.org import admin

    key = world.new_key()
    world.run(lambda session: admin.revoke_key(session, key))
    response = create(Api(api.base_url, key, world.project_id), {"name": "revoked"})
    assert response.status_code == 401
    assert "revoked" not in stored_tags(world)


# --- rate limits and HTTP ------------------------------------------------------------------


def test_creating_counts_against_the_organizations_rate_limit(api, world):
    world.set_limits(1000, 3, 100_000)  # three a minute
    answers = [create(api, {"name": f"limited {i}"}) for i in range(4)]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    refused = answers[-1]
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    assert refused.json()["error"] == "Too Many Requests"
    assert refused.json()["message"].startswith("Rate limit exceeded. Retry in ")
    assert "limited 3" not in stored_tags(world)  # a refused request creates nothing
    # The budget is the organization's: its other endpoints are out of it too.
    assert api.tags().status_code == 429


def test_options_lists_post_and_other_methods_are_405(api):
    answer = api.call("OPTIONS", CREATE)
    assert answer.status_code == 200 and answer.json() == {"allow": ["OPTIONS", "POST"]}
    wrong = api.call("GET", CREATE)
    assert wrong.status_code == 405 and wrong.headers["Allow"] == "OPTIONS, POST"


# --- the document --------------------------------------------------------------------------


def test_the_document_marks_creating_a_tag_as_an_extension_and_nothing_else(live_service):
    """Of the operations, creating a tag, the facets of a filter, the saved views
    (tests/service/test_saved_views.py), the rules (tests/service/test_rules.py), the common
    words of a filter and the suggested tags are the extensions."""
    served = requests.get(live_service.url + "/api/openapi.json", timeout=10).json()
    assert served == yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    marked = {(method, path) for path, methods in served["paths"].items()
              for method, operation in methods.items()
              if operation.get("x-tagdesk-extension") is True}
    assert marked == {("post", CREATE), ("post", "/api/queries/facets"),
                      ("patch", "/api/queries/many/tags-edit"), ("post", "/api/queries/versions"),
                      ("post", "/api/imports/list"), ("post", "/api/queries/words"),
                      *(("post", f"/api/suggestions/{verb}")
                        for verb in ("status", "refresh", "accept", "reject")),
                      *(("post", f"/api/tags/{verb}") for verb in ("update", "merge", "unmerge")),
                      *(("post", f"/api/views/{verb}")
                        for verb in ("list", "create", "update", "delete")),
                      *(("post", f"/api/rules/{verb}")
                        for verb in ("list", "preview", "create", "update", "pause", "delete",
                                     "apply", "unapply", "restore"))}
    operation = served["paths"][CREATE]["post"]
    assert operation["operationId"] == "createTag"
    assert "extension" in operation["summary"].lower()
    assert set(operation["responses"]) >= {"201", "400", "401", "404", "409", "429"}
