"""Counted short terms (migrations 0009 and 0013): the total of a text filter of up to 4
characters (PostgreSQL) or 2 (SQLite) is read from `text_gram_counts`, kept by triggers. Proved
against the rows the filter itself returns, and against the counters recomputed from the
texts, folded as the long filters fold them (tests/service/folding.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import create_engine, delete, insert, text, update

from service.models import Query
from service.search import COUNTED_GRAM_LENGTH
from tests.service.folding import (
    expected_gram_counts,
    folded,
    folded_texts,
    grams,
    stored_gram_counts,
)
from tests.service.migrating import gram_counts_after, query_id
from tests.support.databases import postgres_database_of_its_own

ROWS = [
    ("Laufschuhe Damen", "de", "DE", ["brand"]),
    ("laufschuhe herren", "de", "AT", []),
    ("GRÖSSE 39 Schuhe", "de", "DE", []),
    ("größe 40 schuhe", "de", "CH", ["sale"]),
    ("running shoes", "en", "US", []),
    ("aaaa", "en", "GB", []),  # one query, however often a string repeats in it
    ("50% off_sale / a_b", "en", "US", []),  # LIKE's own characters, taken literally
    ("Ärger über Öl", "de", "DE", []),
    ("café crème", "fr", "FR", []),
    ("snow ☃ boots 🥾", "en", "CA", []),
]
# Terms that are in no text, in any case.
ABSENT = ["q", "zz", "☂", "x%", "é_", "oooo", "qq q"]


def terms_of(texts, longest: int) -> set[str]:
    """Every string of up to `longest` characters of the texts, as written and upper-cased."""
    found = set()
    for value in texts:
        found |= grams(value, longest) | grams(value.upper(), longest)
    return found


def dialect(world) -> str:
    return world.run(lambda s: s.get_bind().dialect.name)


def listed(api, term: str) -> tuple[int, int]:
    """(totalRecords, the number of rows the filter returns)."""
    response = api.queries(query=term, limit=1000)
    assert response.status_code == 200, response.text
    body = response.json()
    return body["page"]["totalRecords"], len(body["results"])


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    world.add_queries([("laufschuhe", "de", "DE", [])], project_id=world.other_project_id)
    return world


def test_every_short_term_counts_exactly_the_rows_it_matches(api, seeded):
    longest = COUNTED_GRAM_LENGTH[dialect(seeded)]
    terms = sorted(terms_of([row[0] for row in ROWS], longest) | set(ABSENT))
    assert len(terms) > 200

    def expected(session) -> dict[str, int]:
        # Folded by the long filters' own means, matched here: no search code, no counter.
        texts = [value for project_id, value in folded_texts(session)
                 if project_id == seeded.project_id]
        folds = folded(session, terms)
        return {term: sum(folds[term] in value for value in texts) for term in terms}

    wanted = seeded.run(expected)
    assert sum(1 for count in wanted.values() if count) > 150
    wrong = {}
    for term in terms:
        total, rows = listed(api, term)
        if not total == rows == wanted[term]:
            wrong[term] = (total, rows, wanted[term])
    assert wrong == {}


def test_case_and_literal_characters(api, seeded):
    assert listed(api, "s")[0] == 7
    assert listed(api, "S")[0] == 7
    assert listed(api, "SC")[0] == 4
    assert listed(api, "a")[0] == 5
    assert listed(api, "%")[0] == 1
    assert listed(api, "_")[0] == 1
    assert listed(api, "/")[0] == 1
    assert listed(api, "☃")[0] == 1
    assert listed(api, "q")[0] == 0
    assert listed(api, "ÖL")[0] == 1  # folded beyond ASCII, as the long terms are
    assert listed(api, "é")[0] == 1
    assert listed(api, "É")[0] == 1
    if dialect(seeded) == "postgresql":
        assert listed(api, "schu")[0] == 4


def test_the_counters_are_the_texts_counted_afresh(seeded):
    longest = COUNTED_GRAM_LENGTH[dialect(seeded)]

    def check():
        def compare(session):
            assert stored_gram_counts(session) == expected_gram_counts(session, longest)
        seeded.run(compare)

    check()
    seeded.add_queries([("Neue Schuhe", "de", "DE", []), ("aa", "en", "US", [])])
    check()
    seeded.run(lambda s: s.execute(delete(Query).where(Query.query == "aaaa")))
    check()
    seeded.run(lambda s: s.execute(update(Query).where(Query.query == "running shoes")
                                   .values(query="Trail Boots")))
    check()
    seeded.run(lambda s: s.execute(update(Query).where(Query.query == "café crème")
                                   .values(project_id=seeded.other_project_id)))
    check()
    # Tags and times change nothing.
    seeded.run(lambda s: s.execute(update(Query).values(updated_at=Query.updated_at)))
    check()


def test_queries_inserted_by_plain_statements_are_counted_too(seeded):
    # Not through the import (which counts once, at its end, on PostgreSQL): the triggers.
    longest = COUNTED_GRAM_LENGTH[dialect(seeded)]
    rows = [{"id": query_id(i), "project_id": seeded.project_id, "query": f"Plain Text {i}",
             "language": "en", "country": "US", "updated_at": datetime(2026, 1, 1)}
            for i in range(30)]
    seeded.run(lambda s: s.execute(insert(Query).values(rows[:10])))
    seeded.run(lambda s: [s.execute(insert(Query).values(row)) for row in rows[10:]])

    def compare(session):
        assert stored_gram_counts(session) == expected_gram_counts(session, longest)
    seeded.run(compare)


def test_totals_follow_other_writers(api, seeded):
    assert listed(api, "aa") == (1, 1)
    seeded.add_queries([("aa", "en", "US", [])])
    assert listed(api, "aa") == (2, 2)
    seeded.run(lambda s: s.execute(delete(Query).where(Query.query == "aaaa")))
    assert listed(api, "aa") == (1, 1)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_truncating_the_queries_empties_the_counters(api, seeded):
    seeded.run(lambda s: s.execute(text("TRUNCATE queries CASCADE")))
    assert seeded.run(stored_gram_counts) == {}
    seeded.add_queries([("aa", "en", "US", [])])
    assert listed(api, "a") == (1, 1)


def test_a_short_term_is_counted_from_its_row(api, seeded, statements):
    listed(api, "sc")
    counting = [s for s in statements if "text_gram_counts" in s]
    assert len(counting) == 1


def _upgrade_from_0008_with_rows(url: str) -> dict:
    """Migrate to 0008, add rows as a deployment of then would hold them, then to head; the
    counters the migration made, and those recomputed."""
    engine = create_engine(url)
    try:
        stored, expected = gram_counts_after(engine, "0008", ROWS, "head")
        return {"stored": stored, "expected": expected}
    finally:
        engine.dispose()


def test_the_migration_counts_the_queries_already_there_sqlite(tmp_path):
    counts = _upgrade_from_0008_with_rows(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    assert counts["stored"] == counts["expected"] and len(counts["stored"]) > 100


@pytest.mark.postgres
def test_the_migration_counts_the_queries_already_there_postgres():
    with postgres_database_of_its_own("tagdesk_test_migration_") as url:
        counts = _upgrade_from_0008_with_rows(url)
    assert counts["stored"] == counts["expected"] and len(counts["stored"]) > 100
