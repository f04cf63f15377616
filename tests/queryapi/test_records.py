"""Pieces that need no server: batching, filters, paging decisions, Retry-After."""

from __future__ import annotations

import email.utils
import time

import pytest

from queryapi import ApiError, InvalidRequest, Page, QueryFilters, TagAssignment
from queryapi.client import MAX_BODY_BYTES, batches
from queryapi.records import read_queries
from queryapi.transport import encode, parse_retry_after


def test_batches_of_at_most_1000_items():
    items = [TagAssignment(f"q{i}", "en", "US", (1,)) for i in range(2500)]
    assert [len(b) for b in batches(items)] == [1000, 1000, 500]
    assert [item for b in batches(items) for item in b] == items
    assert list(batches([])) == []


def test_batches_stay_under_the_body_limit():
    long = "ü" * 1000  # 2,000 bytes of UTF-8 each
    items = [TagAssignment(f"{long}{i}", "en", "US", tuple(range(20))) for i in range(1200)]
    sizes = [len(b) for b in batches(items)]
    assert sum(sizes) == 1200 and max(sizes) < 1000 and len(sizes) == 3
    for batch in batches(items):
        assert len(encode({"queries": [i.to_body() for i in batch]})) <= MAX_BODY_BYTES


def test_filters_body():
    assert QueryFilters().to_body() == {}
    assert QueryFilters(text="shoe", languages=["en", "de"], countries=("US",), tag_ids=[3, 4],
                        tag_names=("sale",)).to_body() == {
        "query": "shoe", "languages": ["en", "de"], "countries": ["US"], "tagIds": ["3", "4"],
        "tagNames": ["sale"]}
    assert QueryFilters(languages="en").languages == ("en",)
    assert hash(QueryFilters(tag_ids=[1])) == hash(QueryFilters(tag_ids=(1,)))
    assert TagAssignment("q", "en", "US", [2, 1]).tag_ids == (2, 1)


@pytest.mark.parametrize(("page", "results", "following"), [
    (Page(10, 3, 1, 4, 2, None), 3, 2),
    (Page(10, 3, 4, 4, None, 3), 1, None),
    (Page(10, 3, 1, 4, None, None), 3, 2),  # nextPage absent: totalPages decides
    (Page(10, 3, 2, 4, 3, 1), 0, None),  # an empty page ends the walk
    (Page(10, 3, 2, 4, 2, 1), 3, None),  # a nextPage that does not move on ends it too
])
def test_which_page_comes_next(page, results, following):
    assert page.following(results) == following


def test_retry_after_forms():
    assert parse_retry_after("7", 1.0) == 7
    assert parse_retry_after(" 2.5 ", 1.0) == 2.5
    assert parse_retry_after(None, 30.0) == 30
    assert parse_retry_after("soon", 30.0) == 30
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 <= parse_retry_after(in_ten, 1.0) <= 10
    assert parse_retry_after("-5", 1.0) == 0


def test_set_tags_answer_shapes():
    record = {"id": "q", "project": "p", "tags": [], "query": "x", "language": "en",
              "country": "US", "updatedAt": "2026-11-21T09:46:00.123Z"}
    assert len(read_queries([record], "PATCH x")) == 1
    assert len(read_queries({"results": [record]}, "PATCH x")) == 1
    with pytest.raises(ApiError, match="results is not a list"):
        read_queries({"queries": 1}, "PATCH x")


def test_items_must_be_assignments():
    from queryapi import Client

    client = Client("http://127.0.0.1:9", "tdk_live_" + "a" * 40)
    with pytest.raises(InvalidRequest, match="Item 0 is not a TagAssignment"):
        client.set_tags("6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d", [{"query": "x"}])
    assert client.stats.requests == 0
