"""Every method of the client against the real service over loopback HTTP."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from queryapi import (
    AuthError,
    Client,
    InvalidRequest,
    Mode,
    NotFound,
    Project,
    Query,
    QueryFilters,
    Tag,
    TagAssignment,
)


def test_repr_and_modes(client, world, live_service):
    assert repr(client) == (f"Client(base_url='{live_service.url}', "
                            f"key='tdk_live_…{world.key[-4:]}', mode=interactive)")
    assert client.masked_key == f"tdk_live_…{world.key[-4:]}"
    other = client.with_mode(Mode.BACKGROUND)
    try:
        assert other.mode is Mode.BACKGROUND and other.base_url == client.base_url
        assert other.masked_key == client.masked_key
        assert other.list_projects().results  # the same key works
    finally:
        other.close()
    with Client(live_service.url, world.key) as scoped:
        assert scoped.list_projects().page.total_records == 2


def test_list_projects_and_all_projects(client, world):
    page = client.list_projects()
    assert {p.name for p in page.results} == {"Shop search", "Help centre"}
    assert all(isinstance(p, Project) for p in page.results)
    assert page.page.total_records == 2 and page.page.next_page is None

    first = client.list_projects(page=1, limit=1)
    assert len(first.results) == 1 and first.page.next_page == 2
    assert first.page.prev_page is None and first.page.total_pages == 2

    assert {p.id for p in client.all_projects()} == {world.project_id, world.other_project_id}


def test_list_queries_with_filters_sort_and_paging(client, world):
    world.add_queries([
        ("red shoes", "en", "US", ["brand", "sale"]),
        ("rote schuhe", "de", "DE", ["brand"]),
        ("blue shoes", "en", "GB", []),
        ("shoe sizes", "en", "US", ["question"]),
    ])
    page = client.list_queries(world.project_id, sort=[("query", "asc")], limit=2)
    assert [q.query for q in page.results] == ["blue shoes", "red shoes"]
    assert page.page.total_records == 4 and page.page.next_page == 2
    second = client.list_queries(world.project_id, sort=[("query", "ASC")], page=2, limit=2)
    assert [q.query for q in second.results] == ["rote schuhe", "shoe sizes"]

    red = page.results[1]
    assert isinstance(red, Query) and red.project == world.project_id
    assert set(red.tags) == {world.tags["brand"], world.tags["sale"]}
    assert (red.language, red.country) == ("en", "US")
    assert red.updated_at.tzinfo is not None and red.updated_at.utcoffset().total_seconds() == 0
    assert abs(datetime.now(UTC) - red.updated_at).total_seconds() < 600

    def texts(filters):
        found = client.list_queries(world.project_id, filters, sort=[("query", "ASC")])
        return [q.query for q in found.results]

    assert texts(QueryFilters(text="SHOE")) == ["blue shoes", "red shoes", "shoe sizes"]
    assert texts(QueryFilters(languages=("de",))) == ["rote schuhe"]
    assert texts(QueryFilters(countries=("US",), tag_ids=(world.tags["question"],))) == [
        "shoe sizes"]
    assert texts(QueryFilters(tag_names=("brand",))) == ["red shoes", "rote schuhe"]
    assert texts(QueryFilters(text="shoes", tag_names=("sale",))) == ["red shoes"]


def test_iter_queries_walks_2500_in_pages_of_1000(client, world, many_queries):
    seen = client.iter_queries(world.project_id)
    assert not isinstance(seen, list | tuple)  # a generator: nothing fetched yet
    assert client.stats.requests == 0
    first = next(seen)
    assert client.stats.requests == 1 and isinstance(first, Query)
    rest = list(seen)
    queries = [first, *rest]
    assert len(queries) == 2500
    assert len({q.id for q in queries}) == 2500
    assert {q.query for q in queries} == {row[0] for row in many_queries}
    assert client.stats.requests == 3  # 1000 + 1000 + 500


def test_iter_queries_with_filters(client, world, many_queries):
    sale = list(client.iter_queries(world.project_id, QueryFilters(tag_names=("sale",))))
    assert len(sale) == 500 and all(world.tags["sale"] in q.tags for q in sale)
    german = list(client.iter_queries(world.project_id, QueryFilters(languages=("de",)),
                                      sort=[("query", "DESC")]))
    assert [q.query for q in german] == sorted((q.query for q in german), reverse=True)
    assert len(german) == 500


def test_list_tags_and_iter_tags(client, world):
    page = client.list_tags(world.project_id)
    assert [t.name for t in page.results] == ["brand", "local", "question", "sale"]
    brand = page.results[0]
    assert brand == Tag(world.tags["brand"], world.project_id, "brand", "#1f77b4")
    assert [t.name for t in client.list_tags(world.project_id, name="A").results] == [
        "brand", "local", "sale"]
    by_id = client.list_tags(world.project_id, sort=[("id", "DESC")], limit=2)
    assert [t.id for t in by_id.results] == sorted(world.tags.values(), reverse=True)[:2]
    assert by_id.page.next_page == 2
    assert {t.id for t in client.iter_tags(world.project_id)} == set(world.tags.values())
    assert list(client.iter_tags(world.other_project_id)) == []


def test_set_tags_replaces_and_returns_records_in_order(client, world, api):
    world.add_queries([("red shoes", "en", "US", ["sale"]), ("blue shoes", "en", "GB", [])])
    brand, local = world.tags["brand"], world.tags["local"]
    updated = client.set_tags(world.project_id, [
        TagAssignment("blue shoes", "en", "GB", (brand, local)),
        TagAssignment("red shoes", "en", "US", ()),
    ])
    assert [q.query for q in updated] == ["blue shoes", "red shoes"]
    assert set(updated[0].tags) == {brand, local} and updated[1].tags == ()
    listed = {q["query"]: q["tags"] for q in api.queries().json()["results"]}
    assert set(listed["blue shoes"]) == {brand, local} and listed["red shoes"] == []
    # a record turns into the item that sets its tags
    again = client.set_tags(world.project_id, [updated[1].assignment([brand])])
    assert again[0].tags == (brand,) and again[0].id == updated[1].id
    assert client.set_tags(world.project_id, []) == []


def test_set_tags_on_2500_queries_takes_three_calls(client, world, many_queries, api):
    brand = world.tags["brand"]
    items = (TagAssignment(q, lang, country, (brand,)) for q, lang, country, _ in many_queries)
    updated = client.set_tags(world.project_id, items)  # any iterable, here a generator
    assert client.stats.requests == 3
    assert [q.query for q in updated] == [row[0] for row in many_queries]
    assert all(q.tags == (brand,) for q in updated)
    assert api.queries(tagNames=["brand"], limit=1).json()["page"]["totalRecords"] == 2500
    assert api.queries(tagNames=["sale"], limit=1).json()["page"]["totalRecords"] == 0


def test_set_tags_refuses_repeated_items_before_sending(client, world):
    world.add_queries([("red shoes", "en", "US", [])])
    items = [TagAssignment("red shoes", "en", "US", (world.tags["brand"],)),
             TagAssignment("red shoes", "EN", "us", ())]
    with pytest.raises(InvalidRequest) as caught:
        client.set_tags(world.project_id, items)
    assert "Item 1 repeats item 0" in str(caught.value)
    assert client.stats.requests == 0


def test_errors_are_sentences(client, world, make_client):
    with pytest.raises(AuthError) as caught:
        make_client(key="tdk_live_" + "x" * 43).list_projects()
    assert caught.value.status == 401 and caught.value.message == "Invalid API key."

    _, _, their_project = world.new_org()
    with pytest.raises(NotFound) as caught:
        client.list_queries(their_project)
    assert caught.value.status == 404 and str(caught.value) == "Project not found."

    with pytest.raises(InvalidRequest) as caught:
        client.list_queries(world.project_id, sort=[("colour", "ASC"), ("query", "UP")])
    error = caught.value
    assert error.status == 400 and len(error.details) == 2
    assert error.message == " ".join(error.details)
    assert "'colour' is not a sort field" in error.message

    with pytest.raises(InvalidRequest) as caught:
        client.list_queries("not-a-uuid")
    assert "x-project-id must be a project UUID" in str(caught.value)

    world.add_queries([("red shoes", "en", "US", [])])
    with pytest.raises(NotFound) as caught:
        client.set_tags(world.project_id, [TagAssignment("green shoes", "en", "US", ())])
    assert caught.value.details == ['No query "green shoes" (en, US) in this project.']
    with pytest.raises(InvalidRequest) as caught:
        client.set_tags(world.project_id, [TagAssignment("red shoes", "en", "US", (999999,))])
    assert str(caught.value) == "Tag 999999 is not a tag of this project."

    with pytest.raises(InvalidRequest):
        client.list_queries(world.project_id, limit=5000)
    with pytest.raises(InvalidRequest):
        client.list_queries("")


def test_revoked_key_is_an_auth_error(make_client, world):
    from service.org import admin

    key = world.new_key()
    fresh = make_client(key=key)
    assert fresh.list_projects().results
    world.run(lambda session: admin.revoke_key(session, key))
    with pytest.raises(AuthError):
        fresh.list_projects()


def test_bad_keys_and_urls_are_refused_up_front():
    with pytest.raises(AuthError):
        Client("http://127.0.0.1:9", "")
    with pytest.raises(AuthError) as caught:
        Client("http://127.0.0.1:9", "tdk_live_abc\ndef")
    assert "abc" not in str(caught.value)
    with pytest.raises(ValueError):
        Client("127.0.0.1:9", "tdk_live_" + "a" * 40)
