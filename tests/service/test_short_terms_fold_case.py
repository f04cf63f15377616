"""Short text filters (1–2 characters, counted from the count engine's bitmaps of the texts'
short strings) fold case in every script, exactly as longer ones do, by Unicode's simple case
folding on both databases: "ä" finds "Äpfel", "σο" finds "ΣΟΦΙΑ" and "ςο". Their totals stay
exact through every kind of write, and a database migrated from before the folding (0013) is
folded and counted (by that revision's means), then found by the engine at head."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy import create_engine, delete, insert, text, update

from service import create_app
from service.api.query_filters import list_queries
from service.bodies.validation import QueryListBody
from service.engine.held import Held
from service.engine.tables import Query
from service.store.db import session_scope
from tests.service import counters
from tests.service.counters import simple_fold
from tests.service.folding import expected_gram_counts, grams, stored_gram_counts
from tests.service.migrating import (
    COUNTED_GRAM_LENGTH,
    P1,
    gram_counts_after,
    migrate,
    query_id,
)
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
# Terms of at most this many characters are counted from the bitmaps of the texts' strings of
# that length, on both databases; longer ones from their words.
SHORT = 2


def listed(api, term: str, **body) -> tuple[int, list[str]]:
    """(totalRecords, the texts the filter returns)."""
    response = api.queries(query=term, limit=1000, **body)
    assert response.status_code == 200, response.text
    answer = response.json()
    return answer["page"]["totalRecords"], sorted(r["query"] for r in answer["results"])


def expected_matches(world, terms) -> dict[str, list[str]]:
    """The texts of the project each term matches, both folded by Unicode's simple case
    folding (tests/service/counters.py)."""
    def compute(session):
        texts = session.execute(text("SELECT query FROM queries WHERE project_id = :p"),
                                {"p": world.project_id}).scalars().all()
        return {term: sorted(t for t in texts if simple_fold(term) in simple_fold(t))
                for term in terms}
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
    """Each term finds exactly the project's texts that contain it, both folded, and counts
    them."""
    terms = sorted(set(terms))
    wanted = expected_matches(world, terms)
    wrong = {}
    for term in terms:
        total, found = listed(api, term)
        if not (total == len(found) and found == wanted[term]):
            wrong[term] = (total, found, wanted[term])
    assert wrong == {}


def assert_counters_exact(world) -> None:
    """Every project read once (a read builds again the bitmaps of a project written around
    the engine), then its bitmaps checked against its rows."""
    for project_id in (world.project_id, world.other_project_id):
        world.run(lambda s, p=project_id: list_queries(s, p, QueryListBody(), Held()))
    counters.assert_counters_exact(world)


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


def test_simple_case_folding_on_both_databases(api, world):
    """One character folds to one (Unicode's simple case folding), the same on both
    databases: "Σ" and "ς" are "σ", "ẞ" is "ß", but "ß" is not "ss", and "İ" stays."""
    world.add_queries([("ΣΟ", "el", "GR", []), ("ςο", "el", "GR", []), ("Äpfel", "de", "DE", []),
                       ("größe", "de", "DE", []), ("chaussures", "fr", "FR", []),
                       ("STRASSE", "de", "DE", []), ("İstanbul", "tr", "TR", [])])
    assert listed(api, "σο") == (2, ["ΣΟ", "ςο"])
    assert listed(api, "ΣΟ") == listed(api, "ςο") == (2, ["ΣΟ", "ςο"])
    assert listed(api, "ä") == listed(api, "Ä") == (1, ["Äpfel"])
    assert listed(api, "ß") == listed(api, "ẞ") == (1, ["größe"])
    assert listed(api, "ss") == (2, ["STRASSE", "chaussures"])
    assert listed(api, "İ") == (1, ["İstanbul"])
    assert listed(api, "i") == (0, [])
    assert listed(api, "größe") == listed(api, "GRÖẞE") == (1, ["größe"])


def test_every_short_term_matches_and_counts_as_long_terms_fold(api, seeded):
    # Every counted length; terms that are in no text, and characters folded specially.
    longest = SHORT
    terms = short_terms([value for value, *_rest in ROWS], longest)
    assert len(terms) > 350
    assert_short_terms_exact(api, seeded, terms | {
        "q", "zz", "☂", "ß", "ẞ", "ς", "σ", "k", "K", "s", "ſ", "ı", "i", "I", "İ", "ǅ", "Ǆ"})


def test_a_short_term_finds_whatever_its_longer_terms_find(api, seeded):
    """Typing a word: every text that its first letters find once they are too many to be
    counted (3), as written or in swapped case, the counted first letters find too."""
    longest = SHORT
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
    """After each kind of write, the bitmaps are those of the texts (folded afresh), and the
    terms of the texts written find and count exactly."""
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
                total, rows, _tags = list_queries(
                    session, P1, QueryListBody(query=term, limit=1000), Held())
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

        # Undone, the counters are those of 0012 again (each database's lower()), and kept.
        migrate(engine, "0012", down=True)
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO queries (id, project_id, query, language, country, updated_at) "
                f"VALUES ('{query_id(99)}', '{P1}', 'Ökologie', 'de', 'DE', '2026-01-02')"))
            recounted = {}
            for project_id, value in connection.execute(text(
                    "SELECT project_id, lower(query) FROM queries")):
                for gram in grams(value, longest):
                    recounted[project_id, gram] = recounted.get((project_id, gram), 0) + 1
            assert stored_gram_counts(connection) == recounted
        migrate(engine, "0013")
        with engine.connect() as connection:
            assert stored_gram_counts(connection) == expected_gram_counts(connection, longest)
            texts = connection.execute(text(
                "SELECT query FROM queries WHERE project_id = :p"), {"p": P1}).scalars().all()

        # At head, the count engine finds them, folded by simple case folding.
        migrate(engine, "head")
        found = _listed_by_the_service(url)
        for term, _text in FOUND:
            expected = sorted(t for t in texts if simple_fold(term) in simple_fold(t))
            assert found[term] == (len(expected), expected), term
        assert found["ä"] == (1, ["äpfelmus"])  # "Äpfel" is in P2
        assert "Ökologie" in found["Ö"][1]  # written at 0012
    finally:
        engine.dispose()


def test_queries_written_before_the_folding_are_folded_and_counted_sqlite(tmp_path):
    _rows_before_and_after(f"sqlite:///{tmp_path / 'old.sqlite3'}")


@pytest.mark.postgres
def test_queries_written_before_the_folding_are_folded_and_counted_postgres():
    with postgres_database_of_its_own("tagdesk_test_folding_") as url:
        _rows_before_and_after(url)
