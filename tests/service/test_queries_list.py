"""POST /api/queries/list over real HTTP: filters, sort, pagination."""

import json
import time

import pytest

from tests.support.api import Api

ROWS = [
    ("laufschuhe damen", "de", "DE", ["brand"]),
    ("Laufschuhe Herren", "de", "AT", ["sale"]),
    ("running shoes", "en", "US", ["brand", "sale"]),
    ("running shoes", "en", "GB", []),
    ("chaussures de course", "fr", "FR", ["question"]),
    ("100%_cotton shirt", "en", "US", []),
    ("1000 cotton shirts", "en", "GB", ["local"]),
    ("größe 39 schuhe", "de", "DE", []),
]


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def texts(response):
    assert response.status_code == 200, response.text
    return sorted(r["query"] for r in response.json()["results"])


def test_unfiltered_returns_every_query_with_page_object(api, seeded):
    response = api.queries()
    body = response.json()
    assert response.status_code == 200
    assert body["page"] == {"totalRecords": 8, "limit": 50, "currentPage": 1, "totalPages": 1,
                            "nextPage": None, "prevPage": None}
    record = body["results"][0]
    assert set(record) == {"id", "project", "tags", "query", "language", "country", "updatedAt"}
    assert record["project"] == seeded.project_id
    assert all(isinstance(t, int) for r in body["results"] for t in r["tags"])


def test_records_have_millisecond_utc_timestamps(api, seeded):
    stamp = api.queries(limit=1).json()["results"][0]["updatedAt"]
    assert time.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    assert len(stamp) == len("2026-11-21T09:46:00.123Z")


def test_text_filter_is_case_insensitive_substring(api, seeded):
    assert texts(api.queries(query="SCHUHE")) == [
        "Laufschuhe Herren", "größe 39 schuhe", "laufschuhe damen"]
    assert texts(api.queries(query="hoe")) == ["running shoes", "running shoes"]


def test_short_text_filter_uses_substring_too(api, seeded):
    assert texts(api.queries(query="ß")) == ["größe 39 schuhe"]
    assert len(texts(api.queries(query="sh"))) == 4


def test_text_filter_treats_percent_and_underscore_literally(api, seeded):
    assert texts(api.queries(query="%_c")) == ["100%_cotton shirt"]
    assert texts(api.queries(query="0%")) == ["100%_cotton shirt"]
    assert texts(api.queries(query="_")) == ["100%_cotton shirt"]
    assert texts(api.queries(query='"quoted"')) == []


def test_empty_text_filter_means_no_filter(api, seeded):
    assert api.queries(query="").json()["page"]["totalRecords"] == 8


def test_language_and_country_filters_are_case_insensitive_any_of(api, seeded):
    assert len(texts(api.queries(languages=["DE"]))) == 3
    assert len(texts(api.queries(languages=["de", "FR"]))) == 4
    assert texts(api.queries(countries=["gb"])) == ["1000 cotton shirts", "running shoes"]
    assert texts(api.queries(languages=["en"], countries=["US"])) == [
        "100%_cotton shirt", "running shoes"]
    assert texts(api.queries(languages=["xx"])) == []


def test_tag_filters_match_any_of_the_named_tags(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert texts(api.queries(tagIds=[brand])) == ["laufschuhe damen", "running shoes"]
    assert len(texts(api.queries(tagIds=[str(brand), sale]))) == 3
    assert texts(api.queries(tagNames=["BRAND"])) == ["laufschuhe damen", "running shoes"]
    assert len(texts(api.queries(tagNames=["brand", "question"]))) == 3


def test_unknown_tags_match_nothing_without_error(api, seeded):
    assert texts(api.queries(tagIds=[99999])) == []
    assert texts(api.queries(tagIds=["not-a-number"])) == []
    assert texts(api.queries(tagNames=["no such tag"])) == []


def test_filters_combine_with_and(api, seeded):
    response = api.queries(query="shoe", languages=["en"], countries=["us"],
                           tagNames=["sale"], tagIds=[seeded.tags["brand"]])
    assert texts(response) == ["running shoes"]


def test_tags_of_another_project_do_not_match(api, seeded):
    other = seeded.run(lambda s: __import__("service.org.admin", fromlist=["x"]).create_tag(
        s, seeded.other_project_id, "brand", "#000000"))
    assert texts(api.queries(tagIds=[other])) == []


@pytest.mark.parametrize("field", ["query", "language", "country", "updatedAt", "id"])
def test_each_sort_field_both_ways(api, seeded, field):
    key = {"updatedAt": "updatedAt"}.get(field, field)
    ascending = api.queries(sort=[{"field": field, "direction": "ASC"}]).json()["results"]
    descending = api.queries(sort=[{"field": field, "direction": "desc"}]).json()["results"]
    values = [r[key] for r in ascending]
    assert values == sorted(values)
    assert [r[key] for r in descending] == sorted(values, reverse=True)


def test_sort_items_apply_in_order_and_tie_break_by_id(api, seeded):
    results = api.queries(sort=[{"field": "language"}, {"field": "country", "direction": "DESC"}]
                          ).json()["results"]
    keys = [(r["language"], r["country"]) for r in results]
    assert keys == sorted(keys, key=lambda k: (k[0], [-ord(c) for c in k[1]]))
    for a, b in zip(results, results[1:], strict=False):
        if (a["language"], a["country"]) == (b["language"], b["country"]):
            assert a["id"] < b["id"]


def test_default_sort_is_most_recently_updated_first(api, seeded):
    api.set_tags([{"query": "running shoes", "language": "en", "country": "GB",
                   "tagIds": [seeded.tags["local"]]}])
    first = api.queries(limit=1).json()["results"][0]
    assert (first["query"], first["country"]) == ("running shoes", "GB")


@pytest.mark.parametrize("sort,message", [
    ([{"field": "nope"}], "'sort.0.field': 'nope' is not a sort field"),
    ([{"field": "query", "direction": "UP"}], "'sort.0.direction': use ASC or DESC."),
    ([{"field": "query", "extra": 1}], "Unknown field 'sort.0.extra'."),
])
def test_bad_sort_is_400(api, seeded, sort, message):
    response = api.queries(sort=sort)
    assert response.status_code == 400
    assert any(m.startswith(message) for m in response.json()["message"])


def test_pagination_walks_every_record_once(api, seeded):
    seen, page = [], 1
    while page:
        body = api.queries(page=page, limit=3, sort=[{"field": "query"}]).json()
        seen += [r["id"] for r in body["results"]]
        assert body["page"]["totalPages"] == 3
        page = body["page"]["nextPage"]
    assert len(seen) == len(set(seen)) == 8


def test_pagination_edges(api, seeded):
    last = api.queries(page=3, limit=3).json()
    assert len(last["results"]) == 2
    assert last["page"]["nextPage"] is None and last["page"]["prevPage"] == 2
    past = api.queries(page=9, limit=3)
    assert past.status_code == 200
    assert past.json()["results"] == []
    assert past.json()["page"]["prevPage"] == 3
    one = api.queries(limit=1).json()
    assert len(one["results"]) == 1 and one["page"]["totalPages"] == 8
    assert api.queries(limit=1000).status_code == 200
    for bad in ({"limit": 1001}, {"limit": 0}, {"page": 0}, {"page": "2"}, {"limit": 2.5},
                {"page": True}, {"page": 10**10}):
        assert api.queries(**bad).status_code == 400, bad


def test_no_records(api, world):
    body = api.queries().json()
    assert body["results"] == []
    assert body["page"] == {"totalRecords": 0, "limit": 50, "currentPage": 1, "totalPages": 0,
                            "nextPage": None, "prevPage": None}


def test_empty_body_is_an_empty_filter(api, seeded):
    response = api.call("POST", "/api/queries/list", data=b"")
    assert response.status_code == 200
    assert response.json()["page"]["totalRecords"] == 8


def test_statements_of_one_shape_answer_each_request_with_its_own_values(
        api, seeded, live_service):
    """Filters without text run statements built once per shape: the same shape asked
    alternately of two projects, codes, tags and pages answers each as asked."""
    seeded.add_queries([("hilfe konto", "de", "CH", []), ("help account", "en", "US", [])],
                       project_id=seeded.other_project_id)
    other = Api(live_service.url, seeded.key, seeded.other_project_id)
    for _ in range(2):
        assert texts(other.queries()) == ["help account", "hilfe konto"]
        assert len(texts(api.queries())) == 8
        assert texts(other.queries(languages=["de"])) == ["hilfe konto"]
        assert texts(api.queries(languages=["fr"])) == ["chaussures de course"]
        assert texts(api.queries(languages=["en"], countries=["GB"])) == [
            "1000 cotton shirts", "running shoes"]
        assert texts(other.queries(languages=["en"], countries=["US"])) == ["help account"]
        assert texts(api.queries(countries=["DE", "AT"])) == [
            "Laufschuhe Herren", "größe 39 schuhe", "laufschuhe damen"]
        assert texts(api.queries(tagIds=[seeded.tags["brand"]])) == [
            "laufschuhe damen", "running shoes"]
        assert texts(api.queries(tagIds=[seeded.tags["sale"]])) == [
            "Laufschuhe Herren", "running shoes"]
        assert texts(api.queries(tagIds=[seeded.tags["sale"], seeded.tags["local"]])) == [
            "1000 cotton shirts", "Laufschuhe Herren", "running shoes"]
        assert texts(api.queries(tagIds=[seeded.tags["brand"], seeded.tags["question"]])) == [
            "chaussures de course", "laufschuhe damen", "running shoes"]
        assert texts(api.queries(tagNames=["sale"], languages=["en"])) == ["running shoes"]
        assert texts(api.queries(tagNames=["brand"], languages=["de"])) == ["laufschuhe damen"]
        assert texts(api.queries(tagIds=[seeded.tags["brand"]], tagNames=["sale"])) == [
            "running shoes"]
        assert texts(api.queries(tagIds=[seeded.tags["sale"]], tagNames=["local"])) == []
        pages = [api.queries(limit=3, page=page).json() for page in (1, 2, 3)]
        assert [len(page["results"]) for page in pages] == [3, 3, 2]
        assert len({r["id"] for page in pages for r in page["results"]}) == 8
        assert {page["page"]["totalRecords"] for page in pages} == {8}


def test_bodies_are_the_bytes_flask_json_writes(api, world):
    """Compact, key order kept, non-ASCII as UTF-8, one newline at the end: what jsonify
    writes, whichever serializer the service uses."""
    world.add_queries([('zoë "quoted" \\ back/slash \u2028 😀 größe', "de", "DE", ["brand"])])
    response = api.queries()
    expected = json.dumps(response.json(), ensure_ascii=False, separators=(",", ":")) + "\n"
    assert response.content == expected.encode()
    assert response.headers["Content-Type"] == "application/json"
    assert int(response.headers["Content-Length"]) == len(response.content)
