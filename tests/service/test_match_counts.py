"""Remembered counts of tag-free text filters (service/match_counts.py, migration 0008):
always the count of the rows as they are now, and not recounted while they cannot change."""

import sys

import pytest
from sqlalchemy import delete, select, text, update

from service.models import Project, Query

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
    return [s for s in seen if "count(" in s.lower()]


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
