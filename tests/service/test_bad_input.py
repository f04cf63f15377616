"""Hostile and malformed input: always a clear 4xx JSON error, never a 500, nothing changed."""

import json

import pytest

HOSTILE = [
    "<script>alert(1)</script>",
    "'; DROP TABLE queries; --",
    "\" OR 1=1 --",
    "%' OR '1'='1",
    "x" * 1000,
    "ü" * 1000,
    "\u202e\u200b zero width",
    "😀 emoji",
]
CONTROL = ["nul\x00byte", "bell\x07", "newline\nin text", "del\x7f"]


@pytest.fixture
def seeded(world):
    world.add_queries([("running shoes", "en", "US", ["brand"])])
    return world


def snapshot(api):
    return api.queries(limit=1000).json()["results"]


def assert_clear_error(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusCode"] == status
    assert isinstance(body["error"], str) and body["error"]
    assert isinstance(body["message"], str | list)
    assert "Traceback" not in response.text


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_in_every_filter_are_harmless(api, seeded, value):
    for body in ({"query": value}, {"languages": [value[:35]]}, {"countries": [value[:35]]},
                 {"tagIds": [value]}, {"tagNames": [value]}):
        response = api.queries(**body)
        assert response.status_code == 200, (body, response.text)
        assert response.json()["results"] == []
    assert api.tags(name=value).status_code == 200


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_in_set_tags_are_404_and_change_nothing(api, seeded, value):
    before = snapshot(api)
    for item in ({"query": value, "language": "en", "country": "US"},
                 {"query": "running shoes", "language": value[:35], "country": "US"},
                 {"query": "running shoes", "language": "en", "country": value[:35]}):
        response = api.set_tags([{**item, "tagIds": []}])
        assert_clear_error(response, 404)
    assert snapshot(api) == before


@pytest.mark.parametrize("value", CONTROL)
def test_control_characters_are_rejected(api, seeded, value):
    assert_clear_error(api.queries(query=value), 400)
    assert_clear_error(api.tags(name=value), 400)
    assert_clear_error(api.set_tags([{"query": value, "language": "en", "country": "US",
                                      "tagIds": []}]), 400)


def test_unpaired_surrogates_are_rejected(api, seeded):
    raw = b'{"query": "\\ud800"}'
    response = api.call("POST", "/api/queries/list", data=raw,
                        headers={"content-type": "application/json"})
    assert_clear_error(response, 400)


def test_ten_thousand_character_strings_are_rejected(api, seeded):
    long = "a" * 10_000
    assert_clear_error(api.queries(query=long), 400)
    assert_clear_error(api.queries(languages=[long]), 400)
    assert_clear_error(api.tags(name=long), 400)
    assert_clear_error(api.set_tags([{"query": long, "language": "en", "country": "US",
                                      "tagIds": []}]), 400)


@pytest.mark.parametrize("raw", [b"{", b"[1, 2", b"nul", b"{'single': 1}", b"NaN",
                                 b'{"page": NaN}', b'{"page": Infinity}', b"[" * 100_000,
                                 b"\xff\xfe"])
def test_malformed_json_is_400(api, seeded, raw):
    for method, path in (("POST", "/api/queries/list"), ("POST", "/api/tags/list"),
                         ("PATCH", "/api/queries/many/tags-only")):
        response = api.call(method, path, data=raw, headers={"content-type": "application/json"})
        assert_clear_error(response, 400)


@pytest.mark.parametrize("body", [[], "text", 42, None, True])
def test_body_must_be_an_object(api, seeded, body):
    response = api.call("POST", "/api/queries/list", data=json.dumps(body),
                        headers={"content-type": "application/json"})
    assert_clear_error(response, 400)
    assert response.json()["message"] == ["Request body must be a JSON object."]


@pytest.mark.parametrize("body", [
    {"query": 5}, {"query": ["a"]}, {"languages": "de"}, {"languages": [1]},
    {"countries": [None]}, {"tagIds": [1.5]}, {"tagIds": {"a": 1}}, {"tagNames": [["x"]]},
    {"sort": {"field": "query"}}, {"sort": [{"field": 1}]}, {"sort": [{}]},
    {"sort": [{"field": "query"}] * 6}, {"page": "1"}, {"limit": None},
    {"unknown": 1}, {"languages": ["en"] * 1001},
])
def test_wrong_types_and_unknown_fields_are_400(api, seeded, body):
    response = api.queries(**body)
    assert_clear_error(response, 400)
    assert isinstance(response.json()["message"], list)


def test_body_over_one_mebibyte_is_413(api, seeded):
    before = snapshot(api)
    padding = "x" * (1024 * 1024)
    response = api.call("PATCH", "/api/queries/many/tags-only",
                        data=json.dumps({"queries": [], "pad": padding}),
                        headers={"content-type": "application/json"})
    assert_clear_error(response, 413)
    assert response.json()["error"] == "Payload Too Large"
    assert snapshot(api) == before


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_body_that_is_not_json_is_415(api, seeded, content_type):
    response = api.call("POST", "/api/queries/list", data=b'{"query": "x"}',
                        headers={"content-type": content_type})
    assert_clear_error(response, 415)
    assert response.json()["error"] == "Unsupported Media Type"


def test_half_valid_batch_changes_nothing(api, seeded):
    before = snapshot(api)
    response = api.set_tags([
        {"query": "running shoes", "language": "en", "country": "US", "tagIds": []},
        {"query": "running shoes", "language": "en", "country": "US", "tagIds": [], "x": 1},
    ])
    assert_clear_error(response, 400)
    assert snapshot(api) == before
