"""PostgreSQL: text filters counted from the words of the project's texts (migration 0023,
service/word_index.py). Proved against the texts themselves, lower-cased by the database and
matched here in Python; the index against one rebuilt from the texts after every kind of load;
and the fallback to counting row by row whenever the index is behind."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import pytest
from pyroaring import BitMap
from sqlalchemy import create_engine, insert, text

from service import imports
from service.models import Query
from service.search import COUNTED_GRAM_LENGTH
from tests.service.folding import folded, folded_texts
from tests.service.migrating import P1, P2, migrate, migrated_with_rows, query_id
from tests.support.databases import database_for, postgres_database_of_its_own

pytestmark = pytest.mark.postgres

ROWS = [
    ("Laufschuhe Damen", "de", "DE", ["brand"]),
    ("laufschuhe herren laufschuhe", "de", "AT", []),  # a word twice: one query
    ("GRÖSSE 39  Schuhe", "de", "DE", []),  # two spaces: an empty word between
    ("größe 40 schuhe", "de", "CH", ["sale"]),
    ("running shoes", "en", "US", []),
    ("shoes shoestring shoe", "en", "GB", []),  # three words that hold "shoe"
    ("50% off_sale / a_b", "en", "US", []),  # LIKE's own characters, taken literally
    ("Ärger über Öl", "de", "DE", []),
    ("ΣΟΦΊΑ Σοφία", "el", "GR", []),
    ("İstanbul\u00a0evleri", "tr", "TR", []),  # no-break space: one word
    ("<b>x</b>'; DROP TABLE queries; --", "en", "US", []),
    ("snow ☃ boots 🥾", "en", "CA", []),
]
ABSENT = ["qqq", "zzzz", "x%y", "é_é", "schuhez", "laufschuhe damen herren"]
WORDS_STATEMENT = "LEFT JOIN text_words"


@pytest.fixture
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for("postgres", request, tmp_path, sqlite_template)


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    world.add_queries([("laufschuhe", "de", "DE", [])], project_id=world.other_project_id)
    return world


def terms_of(texts) -> set[str]:
    """Every string of three characters or more of the texts' words, as written and
    upper-cased."""
    found = set()
    for value in texts:
        for word in value.split(" "):
            for variant in (word, word.upper()):
                found |= {variant[i:j] for i in range(len(variant))
                          for j in range(i + 3, len(variant) + 1)}
    return found


def expected_counts(world, terms) -> dict[str, int]:
    def count(session):
        texts = [value for project_id, value in folded_texts(session)
                 if project_id == world.project_id]
        folds = folded(session, terms)
        return {term: sum(folds[term] in value for value in texts) for term in terms}
    return world.run(count)


def listed(api, term: str) -> tuple[int, set[str]]:
    response = api.queries(query=term, limit=1000)
    assert response.status_code == 200, response.text
    body = response.json()
    return body["page"]["totalRecords"], {row["query"] for row in body["results"]}


def stored_index(world) -> dict[tuple[str, int], set[int]]:
    rows = world.run(lambda s: s.execute(text(
        "SELECT w.word, w.chunk, w.keys FROM text_words w JOIN projects p "
        "ON p.number = w.project_number WHERE p.id = :p"), {"p": world.project_id}).all())
    return {(word, chunk): set(BitMap.deserialize(keys)) for word, chunk, keys in rows}


def rebuilt_index(world) -> dict[tuple[str, int], set[int]]:
    """The words of the project's texts, from the texts lower-cased by the database, cut here."""
    rows = world.run(lambda s: s.execute(text(
        "SELECT pk, lower(query) FROM queries WHERE project_id = :p"),
        {"p": world.project_id}).all())
    index: dict[tuple[str, int], set[int]] = defaultdict(set)
    for pk, value in rows:
        for word in value.split(" "):
            if word:
                index[word, pk >> 16].add(pk)
    return dict(index)


def versions(world) -> tuple[int, int]:
    return world.run(lambda s: tuple(s.execute(text(
        "SELECT texts_version, words_version FROM projects WHERE id = :p"),
        {"p": world.project_id}).one()))


def test_every_term_of_the_words_counts_exactly_the_rows_it_matches(api, seeded, statements):
    terms = sorted(terms_of(row[0] for row in ROWS) | set(ABSENT))
    assert len(terms) > 300
    wanted = expected_counts(seeded, terms)
    assert sum(1 for count in wanted.values() if count) > 250
    wrong = {}
    for term in terms:
        total, found = listed(api, term)
        if not total == len(found) == wanted[term]:
            wrong[term] = (total, len(found), wanted[term])
    assert wrong == {}
    # Every term of five characters or more without a space was counted from the words
    # (shorter ones alone are counted ahead, text_gram_counts).
    from_words = [term for term in terms
                  if len(term) > COUNTED_GRAM_LENGTH["postgresql"] and " " not in term]
    assert len(from_words) > 150
    assert sum(WORDS_STATEMENT in statement for statement in statements) == len(from_words)


def test_a_word_twice_and_several_words_in_one_text_count_the_query_once(api, seeded):
    assert listed(api, "laufschuhe")[0] == 2
    assert listed(api, "shoe") == (2, {"running shoes", "shoes shoestring shoe"})
    assert listed(api, "SCHUHE")[0] == 4
    assert listed(api, "off_")[0] == 1
    assert listed(api, "0%")[0] == 1
    assert listed(api, "ΣΟΦ")[0] == 1
    assert listed(api, "bul\u00a0ev")[0] == 1


def test_the_count_is_the_words_while_they_are_current(api, seeded):
    # A piece taken out of the index behind the versions' back changes the count: the count
    # is read from the words, not from the texts.
    assert expected_counts(seeded, ["herren"]) == {"herren": 1}
    seeded.run(lambda s: s.execute(text("DELETE FROM text_words WHERE word = 'herren'")))
    assert listed(api, "herren") == (0, set())
    assert listed(api, "laufschuhe")[0] == 2


def test_a_change_the_words_do_not_follow_is_counted_row_by_row(api, seeded, statements):
    # Not through the load: a plain INSERT moves texts_version, and the words fall behind.
    seeded.run(lambda s: s.execute(insert(Query).values(
        id=query_id(900), project_id=seeded.project_id, query="Laufschuhe Kinder",
        language="de", country="DE", updated_at=datetime(2026, 1, 1))))
    texts_version, words_version = versions(seeded)
    assert texts_version == words_version + 1
    statements.clear()
    assert listed(api, "laufschuhe")[0] == 3
    assert listed(api, "kinder")[0] == 1
    assert not any(WORDS_STATEMENT in s and "keys" not in s for s in statements)
    assert any("count(*)" in s and "query_texts" in s for s in statements)


def test_the_words_follow_every_load(seeded, api):
    assert stored_index(seeded) == rebuilt_index(seeded)
    # Many ranges, added by two connections at once, each range a transaction of its own.
    rows = [(f"Wanderschuhe Modell {n} grün", "de", "DE", [], None) for n in range(70)]
    rows += [(f"hiking boots model {n}", "en", "US", [seeded.tags["brand"]], None)
             for n in range(70)]
    rows += [("running shoes", "en", "US", [], None)]  # already there: not added again
    added = seeded.run(lambda s: imports.add_rows(
        s, seeded.project_id, [rows[:50], rows[50:]], batch_rows=9))
    assert added == 140
    texts_version, words_version = versions(seeded)
    assert texts_version == words_version
    assert stored_index(seeded) == rebuilt_index(seeded)
    assert listed(api, "wanderschuhe")[0] == 70
    assert listed(api, "GRÜN")[0] == 70
    assert listed(api, "odell")[0] == 70  # "Modell", lowered
    assert listed(api, "model")[0] == 140
    assert listed(api, "schuhe")[0] == 74
    # The other project's words are its own.
    other = api.call("POST", "/api/queries/list", json={"query": "laufschuhe"},
                     headers={"x-project-id": seeded.other_project_id})
    assert other.json()["page"]["totalRecords"] == 1


def test_migration_0023_indexes_existing_projects_and_goes_back():
    with postgres_database_of_its_own("tagdesk_test_words_") as url:
        engine = create_engine(url)
        try:
            migrated_with_rows(engine, "0022", ROWS)
            migrate(engine, "0023")
            with engine.connect() as connection:
                assert connection.execute(text(
                    "SELECT count(*) FROM projects WHERE words_version = texts_version"
                )).scalar_one() == 2
                stored = {(project, word, chunk): set(BitMap.deserialize(keys))
                          for project, word, chunk, keys in connection.execute(text(
                              "SELECT p.id::text, w.word, w.chunk, w.keys FROM text_words w "
                              "JOIN projects p ON p.number = w.project_number"))}
                expected: dict = defaultdict(set)
                for pk, project, value in connection.execute(text(
                        "SELECT pk, project_id::text, lower(query) FROM queries")):
                    for word in value.split(" "):
                        if word:
                            expected[project, word, pk >> 16].add(pk)
            assert stored == dict(expected)
            assert {project for project, _word, _chunk in stored} == {P1, P2}
            migrate(engine, "0022", down=True)
            with engine.connect() as connection:
                assert connection.execute(text(
                    "SELECT to_regclass('text_words') IS NULL AND NOT EXISTS (SELECT FROM "
                    "information_schema.columns WHERE column_name = 'words_version')"
                )).scalar_one()
        finally:
            engine.dispose()
