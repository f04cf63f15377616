"""The client's side of the numbers per query (clicks, volume, …): ranges in filters, metrics
in list items, sums in facets, and which numbers a deployment offers. Answers the live service
gives are read from it over HTTP; shapes it never gives (an older deployment, a malformed
answer) come from tiny servers."""

from __future__ import annotations

import pytest

from queryapi import ApiError, Capabilities, Client, InvalidRequest, QueryFilters
from queryapi.records import EMPTY
from tests.support.numbered import add_numbered_queries

from .servers import Answer, TinyServer, routes

KEY = "tdk_live_bnVtYmVycyBvZiB0aGUgY2xpZW50IG9rIG9rIG9rIG9rIG9rIG9rIG9rIG9r"
PROJECT = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"
QUERY = {"id": "1", "project": PROJECT, "tags": [2], "query": "shoes", "language": "en",
         "country": "US", "updatedAt": "2026-03-04T05:06:07Z"}
PAGE = {"totalRecords": 1, "limit": 50, "currentPage": 1, "totalPages": 1,
        "nextPage": None, "prevPage": None}
FACETS = {"totalRecords": 3, "untagged": 1,
          "languages": [{"value": "en", "count": 3, "sums": {"clicks": 30, "position": 2.5}}],
          "countries": [{"value": "US", "count": 3, "sums": {"clicks": 30, "position": None}}],
          "tags": [{"id": 2, "count": 2, "sums": {"clicks": 20, "position": 1.5}}],
          "sums": {"clicks": 30, "position": 2.5}, "untaggedSums": {"clicks": 10,
                                                                    "position": None},
          "currency": "EUR", "metricCounts": {"clicks": 3, "volume": 0}}


# --- ranges in the filter ------------------------------------------------------------------


def test_a_range_is_sent_with_only_its_bounds_and_read_back_the_same():
    filters = QueryFilters(metric_ranges={"volume": (100, 5000), "position": (None, 10.5)})
    body = filters.to_body()
    assert body == {"metricRanges": {"volume": {"min": 100, "max": 5000},
                                     "position": {"max": 10.5}}}
    assert QueryFilters.from_body(body) == filters
    assert hash(QueryFilters.from_body(body)) == hash(filters)
    assert QueryFilters(metric_ranges={}).to_body() == {} == QueryFilters().to_body()


@pytest.mark.parametrize(("ranges", "sentence"), [
    ({"volume": (None, None)}, "The volume range needs a least or a greatest value."),
    ({"volume": (10, 5)}, "The volume range's least value (10) is greater than its greatest "
                          "(5)."),
    ({"volume": ("10", None)}, "The least of the volume range is a number, not '10'."),
    ({"clicks": (float("nan"), None)}, "The least of the clicks range is a number, not nan."),
    ({"clicks": (True, None)}, "The least of the clicks range is a number, not True."),
])
def test_a_range_that_cannot_be_is_refused_with_a_sentence(ranges, sentence):
    with pytest.raises(InvalidRequest) as caught:
        QueryFilters(metric_ranges=ranges)
    assert str(caught.value) == sentence


def test_a_stored_filter_with_a_broken_range_is_a_sentence():
    with pytest.raises(InvalidRequest) as caught:
        QueryFilters.from_body({"metricRanges": {"volume": {"min": 9, "max": 1}}})
    assert str(caught.value) == ("The filter could not be read: in filter, the volume range's "
                                 "least value (9) is greater than its greatest (1).")
    with pytest.raises(InvalidRequest, match=r"filter.metricRanges.volume.min is not a number"):
        QueryFilters.from_body({"metricRanges": {"volume": {"min": "many"}}})


# --- what is sent, what is read ------------------------------------------------------------


def test_metrics_are_asked_for_and_read_by_name():
    item = {**QUERY, "metrics": {"clicks": 120, "position": 4.5, "volume": None}}
    answer = {"page": PAGE, "results": [item, QUERY]}
    with (TinyServer(routes({("POST", "/api/queries/list"): lambda s: Answer(200, answer)}))
          as server, Client(server.url, KEY) as client):
        page = client.list_queries(PROJECT, sort=[("clicks", "DESC")], include=["metrics"])
        plain = client.list_queries(PROJECT)
    assert server.seen[0].body == {"page": 1, "limit": 50, "include": ["metrics"],
                                   "sort": [{"field": "clicks", "direction": "DESC"}]}
    assert "include" not in server.seen[1].body
    assert dict(page.results[0].metrics) == {"clicks": 120, "position": 4.5}
    assert page.results[1].metrics == EMPTY == plain.results[1].metrics


def test_facet_sums_are_asked_for_and_read_for_every_count():
    with (TinyServer(routes({("POST", "/api/queries/facets"): lambda s: Answer(200, FACETS)}))
          as server, Client(server.url, KEY) as client):
        facets = client.facets(PROJECT, QueryFilters(metric_ranges={"clicks": (1, None)}),
                               sums=["clicks", "position"])
    assert server.seen[0].body == {"metricRanges": {"clicks": {"min": 1}},
                                   "sums": ["clicks", "position"]}
    assert facets.sums == {"clicks": 30, "position": 2.5}
    assert facets.untagged_sums == {"clicks": 10, "position": None}
    assert facets.language_sums["en"] == {"clicks": 30, "position": 2.5}
    assert facets.country_sums["US"]["position"] is None
    assert facets.tag_sums[2] == {"clicks": 20, "position": 1.5}
    assert facets.currency == "EUR"
    assert facets.metric_counts == {"clicks": 3, "volume": 0}
    assert facets.tags == ((2, 2),)


def test_facets_of_a_deployment_without_numbers_have_none():
    plain = {key: value for key, value in FACETS.items()
             if key not in ("sums", "untaggedSums", "currency", "metricCounts")}
    plain = {**plain, "languages": [{"value": "en", "count": 3}], "countries": [],
             "tags": [{"id": 2, "count": 2}]}
    with (TinyServer(routes({("POST", "/api/queries/facets"): lambda s: Answer(200, plain)}))
          as server, Client(server.url, KEY) as client):
        facets = client.facets(PROJECT)
    assert server.seen[0].body == {}
    assert (facets.sums, facets.tag_sums, facets.metric_counts, facets.currency) == \
        (EMPTY, EMPTY, EMPTY, None)


@pytest.mark.parametrize(("payload", "problem"), [
    ({**FACETS, "sums": {"clicks": "many"}}, "sums.clicks is not a number ('many')"),
    ({**FACETS, "metricCounts": {"clicks": -1}}, "metricCounts.clicks is a negative count (-1)"),
    ({**FACETS, "tags": [{"id": 2, "count": 2, "sums": []}]}, "tags[0].sums is not a JSON "
                                                               "object"),
])
def test_malformed_sums_are_a_sentence(payload, problem):
    with (TinyServer(routes({("POST", "/api/queries/facets"): lambda s: Answer(200, payload)}))
          as server, Client(server.url, KEY) as client, pytest.raises(ApiError) as caught):
        client.facets(PROJECT, sums=["clicks"])
    assert str(caught.value) == ("The service's answer to POST /api/queries/facets could not "
                                 f"be read: {problem}.")


# --- which numbers a deployment offers -----------------------------------------------------


def _document(sort_fields: list[str], ranges: bool) -> dict:
    filter_properties = {"sort": {"type": "array",
                                  "items": {"$ref": "#/components/schemas/QuerySortItem"}}}
    if ranges:
        filter_properties["metricRanges"] = {"x-tagdesk-extension": True, "type": "object"}
    return {"openapi": "3.1.0", "paths": {}, "components": {"schemas": {
        "QuerySortItem": {"properties": {"field": {"enum": sort_fields}}},
        "QueryListRequest": {"properties": filter_properties}}}}


@pytest.mark.parametrize(("document", "numbers"), [
    (_document(["query", "id", "volume", "clicks", "cpc"], ranges=True),
     ("clicks", "volume", "cpc")),
    (_document(["query", "id", "volume", "clicks"], ranges=False), ()),
    (_document(["query", "language", "country", "updatedAt", "id"], ranges=True), ()),
])
def test_the_numbers_offered_are_those_the_sort_lists_where_the_filter_has_ranges(
        document, numbers):
    with (TinyServer(routes({("GET", "/api/openapi.json"): lambda s: Answer(200, document)}))
          as server, Client(server.url, KEY) as client):
        assert client.capabilities().numbers == numbers


# --- the live service ----------------------------------------------------------------------

NUMBERED = [("red shoes", "en", "US", ["sale"], {"clicks": 120, "volume": 5000,
                                                  "position": 2.0, "impressions": 1000}),
            ("blue shoes", "en", "US", [], {"clicks": 30, "volume": 800,
                                            "position": 6.0, "impressions": 3000}),
            ("green shoes", "en", "DE", [], {"volume": 50}),
            ("socks", "en", "US", [], None)]


@pytest.fixture
def numbered(world, client):
    if not client.capabilities().numbers:
        pytest.skip("the service does not offer numbers yet")
    add_numbered_queries(world, NUMBERED)
    return world


def test_the_live_service_offers_the_seven_numbers(client, numbered):
    assert client.capabilities().numbers == ("clicks", "impressions", "ctr", "position",
                                             "volume", "cpc", "difficulty")
    assert "metricRanges" in client.capabilities().filter_fields
    assert isinstance(client.capabilities(), Capabilities)


def test_the_live_service_sorts_filters_and_sums_by_a_number(client, numbered):
    project = numbered.project_id
    page = client.list_queries(project, QueryFilters(metric_ranges={"volume": (100, None)}),
                               sort=[("volume", "DESC")], include=["metrics"])
    assert [query.query for query in page.results] == ["red shoes", "blue shoes"]
    assert page.results[0].metrics["clicks"] == 120
    facets = client.facets(project, sums=["clicks", "volume", "position"])
    assert facets.sums["clicks"] == 150 and facets.sums["volume"] == 5850
    assert facets.sums["position"] == pytest.approx((2.0 * 1000 + 6.0 * 3000) / 4000)
    assert facets.untagged_sums["clicks"] == 30
    assert facets.metric_counts["volume"] == 3 and facets.metric_counts["clicks"] == 2
