"""Remembered counts of text filters (service/match_counts.py, migrations 0008 and 0021):
always the count of the rows and links as they are now, and not recounted while they cannot
change."""

import sys

import pytest
from sqlalchemy import delete, func, select, text, update

from service import admin
from service.models import Project, Query, Tag, query_tags

ROWS = [
    ("laufschuhe damen", "de", "DE", ["brand"]),
    ("Laufschuhe Herren", "de", "AT", []),
    ("größe 39 schuhe", "de", "DE", []),
    ("running shoes", "en", "US", ["sale"]),
]


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    return world


def total(api, **body) -> int:
    response = api.queries(**body)
    assert response.status_code == 200, response.text
    return response.json()["page"]["totalRecords"]


def counting(seen: list[str]) -> list[str]:
    """The statements that count: row by row, or from the words (PostgreSQL)."""
    return [s for s in seen if "count(" in s.lower() or "text_words" in s]


def version(world) -> int:
    return world.run(lambda s: s.scalar(
        select(Project.texts_version).where(Project.id == world.project_id)))


def test_a_remembered_count_follows_queries_added_and_deleted_by_anyone(api, seeded):
    assert total(api, query="schuhe") == 3
    assert total(api, query="schuhe", languages=["de"], countries=["DE"]) == 2
    # Another writer (an import) adds a match: the next count sees it.
    seeded.add_queries([("schuhe kinder", "de", "DE", [])])
    assert total(api, query="schuhe") == 4
    assert total(api, query="schuhe", languages=["de"], countries=["DE"]) == 3
    seeded.run(lambda s: s.execute(delete(Query).where(Query.query == "laufschuhe damen")))
    assert total(api, query="schuhe") == 3
    assert total(api, query="schuhe", languages=["de"], countries=["DE"]) == 2


def test_a_text_filter_is_counted_once_while_only_tags_change(api, seeded, statements):
    assert total(api, query="schuhe") == 3
    assert counting(statements), "the first request counts"
    statements.clear()
    tag = seeded.tags["question"]
    response = api.set_tags([{"query": "größe 39 schuhe", "language": "de", "country": "DE",
                              "tagIds": [tag]}])
    assert response.status_code == 200, response.text
    for page in (1, 2, 3):
        response = api.queries(query="schuhe", limit=1, page=page,
                               sort=[{"field": "query", "direction": "ASC"}])
        assert response.json()["page"]["totalRecords"] == 3
    assert counting(statements) == []


def test_filters_with_tags_are_always_counted_afresh(api, seeded):
    brand = seeded.tags["brand"]
    assert total(api, query="schuhe", tagIds=[brand]) == 1
    response = api.set_tags([{"query": "größe 39 schuhe", "language": "de", "country": "DE",
                              "tagIds": [brand]}])
    assert response.status_code == 200, response.text
    assert total(api, query="schuhe", tagIds=[brand]) == 2


def test_a_filter_with_tags_is_counted_once_while_its_tags_keep_their_queries(
        api, seeded, statements):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert total(api, query="schuhe", tagIds=[brand]) == 1
    assert total(api, query="schuhe", languages=["de"], tagIds=[brand, sale]) == 1
    statements.clear()
    # Another tag's links change: these filters' matches cannot.
    response = api.set_tags([{"query": "Laufschuhe Herren", "language": "de", "country": "AT",
                              "tagIds": [seeded.tags["question"]]}])
    assert response.status_code == 200, response.text
    for field, direction in (("query", "ASC"), ("updatedAt", "DESC"), ("query", "DESC")):
        response = api.queries(query="schuhe", tagIds=[brand], limit=1,
                               sort=[{"field": field, "direction": direction}])
        assert response.json()["page"]["totalRecords"] == 1
    assert counting(statements) == []
    # A link of one of their tags: counted afresh.
    response = api.set_tags([{"query": "größe 39 schuhe", "language": "de", "country": "DE",
                              "tagIds": [sale]}])
    assert response.status_code == 200, response.text
    assert total(api, query="schuhe", tagIds=[brand]) == 1
    assert total(api, query="schuhe", languages=["de"], tagIds=[brand, sale]) == 2
    assert total(api, query="schuhe", tagIds=[sale]) == 1
    # Taken away again: the count follows.
    response = api.set_tags([{"query": "laufschuhe damen", "language": "de", "country": "DE",
                              "tagIds": []}])
    assert response.status_code == 200, response.text
    assert total(api, query="schuhe", tagIds=[brand]) == 0
    assert total(api, query="schuhe", languages=["de"], tagIds=[brand, sale]) == 1


def test_tags_named_or_numbered_are_remembered_apart(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert total(api, query="s", tagIds=[brand]) == 1
    assert total(api, query="s", tagIds=[sale]) == 1
    assert total(api, query="s", tagIds=[brand], tagNames=["sale"]) == 0
    assert total(api, query="s", tagIds=[brand, sale]) == 2


def links_version(world, name: str) -> int:
    return world.run(lambda s: s.scalar(
        select(Tag.links_version).where(Tag.id == world.tags[name])))


def test_a_tags_links_version_moves_with_each_change_of_its_links(seeded):
    def moved(name, change):
        before = links_version(seeded, name)
        seeded.run(change)
        return links_version(seeded, name) - before

    def pk(text_):
        return select(Query.pk).where(Query.query == text_).scalar_subquery()

    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert moved("brand", lambda s: s.execute(query_tags.insert().values(
        query_pk=pk("running shoes"), tag_id=brand, updated_at=func.now()))) >= 1
    assert moved("brand", lambda s: s.execute(query_tags.delete().where(
        query_tags.c.query_pk == pk("running shoes"), query_tags.c.tag_id == brand))) >= 1
    # A link moved to another query: same count, other matches.
    assert moved("brand", lambda s: s.execute(query_tags.update().where(
        query_tags.c.tag_id == brand).values(query_pk=pk("größe 39 schuhe")))) >= 1
    # A link moved to another tag: both tags' matches change.
    assert moved("sale", lambda s: s.execute(query_tags.update().where(
        query_tags.c.tag_id == brand).values(tag_id=sale))) >= 1
    assert moved("brand", lambda s: s.execute(query_tags.update().where(
        query_tags.c.tag_id == sale, query_tags.c.query_pk == pk("größe 39 schuhe"))
        .values(tag_id=brand))) >= 1
    # Only the link's own time: nothing moves.
    assert moved("brand", lambda s: s.execute(query_tags.update().values(
        updated_at=query_tags.c.updated_at))) == 0
    # Links of another tag: this one's stays.
    assert moved("brand", lambda s: s.execute(query_tags.delete().where(
        query_tags.c.tag_id == sale))) == 0
    # Many rows at once take the bulk path (service/bulk_load.py), which counts links itself.
    rows = [(*admin.normalize_query(f"bulk {i}", "en", "US"), [brand], None)
            for i in range(admin.BULK_ROWS)]
    assert moved("brand", lambda s: admin.insert_queries(s, seeded.project_id, rows)) >= 1
    assert moved("sale", lambda s: admin.insert_queries(
        s, seeded.project_id, [(*admin.normalize_query("one more", "en", "US"), [sale], None)])
    ) >= 1
    assert moved("brand", lambda s: s.execute(delete(Query).where(
        Query.query.like("bulk %")))) >= 1


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_truncating_the_links_empties_every_tags_count_and_moves_its_version(seeded):
    before = links_version(seeded, "brand")
    seeded.run(lambda s: s.execute(text("TRUNCATE query_tags")))
    assert links_version(seeded, "brand") > before
    counts = seeded.run(lambda s: s.execute(select(Tag.query_count)).scalars().all())
    assert set(counts) == {0}


def test_counts_are_kept_apart_per_project_and_per_filter(api, seeded):
    seeded.add_queries([("schuhe", "de", "DE", [])], project_id=seeded.other_project_id)
    assert total(api, query="schuhe") == 3
    assert total(api, query="SCHUHE") == 3
    assert total(api, query="schuhe", languages=["en"]) == 0
    other = api.call("POST", "/api/queries/list", json={"query": "schuhe"},
                     headers={"x-project-id": seeded.other_project_id})
    assert other.json()["page"]["totalRecords"] == 1


def test_the_version_changes_with_the_rows_and_not_with_tags(seeded):
    def moved(change):
        before = version(seeded)
        seeded.run(change)
        return version(seeded) - before

    assert moved(lambda s: s.execute(update(Query).where(Query.query == "running shoes")
                                     .values(updated_at=Query.updated_at))) == 0
    assert moved(lambda s: s.execute(update(Query).where(Query.query == "running shoes")
                                     .values(query="trail shoes"))) >= 1
    assert moved(lambda s: s.execute(update(Query).where(Query.query == "trail shoes")
                                     .values(country="GB"))) >= 1
    assert moved(lambda s: seeded.add_queries([("new", "en", "US", [])])) >= 1
    assert moved(lambda s: s.execute(delete(Query).where(Query.query == "new"))) >= 1


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_truncating_the_queries_changes_every_version(seeded):
    before = version(seeded)
    seeded.run(lambda s: s.execute(text("TRUNCATE queries CASCADE")))
    assert version(seeded) > before


def test_a_remembered_filter_takes_little_memory_however_large(api, seeded, service_app):
    codes = [f"x{i:03d}" for i in range(998)]
    assert total(api, query="schuhe", languages=["de", *codes],
                 countries=["DE", "AT", *codes]) == 3
    remembered = service_app.extensions["tagdesk_match_counts"]._counts
    (key,) = list(remembered)
    assert sum(sys.getsizeof(part) for part in key) < 300


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_first_request_finds_few_matches_once_and_reads_their_rows_by_key(
        api, seeded, statements):
    # Few: under half a percent of the project's queries (service/search.py).
    seeded.add_queries([(f"filler {i}", "en", "US", []) for i in range(1000)])

    def walks() -> int:  # statements that look for the text's matches (or their bitmaps)
        return sum("query_texts" in s or "text_words" in s for s in statements)

    def page(number: int, limit: int = 2) -> tuple[int, list[str]]:
        response = api.queries(query="schuhe", languages=["de"], limit=limit, page=number,
                               sort=[{"field": "query", "direction": "ASC"}])
        assert response.status_code == 200, response.text
        body = response.json()
        return body["page"]["totalRecords"], [row["query"] for row in body["results"]]

    statements.clear()
    total, first = page(1)
    assert total == 3 and len(first) == 2
    assert walks() == 1, "found once, by the count; the page reads them by key"
    statements.clear()
    total, second = page(2)
    assert total == 3 and len(second) == 1
    assert walks() == 1, "the count remembered: the page finds them itself"
    # Read by key or found again, the same rows in the same order (the database's collation).
    assert page(1, limit=50) == (3, first + second)
    assert set(first + second) == {"laufschuhe damen", "Laufschuhe Herren", "größe 39 schuhe"}
    brand = seeded.tags["brand"]
    statements.clear()
    response = api.queries(query="schuhe", tagIds=[brand])
    assert [row["query"] for row in response.json()["results"]] == ["laufschuhe damen"]
    assert walks() == 1
