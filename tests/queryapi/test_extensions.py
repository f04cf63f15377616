"""The client side of the extensions beyond create_tag: the filters' tag logic, facets and saved
views, against the live service over HTTP; the same service behind a proxy that hides every
extension (a deployment without them); and tiny servers for answers the service never gives
(malformed records, a lost answer to a create)."""

from __future__ import annotations

import pytest

from queryapi import (
    NUMBER_NAMES,
    ApiError,
    Capabilities,
    Client,
    Conflict,
    Facets,
    InvalidRequest,
    Mode,
    NotFound,
    QueryFilters,
    SavedView,
    TransportError,
)
from tests.support.clients import FAST
from tests.support.reference_proxy import EXTENSION_FIELDS

from .servers import Answer, RawServer, TinyServer, hang_up_before_answer, routes

KEY = "tdk_live_ZXh0ZW5zaW9ucyBvZiB0aGUgY2xpZW50IG9rIG9rIG9rIG9rIG9rIG9r"
PROJECT = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"
OPENAPI = "/api/openapi.json"

# --- QueryFilters --------------------------------------------------------------------------


def test_unused_extension_fields_leave_the_body_as_the_reference_has_it():
    plain = QueryFilters(text="shoe", languages="de", tag_ids=(3,), tag_names=("brand",))
    assert plain.to_body() == {"query": "shoe", "languages": ["de"], "tagIds": ["3"],
                               "tagNames": ["brand"]}
    assert QueryFilters(tag_match="any", untagged=False).to_body() == {}


def test_extension_fields_are_sent_only_when_they_filter():
    filters = QueryFilters(tag_names=["brand", "sale"], tag_match="all",
                           exclude_tag_ids=[4], exclude_tag_names="question", untagged=True)
    assert filters.exclude_tag_ids == (4,) and filters.exclude_tag_names == ("question",)
    assert filters.to_body() == {"tagNames": ["brand", "sale"], "tagMatch": "all",
                                 "excludeTagIds": [4], "excludeTagNames": ["question"],
                                 "untagged": True}


def test_a_tag_match_that_is_not_any_or_all_is_refused():
    with pytest.raises(InvalidRequest, match='tag_match is "any" or "all"'):
        QueryFilters(tag_match="ALL")


# --- the live service ----------------------------------------------------------------------


def test_the_service_offers_every_extension(client):
    assert client.capabilities() == Capabilities(create_tag=True, tag_logic=True,
                                                 saved_views=True, rules=True, rule_apply=True,
                                                 tag_editing=True, tag_merging=True,
                                                 tag_edits=True, query_versions=True,
                                                 imports=True, common_words=True,
                                                 suggestions=True,
                                                 filter_fields=EXTENSION_FIELDS,
                                                 numbers=NUMBER_NAMES)


def test_tag_logic_filters_the_list_as_the_service_does(client, seeded):
    def texts(**fields):
        page = client.list_queries(seeded.project_id, QueryFilters(**fields), [("query", "ASC")])
        return [query.query for query in page.results]

    assert texts(tag_names=("brand", "sale"), tag_match="all") == ["running shoes"]
    assert texts(exclude_tag_names=("sale",), languages=("en",)) == ["shoe store"]
    assert texts(exclude_tag_ids=(seeded.tags["brand"],)) == ["laufschuhe", "shoe store"]
    assert texts(untagged=True) == ["laufschuhe", "shoe store"]


def test_facets_are_read_into_a_record(client, seeded):
    facets = client.facets(seeded.project_id, QueryFilters(languages=("de",)))
    assert isinstance(facets, Facets)
    assert (facets.total_records, facets.untagged) == (2, 1)
    assert facets.languages == (("de", 2), ("en", 2))
    assert dict(facets.countries) == {"AT": 1, "DE": 1, "GB": 0, "US": 0}
    assert dict(facets.tags)[seeded.tags["brand"]] == 1
    assert client.facets(seeded.project_id).total_records == 4


def test_views_are_created_listed_renamed_and_deleted(client, seeded):
    filters = QueryFilters(languages=("de",), exclude_tag_names=("brand",))
    view = client.create_view(seeded.project_id, "DE unbranded", filters, [("query", "desc")])
    assert view == SavedView(view.id, seeded.project_id, "DE unbranded", filters,
                             (("query", "DESC"),), 1)
    other = client.create_view(seeded.project_id, "all", QueryFilters())
    assert other.sort is None and other.filters == QueryFilters() and other.total_records == 4
    assert [v.name for v in client.list_views(seeded.project_id)] == ["all", "DE unbranded"]
    renamed = client.rename_view(seeded.project_id, view.id, "Deutsch")
    assert renamed == SavedView(view.id, seeded.project_id, "Deutsch", filters,
                                (("query", "DESC"),), 1)
    assert client.delete_view(seeded.project_id, other.id) is None
    assert client.list_views(seeded.project_id) == (renamed,)
    with pytest.raises(NotFound, match="Saved view not found"):
        client.delete_view(seeded.project_id, other.id)


def test_a_views_count_is_live_and_its_filter_reads_back_as_sent(client, seeded):
    filters = QueryFilters(text="schuh", tag_ids=(seeded.tags["brand"], seeded.tags["sale"]),
                           tag_match="all", exclude_tag_ids=(seeded.tags["local"],))
    view = client.create_view(seeded.project_id, "both", filters)
    assert view.total_records == 0
    # Sent as strings (the reference's type for queries/list), read back as ids.
    assert view.filters == filters
    hit = next(client.iter_queries(seeded.project_id, QueryFilters(text="schuhe damen")))
    client.set_tags(seeded.project_id, [hit.assignment(seeded.tags.values())])
    assert client.list_views(seeded.project_id)[0].total_records == 0  # carries "local" now
    client.set_tags(seeded.project_id, [hit.assignment([seeded.tags["brand"],
                                                        seeded.tags["sale"]])])
    assert client.list_views(seeded.project_id)[0].total_records == 1


def test_conflicts_and_bad_input_are_the_services_sentences(client, seeded):
    client.create_view(seeded.project_id, "Mine", QueryFilters())
    with pytest.raises(Conflict, match='A saved view named "Mine" already exists'):
        client.create_view(seeded.project_id, "MINE", QueryFilters())
    assert client.stats.requests == 2  # not sent again
    with pytest.raises(InvalidRequest, match="'untagged'"):
        client.create_view(seeded.project_id, "x", QueryFilters(untagged=True,
                                                                tag_names=("brand",)))
    with pytest.raises(InvalidRequest, match="at most 100 characters"):
        client.create_view(seeded.project_id, "x" * 101, QueryFilters())
    for bad in ({"name": 5}, {"filters": {"languages": ["de"]}}):
        with pytest.raises(InvalidRequest):
            client.create_view(seeded.project_id, **{"name": "x", "filters": QueryFilters(),
                                                     **bad})
    with pytest.raises(InvalidRequest):
        client.rename_view(seeded.project_id, True, "x")


def test_another_organizations_view_is_not_found(client, make_client, seeded):
    _org, their_key, their_project = seeded.new_org("Rival")
    theirs = make_client(key=their_key).create_view(their_project, "theirs", QueryFilters())
    with pytest.raises(NotFound, match="Saved view not found"):
        client.rename_view(seeded.project_id, theirs.id, "ours")
    with pytest.raises(NotFound, match="Project not found"):
        client.list_views(their_project)


# --- a deployment without the extensions ---------------------------------------------------


def test_without_the_extensions_nothing_is_offered_and_the_reference_works(
        without_extensions, seeded):
    with Client(without_extensions.url, seeded.key) as client:
        assert client.capabilities() == Capabilities(create_tag=False, tag_logic=False,
                                                     saved_views=False)
        for call in (lambda: client.facets(seeded.project_id),
                     lambda: client.list_views(seeded.project_id),
                     lambda: client.create_view(seeded.project_id, "x", QueryFilters()),
                     lambda: client.create_tag(seeded.project_id, "x")):
            with pytest.raises(NotFound):
                call()
        # Filters that use no extension field are the reference's body, as ever.
        page = client.list_queries(seeded.project_id, QueryFilters(languages=("de",)))
        assert page.page.total_records == 2


def test_each_capability_is_its_own_marked_operation():
    document = {"openapi": "3.1.0", "paths": {
        "/api/queries/facets": {"post": {"x-tagdesk-extension": True}},
        "/api/views/list": {"post": {"x-tagdesk-extension": "yes"}},
        "/api/tags/create": {"get": {"x-tagdesk-extension": True}}}}
    with (TinyServer(routes({("GET", OPENAPI): lambda s: Answer(200, document)})) as server,
          Client(server.url, KEY) as client):
        assert client.capabilities() == Capabilities(tag_logic=True)


# --- answers the service never gives -------------------------------------------------------


@pytest.mark.parametrize(("path", "payload", "problem"), [
    ("/api/queries/facets", {"totalRecords": 1, "untagged": 0, "languages": [],
                             "countries": [], "tags": [{"id": "x", "count": 1}]},
     "tags[0].id is not a whole number ('x')"),
    ("/api/queries/facets", {"totalRecords": -1, "untagged": 0, "languages": [],
                             "countries": [], "tags": []},
     "totalRecords is a negative count (-1)"),
    ("/api/queries/facets", {"totalRecords": 1, "untagged": 0, "languages": [{"value": "de"}],
                             "countries": [], "tags": []}, "languages[0].count is missing"),
    ("/api/views/list", {"results": [{"id": 1, "project": PROJECT, "name": "x",
                                      "filters": {"tagMatch": "most"}, "sort": None,
                                      "totalRecords": 0}]},
     "results[0].filters.tagMatch is not \"any\" or \"all\" ('most')"),
    ("/api/views/list", {"results": [{"id": 1, "project": PROJECT, "name": "x",
                                      "filters": [], "sort": None, "totalRecords": 0}]},
     "results[0].filters is not a JSON object"),
    ("/api/views/list", {"views": []}, "results is missing"),
])
def test_malformed_answers_are_api_errors_with_a_sentence(path, payload, problem):
    with (TinyServer(routes({("POST", path): lambda s: Answer(200, payload)})) as server,
          Client(server.url, KEY) as client, pytest.raises(ApiError) as caught):
        if path.endswith("facets"):
            client.facets(PROJECT)
        else:
            client.list_views(PROJECT)
    assert str(caught.value) == (
        f"The service's answer to POST {path} could not be read: {problem}.")


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_create_whose_answer_was_lost_is_not_sent_again(mode):
    with (RawServer(hang_up_before_answer) as server,
          Client(server.url, KEY, mode, **FAST) as client):
        with pytest.raises(TransportError):
            client.create_view(PROJECT, "once", QueryFilters())
        assert server.accepted == 1
