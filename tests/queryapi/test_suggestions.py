"""The client side of suggested tags (suggestion_status, refresh_suggestions,
accept_suggestions, reject_suggestions; include "suggestions"; the filter's
suggested_tag_ids and min_confidence) against the live service over HTTP."""

from __future__ import annotations

import pytest

from queryapi import InvalidRequest, QueryFilters
from service.learning.learner import of_app
from tests.service.test_suggestions_api import rows


def test_status_refresh_list_accept_and_reject(client, world, service_app):
    project = world.project_id
    assert client.capabilities().suggestions
    world.add_queries(rows())
    client.refresh_suggestions(project)
    of_app(service_app).wait(120)
    status = client.suggestion_status(project)
    assert status.state == "ready" and status.learned_from == 24
    assert 0.5 <= status.default_confidence <= 1 and status.needed is None
    brand = world.tags["brand"]
    assert brand in dict(status.tags)
    page = client.list_queries(project, QueryFilters(suggested_tag_ids=(brand,)),
                               include=["suggestions"], limit=1000)
    assert page.page.total_records == dict(status.tags)[brand] > 1
    for query in page.results:
        assert brand in {suggestion.tag_id for suggestion in query.suggestions}
        assert brand not in query.tags
    facets = client.facets(project, QueryFilters(min_confidence=0.5))
    assert dict(facets.suggested)[brand] >= page.page.total_records
    first, second = page.results[0], page.results[1]
    assert client.reject_suggestions(project, brand, [first.id]) == 1
    done = client.accept_suggestions(project, brand, query_ids=[second.id])
    assert done.tagged == 1 and done.cursor is None
    assert [(edit.query, edit.remove) for edit in done.queries] == [(second.query, (brand,))]
    after = client.list_queries(project, QueryFilters(suggested_tag_ids=(brand,)), limit=1000)
    assert {query.id for query in after.results} == {
        query.id for query in page.results} - {first.id, second.id}
    tagged = client.list_queries(project, QueryFilters(text=second.query), limit=10).results
    assert tagged[0].source_of(brand).suggested
    client.edit_tags(project, done.queries)  # Undo
    assert brand not in client.list_queries(
        project, QueryFilters(text=second.query), limit=10).results[0].tags


def test_the_status_says_why_a_learning_failed(client, world, service_app, monkeypatch):
    from service.learning.learner import BROKEN
    from service.suggestions import learning

    def broken(*_args, **_kwargs):
        raise MemoryError

    monkeypatch.setattr(learning, "learn", broken)
    world.add_queries(rows())
    client.refresh_suggestions(world.project_id)
    of_app(service_app).wait(120)
    status = client.suggestion_status(world.project_id)
    assert (status.state, status.learned_at, status.problem) == ("learning", None,
                                                                 BROKEN["learn"])


def test_the_filter_round_trips_and_checks_its_confidence():
    filters = QueryFilters(suggested_tag_ids=(3,), min_confidence=0.8)
    assert filters.to_body() == {"suggestedTagIds": [3], "minConfidence": 0.8}
    assert QueryFilters.from_body(filters.to_body()) == filters
    assert filters.reads_tags
    with pytest.raises(InvalidRequest):
        QueryFilters(min_confidence=1.5)


def test_accept_needs_query_ids_or_filters(client, world):
    with pytest.raises(InvalidRequest):
        client.accept_suggestions(world.project_id, 1)
