"""Every integer a request may carry — ids, cursors, counts, pages, in bodies and query strings,
of the reference API and of every extension — found in the OpenAPI document the service serves
(so a field added later is swept too), sent at the edges of what the engine holds and far past
them: a documented range (`maximum`, and `minimum` where there is one), a 400 naming the field
outside it, and never a 5xx or a change inside or outside it. Over real HTTP, on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import copy

import pytest
import requests
from sqlalchemy import text

from service.api.openapi import openapi_document
from service.bodies.validation import MAX_ID
from tests.support.api import Api

# 2^31 − 1 is PostgreSQL's largest `integer` (ids, query keys); 2^32 is past the bitmaps' keys.
SWEPT = [0, -1, MAX_ID, 2**31, 2**32, 2**63, 10**40, -(10**40)]
METHODS = {"get", "post", "put", "patch", "delete"}

Location = tuple[str | int, ...]


def resolved(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        node = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def integer_fields(document: dict, schema: dict, at: Location = ()) -> dict[Location, dict]:
    """Where a body of `schema` holds an integer (a list's item at index 0), with its schema."""
    schema = resolved(document, schema)
    found: dict[Location, dict] = {}
    types = schema.get("type", [])
    if "integer" in (types if isinstance(types, list) else [types]):
        found[at] = schema
    for alternative in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get(
            "allOf", []):
        found.update(integer_fields(document, alternative, at))
    for name, field in schema.get("properties", {}).items():
        found.update(integer_fields(document, field, (*at, name)))
    if "items" in schema:
        found.update(integer_fields(document, schema["items"], (*at, 0)))
    return found


def operations(document: dict):
    """(method, path, operation) of every operation of the document."""
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield method, path, operation


def json_body(operation: dict) -> dict | None:
    """The operation's JSON request body (its schema and example), if it takes one."""
    return operation.get("requestBody", {}).get("content", {}).get("application/json")


def swept_fields(document: dict, operation: dict) -> dict[Location, dict]:
    """The operation's integers: ("body", …) in its JSON body, ("query", name) in its address."""
    found = {}
    content = json_body(operation)
    if content:
        found.update({("body", *at): schema for at, schema in integer_fields(
            document, content["schema"]).items()})
    for parameter in operation.get("parameters", []):
        parameter = resolved(document, parameter)
        if parameter["in"] == "query":
            for at, schema in integer_fields(document, parameter["schema"]).items():
                found[("query", parameter["name"], *at)] = schema
    return found


DOCUMENT = openapi_document()  # what /api/openapi.json serves; the test reads it from there
SWEPT_OPERATIONS = [f"{method.upper()} {path}" for method, path, operation in
                    operations(DOCUMENT) if swept_fields(DOCUMENT, operation)]


def ids_of(document: dict, fields: dict[Location, dict]) -> set[Location]:
    """The body's integers that name a row: those the document gives as an `Id`."""
    row_id = document["components"]["schemas"]["Id"]
    return {at[1:] for at, schema in fields.items() if at[0] == "body" and schema == row_id}


def with_real_ids(value, ids: set[Location], resource_row: int | None, tags: list[int],
                  met: dict[int, int], at: Location = ()) -> object:
    """The document's example with its ids made the world's: the `id` of /api/rules/… and
    /api/views/… names the rule or view made for the test; every other id a tag, a different
    one for each different id of the example, in the order met."""
    if isinstance(value, dict):
        return {name: with_real_ids(item, ids, resource_row, tags, met, (*at, name))
                for name, item in value.items()}
    if isinstance(value, list):
        return [with_real_ids(item, ids, resource_row, tags, met, (*at, 0)) for item in value]
    if at not in ids:
        return value
    if at == ("id",) and resource_row is not None:
        return resource_row
    return met.setdefault(value, tags[len(met) % len(tags)])


def example_of(content: dict | None) -> dict:
    if not content:
        return {}
    if "example" in content:
        return content["example"]
    return next(iter(content.get("examples", {}).values()), {}).get("value", {})


def placed(body: dict, at: Location, value: int) -> dict:
    """`body` with `value` at `at` (containers made as needed; a list's first item)."""
    body = copy.deepcopy(body)
    node = body
    for step, following in zip(at, at[1:], strict=False):
        fresh = [] if isinstance(following, int) else {}
        if isinstance(step, int):
            if not node:
                node.append(fresh)
            node = node[0]
        else:
            if not isinstance(node.get(step), (dict, list)):
                node[step] = fresh
            node = node[step]
    if isinstance(at[-1], int):
        node[:1] = [value]
    else:
        node[at[-1]] = value
    return body


def dotted(at: Location) -> str:
    return ".".join(str(step) for step in at)


def outside(schema: dict, value: int) -> bool:
    return value > schema["maximum"] or value < schema.get("minimum", float("-inf"))


@pytest.fixture
def made(api, seeded):
    """A rule and a saved view of the project, beside its tags and four queries."""
    tags = list(seeded.tags.values())
    rule = api.post("/api/rules/create", {"name": "all", "condition": {}, "tagIds": tags[:1]})
    view = api.post("/api/views/create", {"name": "all", "filters": {}})
    assert rule.status_code == view.status_code == 201, (rule.text, view.text)
    return {"rules": rule.json()["id"], "views": view.json()["id"], "tags": tags}


def snapshot(api: Api) -> list:
    """What the project holds, as the API lists it."""
    return [api.queries(limit=100).json(), api.tags(limit=100).json(),
            api.post("/api/rules/list", {}).json(), api.post("/api/views/list", {}).json()]


def send(api: Api, method: str, path: str, base: dict, at: Location | None = None,
         value: int = 0) -> requests.Response:
    """`base` (the example's body) sent, with `value` at `at` (in the body or the query)."""
    body, query = base, {}
    if at is not None and at[0] == "body":
        body = placed(base, at[1:], value)
    elif at is not None:
        query = {at[1]: value}
    return api.call(method.upper(), path, json=body if body or method != "get" else None,
                    params=query)


@pytest.mark.parametrize("label", SWEPT_OPERATIONS)
def test_every_integer_is_range_checked_never_a_5xx(api, made, live_service, label):
    method, path = label.split(" ")
    served = requests.get(live_service.url + "/api/openapi.json", timeout=10).json()
    operation = served["paths"][path][method.lower()]
    fields = swept_fields(served, operation)
    resource = path.split("/")[2]
    base = with_real_ids(example_of(json_body(operation)), ids_of(served, fields),
                         made.get(resource) if resource in ("rules", "views") else None,
                         made["tags"], {})

    # The example itself passes the service's checks: the values swept below are the only
    # thing wrong with a body, and in range they reach the handler and the engine.
    first = send(api, method, path, base)
    assert first.status_code < 500 and first.status_code != 400, (label, base, first.text)

    before = snapshot(api)
    for at, schema in fields.items():
        assert "maximum" in schema and schema["maximum"] <= MAX_ID, (
            f"{label}: {dotted(at[1:])} documents no range the engine holds")
        for value in SWEPT:
            if not outside(schema, value):
                continue
            response = send(api, method, path, base, at, value)
            assert response.status_code == 400, (label, dotted(at[1:]), value, response.text)
            assert f"'{dotted(at[1:])}'" in str(response.json()["message"]), response.text
    assert snapshot(api) == before  # refused, each of them changed nothing

    for at, schema in fields.items():
        for value in SWEPT:
            if outside(schema, value):
                continue
            response = send(api, method, path, base, at, value)
            assert response.status_code in (200, 201, 400, 404, 409), (
                label, dotted(at[1:]), value, response.text)


def test_a_cursor_past_what_the_bitmaps_hold_is_a_400(api, made):
    """The bitmaps' keys stop at 2^32: such a cursor used to reach them (a 500)."""
    response = api.post("/api/rules/apply", {"id": made["rules"], "cursor": 2**32})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [
        "'cursor': Input should be less than or equal to 2147483647."]
    applied = api.post("/api/rules/apply", {"id": made["rules"], "cursor": MAX_ID})
    assert applied.status_code == 200 and applied.json()["checked"] == 0, applied.text


def test_filters_kept_before_the_range_was_checked_are_read_as_naming_no_tag(api, made, world):
    """A rule's condition or a saved view's filter kept by a version that took any integer
    may hold an id past 32 bits: it named no tag, and still names none."""
    past = 2**40
    world.run(lambda session: session.execute(text(
        "UPDATE rules SET condition = :condition"), {"condition": f'{{"tagIds":[{past}]}}'}))
    world.run(lambda session: session.execute(text(
        "UPDATE saved_views SET filters = :filters"), {"filters": f'{{"excludeTagIds":[{past}]}}'}))
    rules = api.post("/api/rules/list", {})
    assert rules.status_code == 200, rules.text
    assert rules.json()["results"][0]["matching"] == 0  # a required tag that is none
    assert rules.json()["results"][0]["condition"] == {"tagIds": [past]}  # kept as it was
    views = api.post("/api/views/list", {})
    assert views.status_code == 200, views.text
    assert views.json()["results"][0]["totalRecords"] == 4  # an excluded tag that is none
    applied = api.post("/api/rules/apply", {"id": made["rules"]})
    assert applied.status_code == 200 and applied.json()["tagged"] == 0, applied.text
    world.add_queries([("boots", "en", "US", [])])  # the rule meets it on entry
    assert api.queries(query="boots").json()["results"][0]["tags"] == []
