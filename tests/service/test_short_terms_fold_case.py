"""Short text filters (1–2 characters on SQLite, up to 4 on PostgreSQL, counted ahead in
`text_gram_counts`) fold case in every script, exactly as longer ones do on the same
database: "ä" finds "Äpfel", "σο" finds "ΣΟΦΙΑ". Their totals stay exact through every kind
of write, and a database migrated from before the folding (0013) is folded and counted."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import create_engine, delete, insert, text, update

from service import create_app, search
from service.db import session_scope
from service.match_counts import MatchCounts
from service.models import Query
from service.search import COUNTED_GRAM_LENGTH
from service.validation import QueryListBody
from tests.service.folding import (
    dialect,
    expected_gram_counts,
    folded,
    grams,
    stored_gram_counts,
)
from tests.service.migrating import P1, gram_counts_after, migrate, query_id
from tests.support.databases import postgres_database_of_its_own

ROWS = [
    ("Äpfel", "de", "DE", []),
    ("äpfelmus", "de", "DE", ["brand"]),
    ("Öl", "de", "AT", []),
    ("öl wechsel", "de", "DE", []),
    ("ΣΟΦΙΑ", "el", "GR", []),
    ("σοφίας βιβλία", "el", "GR", []),
    ("STRASSE Straße ẞ", "de", "CH", []),
    ("ČESKÝ KRUMLOV", "cs", "CZ", []),
    ("Ærø Æble", "da", "DK", []),
    ("İstanbul ıssız", "tr", "TR", []),
    ("ǅemal ǄEMAL", "bs", "BA", []),
    ("Кофе МОСКВА", "ru", "RU", []),
    ("10 K Kelvin", "en", "US", []),
    ("ſhort long ſ", "en", "GB", []),
    ("snow ☃ boots 🥾", "en", "CA", []),
    ("plain ascii text", "en", "US", []),
]
# As the dashboard's search box sends them: a person types the first letters of a word.
FOUND = [
    ("ä", "Äpfel"),
    ("öl", "Öl"),
    ("σο", "ΣΟΦΙΑ"),
    ("ÄP", "äpfelmus"),
    ("Ö", "öl wechsel"),
    ("Σ", "σοφίας βιβλία"),
    ("če", "ČESKÝ KRUMLOV"),
    ("æ", "Ærø Æble"),
    ("кО", "Кофе МОСКВА"),
    ("мо", "Кофе МОСКВА"),
    ("ǆ", "ǅemal ǄEMAL"),
]


def listed(api, term: str, **body) -> tuple[int, list[str]]:
    """(totalRecords, the texts the filter returns)."""
    response = api.queries(query=term, limit=1000, **body)
    assert response.status_code == 200, response.text
    answer = response.json()
    return answer["page"]["totalRecords"], sorted(r["query"] for r in answer["results"])


def expected_matches(world, terms) -> dict[str, list[str]]:
    """The texts of the project each term matches, folded as the long filters fold, by the
    database's own means (tests/service/folding.py)."""
    def compute(session):
        texts = session.execute(text("SELECT query FROM queries WHERE project_id = :p"),
                                {"p": world.project_id}).scalars().all()
        folds = folded(session, [*texts, *terms])
        return {term: sorted(t for t in texts if folds[term] in folds[t]) for term in terms}
    return world.run(compute)


def short_terms(texts, longest: int = 2) -> set[str]:
    """Every string of one and two characters of the texts, as written, upper- and
    lower-cased; and of up to `longest` characters as written."""
    found = set()
    for value in texts:
        found |= grams(value, longest)
        for form in (value, value.upper(), value.lower()):
            found |= grams(form, 2)
    return found


def assert_short_terms_exact(api, world, terms) -> None:
    """Each term finds exactly the project's texts that contain it folded as the long
    filters fold, and counts them."""
    terms = sorted(set(terms))
    wanted = expected_matches(world, terms)
    wrong = {}
    for term in terms:
        total, found = listed(api, term)
        if not (total == len(found) and found == wanted[term]):
            wrong[term] = (total, found, wanted[term])
    assert wrong == {}


def assert_counters_exact(world) -> None:
    longest = COUNTED_GRAM_LENGTH[world.run(dialect)]
    world.run(lambda s: _compare(stored_gram_counts(s), expected_gram_counts(s, longest)))


def _compare(stored, expected):
    assert stored == expected


@pytest.fixture
def seeded(world):
    world.add_queries(ROWS)
    world.add_queries([("Äpfel", "de", "DE", [])], project_id=world.other_project_id)
    return world


@pytest.mark.parametrize(("term", "text_"), FOUND, ids=[term for term, _ in FOUND])
def test_a_short_term_finds_its_text_in_any_case(api, seeded, term, text_):
    total, found = listed(api, term)
    assert text_ in found
    assert total == len(found)


def test_every_short_term_matches_and_counts_as_long_terms_fold(api, seeded):
    # Every counted length; terms that are in no text, and characters folded specially.
    longest = COUNTED_GRAM_LENGTH[seeded.run(dialect)]
    terms = short_terms([value for value, *_rest in ROWS], longest)
    assert len(terms) > 350
    assert_short_terms_exact(api, seeded, terms | {
        "q", "zz", "☂", "ß", "ẞ", "ς", "σ", "k", "K", "s", "ſ", "ı", "i", "I", "İ", "ǅ", "Ǆ"})


def test_a_short_term_finds_whatever_its_longer_terms_find(api, seeded):
    """Typing a word: every text that its first letters find once they are too many to be
    counted (3 on SQLite, 5 on PostgreSQL), as written or in swapped case, the counted first
    letters find too."""
    longest = COUNTED_GRAM_LENGTH[seeded.run(dialect)]
    asked: dict[str, tuple[int, list[str]]] = {}

    def ask(term):
        if term not in asked:
            asked[term] = listed(api, term)
        return asked[term]

    for value, *_rest in ROWS:
        for word in value.split():
            if len(word) <= longest:
                continue
            typed = word[:longest + 1]
            for form in (typed, typed.swapcase()):
                _total, long_found = ask(form)
                assert form != typed or value in long_found, form
                for short in (form[:n] for n in range(1, longest + 1)):
                    total, found = ask(short)
                    assert set(long_found) <= set(found) and total == len(found), (form, short)


def test_a_short_term_with_codes_and_tags_is_matched_the_same(api, seeded):
    assert listed(api, "ÄP", languages=["DE"]) == (2, ["Äpfel", "äpfelmus"])
    assert listed(api, "ÄP", tagNames=["brand"]) == (1, ["äpfelmus"])
    assert listed(api, "ö", countries=["AT"]) == (1, ["Öl"])
    for field in ("language", "country", "query", "updatedAt"):
        for direction in ("ASC", "DESC"):
            sort = [{"field": field, "direction": direction}]
            assert listed(api, "σ", sort=sort) == (2, ["ΣΟΦΙΑ", "σοφίας βιβλία"]), sort


def test_short_totals_stay_exact_through_imports_inserts_edits_and_deletes(api, seeded):
    """After each kind of write, the counters are the texts counted afresh (folded by the long
    filters' means), and the terms of the texts written find and count exactly."""
    assert_counters_exact(seeded)
    assert listed(api, "ä")[0] == 2

    # An import (the admin layer, as `import-queries` and the demo do).
    seeded.add_queries([("ÄRMEL", "de", "DE", []), ("Ölfilter", "de", "DE", []),
                        ("ΣΠΊΤΙ", "el", "GR", [])])
    assert listed(api, "ä")[0] == 3
    assert listed(api, "öl")[0] == 3
    assert_short_terms_exact(api, seeded, short_terms(["ÄRMEL", "Ölfilter", "ΣΠΊΤΙ"]))
    assert_counters_exact(seeded)

    # Plain statements: one with many rows, and rows one by one.
    rows = [{"id": query_id(i), "project_id": seeded.project_id, "query": value,
             "language": "de", "country": "DE", "updated_at": datetime(2026, 1, 1)}
            for i, value in enumerate(["Übung", "ÜBER alles", "Æsop", "Ωmega", "ωραίο"])]
    seeded.run(lambda s: s.execute(insert(Query).values(rows[:2])))
    seeded.run(lambda s: [s.execute(insert(Query).values(row)) for row in rows[2:]])
    assert listed(api, "Ü") == (2, ["ÜBER alles", "Übung"])
    assert listed(api, "ω")[0] == 2
    assert_short_terms_exact(api, seeded, short_terms(row["query"] for row in rows))
    assert_counters_exact(seeded)

    # Text edits, and a query moved to the other project.
    seeded.run(lambda s: s.execute(update(Query).where(Query.query == "Öl")
                                   .values(query="ÖLSARDINEN")))
    seeded.run(lambda s: s.execute(update(Query).where(Query.query == "plain ascii text")
                                   .values(query="Ölkanne")))
    seeded.run(lambda s: s.execute(update(Query).where(Query.query == "Ærø Æble")
                                   .values(project_id=seeded.other_project_id)))
    assert listed(api, "ä") == (3, ["ÄRMEL", "Äpfel", "äpfelmus"])
    assert listed(api, "Æ") == (1, ["Æsop"])
    assert listed(api, "öl")[0] == 4
    assert_short_terms_exact(api, seeded, short_terms(
        ["Öl", "ÖLSARDINEN", "plain ascii text", "Ölkanne", "Ærø Æble"]))
    assert_counters_exact(seeded)

    # Deletes.
    seeded.run(lambda s: s.execute(delete(Query).where(Query.query.in_(
        ["äpfelmus", "ΣΟΦΙΑ", "Ölfilter"]))))
    assert listed(api, "ä") == (2, ["ÄRMEL", "Äpfel"])
    assert listed(api, "σο")[0] == 1
    assert_short_terms_exact(api, seeded, short_terms(["äpfelmus", "ΣΟΦΙΑ", "Ölfilter"]))
    assert_counters_exact(seeded)


# --- a database from before the folding (migration 0013) ----------------------------------

OLD_ROWS = [(value, language, country) for value, language, country, _tags in ROWS]


def _listed_by_the_service(url: str) -> dict[str, tuple[int, list[str]]]:
    """The brief's terms asked of the service's search on the migrated database."""
    app = create_app({"TESTING": True, "DATABASE_URL": url, "REDIS_URL": None})
    try:
        found = {}
        for term, _text in FOUND:
            with session_scope(app) as session:
                total, rows, _tags = search.list_queries(
                    session, P1, QueryListBody(query=term, limit=1000), MatchCounts())
                found[term] = (total, sorted(row.query for row in rows))
        return found
    finally:
        app.extensions["tagdesk_engine"].dispose()


def _rows_before_and_after(url: str) -> None:
    engine = create_engine(url)
    try:
        stored, expected = gram_counts_after(engine, "0012", OLD_ROWS, "0013")
        assert stored == expected and len(stored) > 200
        longest = COUNTED_GRAM_LENGTH[engine.dialect.name]
        with engine.connect() as connection:
            texts = connection.execute(text(
                "SELECT query FROM queries WHERE project_id = :p"), {"p": P1}).scalars().all()
            folds = folded(connection, [*texts, *(term for term, _text in FOUND)])
        migrate(engine, "head")  # the service runs on the whole schema
        found = _listed_by_the_service(url)
        for term, _text in FOUND:
            expected = sorted(t for t in texts if folds[term] in folds[t])
            assert found[term] == (len(expected), expected), term
        assert found["ä"] == (1, ["äpfelmus"])  # "Äpfel" is in P2

        # Undone, the counters are those of 0012 again (each database's lower()), and kept.
        migrate(engine, "0012", down=True)
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
                f"VALUES ('late', '{P1}', 'Ökologie', 'de', 'DE', '2026-01-02')"))
            recounted = {}
            for project_id, value in connection.execute(text(
                    "SELECT project_id, lower(query) FROM queries")):
                for gram in grams(value, longest):
                    recounted[project_id, gram] = recounted.get((project_id, gram), 0) + 1
            assert stored_gram_counts(connection) == recounted
        migrate(engine, "0013")
        with engine.connect() as connection:
            assert stored_gram_counts(connection) == expected_gram_counts(connection, longest)
    finally:
        engine.dispose()


def test_queries_written_before_the_folding_are_folded_and_counted_sqlite(tmp_path):
    _rows_before_and_after(f"sqlite:///{tmp_path / 'old.sqlite3'}")


@pytest.mark.postgres
def test_queries_written_before_the_folding_are_folded_and_counted_postgres():
    with postgres_database_of_its_own("tagdesk_test_folding_") as url:
        _rows_before_and_after(url)
