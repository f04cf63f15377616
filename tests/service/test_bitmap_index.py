"""PostgreSQL: text filters counted from the words of the project's texts (migration 0023,
service/bitmap_index.py). Proved against the texts themselves, lower-cased by the database and
matched here in Python; the index against one rebuilt from the texts after every kind of load;
and the fallback to counting row by row whenever the index is behind."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import pytest
from pyroaring import BitMap
from sqlalchemy import create_engine, insert, text

from service import imports, search, tagging
from service.models import Query
from service.search import COUNTED_GRAM_LENGTH
from service.validation import QueryListBody, SetTagsItem
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
WORDS_STATEMENT = "JOIN text_words"
FUNCTIONS = ("SELECT proname, pg_get_functiondef(oid) FROM pg_proc "
             "WHERE proname IN ('tagdesk_bump_texts_version', 'tagdesk_count_tag_links')")


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
    assert sum("count(*)" in s and "query_texts" in s for s in statements) == 2


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
            with engine.connect() as connection:
                functions_before = connection.execute(text(FUNCTIONS)).all()
                assert len(functions_before) == 2
            with engine.begin() as connection:
                connection.execute(text("INSERT INTO tags (project_id, name, name_folded, color) "
                                        "VALUES (:p, 'brand', 'brand', '#123456')"), {"p": P1})
                connection.execute(text("INSERT INTO query_tags (query_pk, tag_id, updated_at) "
                                        "VALUES (2, 1, '2026-01-01'), (4, 1, '2026-01-01')"))
            migrate(engine, "0023")
            with engine.connect() as connection:
                assert connection.execute(text(
                    "SELECT count(*) FROM projects WHERE words_version = texts_version"
                )).scalar_one() == 2
                assert connection.execute(text(
                    "SELECT keys_version = links_version FROM tags")).scalar_one()
                tags = {(tag_id, chunk): set(BitMap.deserialize(keys))
                        for tag_id, chunk, keys in connection.execute(text(
                            "SELECT tag_id, chunk, keys FROM tag_keys"))}
                codes = {(project, language, country): set(BitMap.deserialize(keys))
                         for project, language, country, keys in connection.execute(text(
                             "SELECT p.id::text, c.language, c.country, c.keys FROM code_keys c "
                             "JOIN projects p ON p.number = c.project_number"))}
                expected_codes: dict = defaultdict(set)
                for pk, project, language, country in connection.execute(text(
                        "SELECT pk, project_id::text, language, country FROM queries")):
                    expected_codes[project, language, country].add(pk)
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
            assert tags == {(1, 0): {2, 4}}
            assert codes == dict(expected_codes)
            migrate(engine, "0022", down=True)
            with engine.connect() as connection:
                assert connection.execute(text(FUNCTIONS)).all() == functions_before
                assert connection.execute(text(
                    "SELECT to_regclass('text_words') IS NULL AND to_regclass('tag_keys') IS NULL "
                    "AND to_regclass('code_keys') IS NULL AND NOT EXISTS (SELECT FROM "
                    "information_schema.columns WHERE column_name IN "
                    "('words_version', 'keys_version'))"
                )).scalar_one()
        finally:
            engine.dispose()


# --- codes and tags ----------------------------------------------------------------------------

CODE_FILTERS = [{}, {"languages": ["de"]}, {"countries": ["DE", "AT"]},
                {"languages": ["DE"], "countries": ["de"]}, {"languages": ["en", "el"]},
                {"languages": ["en"], "countries": ["US"]}]


def tag_filters(world) -> list[dict]:
    brand, sale = world.tags["brand"], world.tags["sale"]
    return [{}, {"tagIds": [brand]}, {"tagIds": [brand, sale]}, {"tagNames": ["SALE"]},
            {"tagIds": [brand], "tagNames": ["sale"]}, {"tagIds": [world.tags["question"]]}]


def expected_total(world, term: str, codes: dict, tags: dict) -> int:
    """Counted here from the rows and links as stored: the texts lower-cased by the
    database, the rest compared in Python."""
    def count(session):
        rows = session.execute(text(
            "SELECT q.pk, lower(q.query), q.language, q.country, lower(:term), "
            "coalesce(array_agg(l.tag_id) FILTER (WHERE l.tag_id IS NOT NULL), '{}') "
            "FROM queries q LEFT JOIN query_tags l ON l.query_pk = q.pk "
            "WHERE q.project_id = :p GROUP BY q.pk"), {"p": world.project_id, "term": term})
        names = {name: tag_id for name, tag_id in world.tags.items()}
        sets = []
        if "tagIds" in tags:
            sets.append(set(tags["tagIds"]))
        if "tagNames" in tags:
            sets.append({names[name.casefold()] for name in tags["tagNames"]})
        languages = {code.lower() for code in codes.get("languages", [])}
        countries = {code.upper() for code in codes.get("countries", [])}
        return sum(1 for _pk, value, language, country, folded_term, linked in rows
                   if folded_term in value
                   and (not languages or language in languages)
                   and (not countries or country in countries)
                   and all(ids & set(linked) for ids in sets))
    return world.run(count)


def filtered(api, **body) -> tuple[int, int]:
    response = api.queries(limit=1000, **body)
    assert response.status_code == 200, response.text
    found = response.json()
    return found["page"]["totalRecords"], len(found["results"])


def test_text_with_codes_and_tags_counts_exactly_from_the_bitmaps(api, seeded, statements):
    terms = ["schuhe", "laufschuhe", "shoe", "sch", "SCHU", "50%", "ΣΟΦ", "qqq"]
    wrong, asked = {}, 0
    for term in terms:
        for codes in CODE_FILTERS:
            for tags in tag_filters(seeded):
                if not (codes or tags):
                    continue
                asked += 1
                wanted = expected_total(seeded, term, codes, tags)
                total, rows = filtered(api, query=term, **codes, **tags)
                if not total == rows == wanted:
                    wrong[term, str(codes), str(tags)] = (total, rows, wanted)
    assert wrong == {}
    assert asked > 200
    # Every one of them counted from the bitmaps: one statement each, and no row-by-row count.
    assert sum(WORDS_STATEMENT in statement for statement in statements) == asked
    assert not any("count(*)" in s and "query_texts" in s for s in statements)


def stored_pieces(world, table: str, key: str) -> dict[tuple, set[int]]:
    rows = world.run(lambda s: s.execute(text(f"SELECT {key}, chunk, keys FROM {table}")).all())
    return {tuple(row[:-1]): set(BitMap.deserialize(row[-1])) for row in rows}


def rebuilt_pieces(world, statement: str) -> dict[tuple, set[int]]:
    """Pieces from `statement`'s rows: (the piece's key …, a row key)."""
    pieces: dict[tuple, set[int]] = defaultdict(set)
    for *key, pk in world.run(lambda s: s.execute(text(statement)).all()):
        pieces[(*key, pk >> 16)].add(pk)
    return dict(pieces)


def tags_are_current(world) -> bool:
    assert world.run(lambda s: s.scalar(text("SELECT count(*) FROM tags"))) > 0
    return world.run(lambda s: s.scalar(text(
        "SELECT bool_and(keys_version = links_version) FROM tags")))


def assert_bitmaps_are_the_rows(world) -> None:
    assert stored_pieces(world, "tag_keys", "tag_id") == rebuilt_pieces(
        world, "SELECT tag_id, query_pk FROM query_tags")
    assert stored_pieces(world, "code_keys", "project_number, language, country") == (
        rebuilt_pieces(world, "SELECT p.number, q.language, q.country, q.pk FROM queries q "
                              "JOIN projects p ON p.id = q.project_id"))
    assert tags_are_current(world)


def test_set_tags_keeps_the_tags_bitmaps(api, seeded):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    assert_bitmaps_are_the_rows(seeded)
    assert filtered(api, query="schuhe", tagIds=[brand])[0] == 1
    response = api.set_tags([
        # Keeps "sale" (its link's time follows the query's, no link added or removed).
        {"query": "größe 40 schuhe", "language": "de", "country": "CH",
         "tagIds": [brand, sale]},
        {"query": "GRÖSSE 39  Schuhe", "language": "de", "country": "DE", "tagIds": [sale]},
        {"query": "Laufschuhe Damen", "language": "de", "country": "DE", "tagIds": []}])
    assert response.status_code == 200, response.text
    assert_bitmaps_are_the_rows(seeded)
    assert filtered(api, query="schuhe", tagIds=[brand]) == (1, 1)
    assert filtered(api, query="schuhe", tagIds=[sale]) == (2, 2)
    assert filtered(api, query="schuhe", languages=["de"], tagIds=[brand], tagNames=["sale"]) \
        == (1, 1)
    assert filtered(api, query="schuhe", countries=["DE"], tagIds=[sale]) == (1, 1)
    # A tag deleted takes its bitmap with it; the others stay current.
    seeded.run(lambda s: s.execute(text("DELETE FROM tags WHERE id = :t"), {"t": sale}))
    assert_bitmaps_are_the_rows(seeded)
    assert filtered(api, query="schuhe", tagIds=[brand]) == (1, 1)


def test_a_link_changed_behind_the_bitmaps_is_counted_row_by_row(api, seeded, statements):
    brand = seeded.tags["brand"]
    assert filtered(api, query="schuhe", tagIds=[brand]) == (1, 1)
    seeded.run(lambda s: s.execute(text("DELETE FROM query_tags WHERE tag_id = :t"),
                                   {"t": brand}))
    assert not tags_are_current(seeded)
    statements.clear()
    assert filtered(api, query="schuhe", tagIds=[brand]) == (0, 0)
    assert filtered(api, query="laufschuhe", tagIds=[brand]) == (0, 0)
    assert sum("count(*)" in s and "query_texts" in s for s in statements) == 2
    # Filters without that tag are still counted from the bitmaps.
    assert filtered(api, query="laufschuhe", tagNames=["sale"]) == (0, 0)
    assert filtered(api, query="schuhe", tagNames=["sale"]) == (1, 1)
    assert sum("count(*)" in s and "query_texts" in s for s in statements) == 2


def test_loads_keep_the_codes_and_tags_bitmaps(seeded, api):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    rows = [(f"Wanderschuhe Modell {n}", "de", ["DE", "AT", "CH"][n % 3], [brand], None)
            for n in range(60)]
    rows += [(f"hiking boots {n}", "en", "US", [brand, sale] if n % 2 else [], None)
             for n in range(60)]
    seeded.run(lambda s: imports.add_rows(s, seeded.project_id, [rows], batch_rows=11))
    assert_bitmaps_are_the_rows(seeded)
    assert filtered(api, query="wanderschuhe", countries=["AT"], tagIds=[brand]) == (20, 20)
    assert filtered(api, query="boots", tagIds=[sale], tagNames=["brand"]) == (30, 30)
    # A few rows go through the row-by-row path (service/admin.py).
    seeded.add_queries([("Wanderschuhe klein", "de", "AT", ["brand", "sale"])])
    assert_bitmaps_are_the_rows(seeded)
    assert filtered(api, query="wanderschuhe", countries=["AT"], tagIds=[sale]) == (1, 1)


# --- a page of few tagged matches by time ------------------------------------------------------


def test_a_page_of_few_tagged_matches_in_time_order_is_the_same_found_by_the_tags_links(
        seeded, monkeypatch, statements):
    brand, sale = seeded.tags["brand"], seeded.tags["sale"]
    seeded.add_queries([(f"trail boots {n}", "en", "US", ["brand"]) for n in range(40)]
                       + [(f"trail shoes {n}", "en", "GB", ["brand", "sale"])
                          for n in range(40)]
                       + [(f"city boots {n}", "de", "DE", ["sale"]) for n in range(40)])
    # Three times, two of them shared by many queries (ties the page breaks by id).
    for names in (["trail boots 3", "trail shoes 5", "city boots 7"],
                  [f"trail boots {n}" for n in range(10, 30)]):
        items = [SetTagsItem(query=name, language="en" if name.startswith("trail") else "de",
                             country={"boots": "US", "shoes": "GB"}.get(name.split()[1], "DE")
                             if name.startswith("trail") else "DE",
                             tagIds=[brand] if "boots" in name else [brand, sale])
                 for name in names]
        seeded.run(lambda s, items=items: tagging.set_tags(s, seeded.project_id, items))

    # Every filter's matches count as few here (a tenth of a project's queries would
    # otherwise be read in the sort order's index walk instead).
    monkeypatch.setattr(search, "SCAN_IN_ORDER_SHARE", 1.0)
    monkeypatch.setattr(search, "LINK_WALK_BATCH", 3)  # many statements, ties across them

    def pages(walk: bool, **body) -> list:
        monkeypatch.setattr(search, "LINK_WALK_FROM", 1 if walk else 10**9)
        found = []
        for direction in ("DESC", "ASC"):
            for limit in (1, 7, 50):
                for page in range(1, 80 // limit + 2):
                    request = QueryListBody(page=page, limit=limit, sort=[
                        {"field": "updatedAt", "direction": direction}], **body)
                    total, rows, tags = seeded.run(lambda s, r=request: search.list_queries(
                        s, seeded.project_id, r, None))
                    found.append((total, [(row.query, tags.get(row.pk)) for row in rows]))
        return found

    for body in ({"query": "trail", "tagIds": [brand]}, {"query": "boots", "tagIds": [brand]},
                 {"query": "trail", "countries": ["GB"], "tagNames": ["sale"]},
                 {"query": "boots", "tagIds": [sale]}):
        statements.clear()
        walked = pages(True, **body)
        assert sum("FROM query_tags" in s and "ORDER BY query_tags.updated_at" in s
                   for s in statements) > 10, body
        statements.clear()
        assert walked == pages(False, **body), body
        assert any(rows for _total, rows in walked)
