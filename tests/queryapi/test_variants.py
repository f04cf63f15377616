"""Payload variants the production service may send, served by a tiny real HTTP server; and
payloads that do not fit, which must become readable ApiErrors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from queryapi import (
    ApiError,
    Client,
    InvalidRequest,
    Mode,
    Page,
    Project,
    Query,
    QueryFilters,
    Tag,
    TagAssignment,
    TransportError,
)

from .servers import Answer, Seen, TinyServer, routes

KEY = "tdk_live_dmFyaWFudHMgb2YgdGhlIHByb2R1Y3Rpb24gc2VydmljZQ0000"
PROJECT = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"


def query_record(n: int, **extra) -> dict:
    return {"id": f"q-{n}", "project": PROJECT, "tags": [str(n), n + 100], "query": f"q {n}",
            "language": "en", "country": "US", "updatedAt": "2026-11-21T09:46:00Z",
            "searchVolume": 1200, **extra}


def paged(records: list, style: str, cap: int | None = None):
    """A listing route: pages of what the client asks for (capped at `cap`), with nextPage
    and prevPage written in `style`: null, 0 or absent."""
    def route(seen: Seen) -> Answer:
        page, limit = seen.body["page"], min(seen.body["limit"], cap or 10**9)
        chunk = records[(page - 1) * limit: page * limit]
        pages = -(-len(records) // limit)
        meta = {"totalRecords": len(records), "limit": limit, "currentPage": page,
                "totalPages": pages, "somethingNew": True}
        for name, value in (("nextPage", page + 1 if page < pages else None),
                            ("prevPage", page - 1 if page > 1 else None)):
            if value is not None:
                meta[name] = value
            elif style == "null":
                meta[name] = None
            elif style == "zero":
                meta[name] = 0
        return Answer(200, {"page": meta, "results": chunk, "took": "3ms"})
    return route


@pytest.mark.parametrize("style", ["null", "zero", "absent"])
def test_query_pages_in_every_style(style):
    records = [query_record(n) for n in range(7)]
    with TinyServer(routes({("POST", "/api/queries/list"): paged(records, style, cap=3)})) as s, \
            Client(s.url, KEY) as client:
        found = list(client.iter_queries(PROJECT, QueryFilters(tag_ids=(4, 5))))
        first = client.list_queries(PROJECT, limit=3)
        last = client.list_queries(PROJECT, page=3, limit=3)
    assert [q.id for q in found] == [f"q-{n}" for n in range(7)]
    # asked for 1000, was told 3, went on with 3
    assert [r.body["limit"] for r in s.seen[:3]] == [1000, 3, 3]
    assert [r.body["page"] for r in s.seen[:3]] == [1, 2, 3]
    assert s.seen[0].body["tagIds"] == ["4", "5"]  # the reference types these as strings
    assert s.seen[0].body["sort"] == [{"field": "id", "direction": "ASC"}]
    assert s.seen[0].headers["x-project-id"] == PROJECT
    assert s.seen[0].headers["x-api-key"] == KEY
    assert s.seen[0].headers["content-type"] == "application/json"
    assert first.page == Page(7, 3, 1, 3, 2, None)
    assert last.page == Page(7, 3, 3, 3, None, 2)
    assert found[0] == Query("q-0", PROJECT, (0, 100), "q 0", "en", "US",
                             datetime(2026, 11, 21, 9, 46, tzinfo=UTC))


def test_projects_as_a_bare_array():
    projects = [{"id": "p-1", "name": "Shop", "createdAt": "2026-01-01"},
                {"id": 2, "name": "Help"}]
    with TinyServer(routes({("GET", "/api/projects/list"): lambda s: Answer(200, projects)})) \
            as server, Client(server.url, KEY) as client:
        page = client.list_projects()
        every = client.all_projects()
    assert page.results == (Project("p-1", "Shop"), Project("2", "Help"))
    assert page.page.total_records == 2 and page.page.next_page is None
    assert every == list(page.results)
    assert len(server.seen) == 2  # one call each: a bare array is all there is


def test_projects_as_pages():
    records = [{"id": f"p-{n}", "name": f"P{n}"} for n in range(5)]

    def route(seen: Seen) -> Answer:
        seen.body = {k: int(v) for k, v in
                     (part.split("=") for part in seen.path.split("?")[1].split("&"))}
        return paged(records, "absent", cap=2)(seen)

    with TinyServer(routes({("GET", "/api/projects/list"): route})) as server, \
            Client(server.url, KEY) as client:
        assert [p.id for p in client.all_projects()] == [f"p-{n}" for n in range(5)]
    assert [r.path for r in server.seen] == [
        "/api/projects/list?page=1&limit=1000", "/api/projects/list?page=2&limit=2",
        "/api/projects/list?page=3&limit=2"]


def test_tags_and_timestamps_and_set_tags_variants():
    tags = [{"id": "12", "project": PROJECT, "name": "brand", "color": "#1f77b4", "x": []}]
    updated = [query_record(1, updatedAt="2026-11-21T09:46:00.123+00:00"),
               query_record(2, updatedAt="2026-11-21T10:46:00.5+01:00"),
               query_record(3, updatedAt="2026-11-21T09:46:00")]
    table = {
        ("POST", "/api/tags/list"): lambda s: Answer(200, {"page": {
            "totalRecords": 1, "limit": 1000, "currentPage": 1, "totalPages": 1},
            "results": tags}),
        ("PATCH", "/api/queries/many/tags-only"): lambda s: Answer(200, updated),
    }
    with TinyServer(routes(table)) as server, Client(server.url, KEY) as client:
        assert list(client.iter_tags(PROJECT)) == [Tag(12, PROJECT, "brand", "#1f77b4")]
        records = client.set_tags(PROJECT, [TagAssignment(f"q {n}", "en", "US", [n])
                                            for n in (1, 2, 3)])
    assert [r.updated_at for r in records] == [
        datetime(2026, 11, 21, 9, 46, 0, 123000, tzinfo=UTC),
        datetime(2026, 11, 21, 9, 46, 0, 500000, tzinfo=UTC),
        datetime(2026, 11, 21, 9, 46, tzinfo=UTC)]
    assert all(r.updated_at.tzinfo is UTC for r in records)
    assert server.seen[1].body == {"queries": [
        {"query": f"q {n}", "language": "en", "country": "US", "tagIds": [n]}
        for n in (1, 2, 3)]}


MALFORMED = [
    ({"results": []}, "page is missing"),
    ({"page": [], "results": []}, "page is not a JSON object"),
    ({"page": {"totalRecords": 1, "limit": 50, "currentPage": 1}, "results": {}},
     "results is not a list"),
    ({"page": {"totalRecords": "many", "limit": 50, "currentPage": 1}, "results": []},
     "page.totalRecords is not a whole number ('many')"),
    ({"page": {"totalRecords": 1, "limit": 50, "currentPage": 1},
      "results": [query_record(1, updatedAt="yesterday")]},
     "results[0].updatedAt is not an ISO 8601 timestamp ('yesterday')"),
    ({"page": {"totalRecords": 1, "limit": 50, "currentPage": 1},
      "results": [query_record(1, tags=["brand"])]},
     "results[0].tags[0] is not a whole number ('brand')"),
    ({"page": {"totalRecords": 1, "limit": 50, "currentPage": 1},
      "results": [{k: v for k, v in query_record(1).items() if k != "query"}]},
     "results[0].query is missing"),
    ([1, 2], "the answer is not a JSON object"),
]


@pytest.mark.parametrize(("payload", "problem"), MALFORMED)
def test_malformed_payloads_are_api_errors(payload, problem):
    route = routes({("POST", "/api/queries/list"): lambda s: Answer(200, payload)})
    with (TinyServer(route) as server, Client(server.url, KEY) as client,
          pytest.raises(ApiError) as caught):
        client.list_queries(PROJECT)
    assert type(caught.value) is ApiError
    assert str(caught.value) == (
        f"The service's answer to POST /api/queries/list could not be read: {problem}.")


def test_an_answer_that_is_not_json_is_a_transport_error():
    html = b"<html><body>Welcome to nginx!</body></html>"
    with (TinyServer(lambda s: Answer(200, html, {"Content-Type": "text/html"})) as server,
          Client(server.url, KEY, Mode.BACKGROUND) as client,
          pytest.raises(TransportError) as caught):
        client.list_projects()
    assert "with something that is not JSON" in str(caught.value)


def test_error_bodies_of_every_shape():
    answers = iter([
        Answer(422, {"statusCode": 422, "message": ["'page' must be positive", "limit: too big"],
                     "error": "Unprocessable Entity"}),
        Answer(500, b"oops", {"Content-Type": "text/plain"}),
        Answer(502, {"message": "Bad gateway: upstream tdk_live_x is down"}),
        Answer(418, {"nothing": "useful"}),
        Answer(302, b"", {"Location": "https://elsewhere.example/api/projects/list"}),
    ])
    with TinyServer(lambda s: next(answers)) as server, Client(server.url, KEY) as client:
        errors = []
        for _ in range(5):
            with pytest.raises(ApiError) as caught:
                client.list_projects()
            errors.append(caught.value)
    assert isinstance(errors[0], InvalidRequest) and errors[0].status == 422
    assert errors[0].message == "'page' must be positive. limit: too big."
    assert errors[0].details == ["'page' must be positive", "limit: too big"]
    assert str(errors[1]) == "The service answered with HTTP 500 (Internal Server Error)."
    assert str(errors[2]) == "Bad gateway: upstream tdk_live_x is down."
    assert str(errors[3]) == "The service answered with HTTP 418 (I'm a Teapot)."
    assert errors[4].status == 302 and "redirect to https://elsewhere.example" in str(errors[4])
    assert len(server.seen) == 5  # the redirect was not followed


def test_a_service_that_echoes_the_key_is_scrubbed():
    answer = Answer(401, {"message": f"Key {KEY} is revoked."})
    with (TinyServer(lambda s: answer) as server, Client(server.url, KEY) as client,
          pytest.raises(ApiError) as caught):
        client.list_projects()
    assert str(caught.value) == "Key tdk_live_…0000 is revoked."
