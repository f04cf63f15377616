"""Pages sorted by a number whose places lie among thousands of ties, put in id order: deep
pages are found from each query's place in the id order held in memory
(service/engine/id_keys.py), never by walking the id index, and are exactly the brute-force
pages on each database — in both directions of the number and of the id, with a filter, and
after new queries (random ids; hundreds of ids between two neighbours), ids changed and
queries deleted by hand (around the engine)."""

from __future__ import annotations

import random
import threading
import time

import pytest
from sqlalchemy import text

from service.engine import id_keys, inserting, listing
from service.imports import imports
from service.org import admin

ROWS = 6000
LIMIT = 50
DEEP = 20
LANGUAGES = ["de", "en", "fr"]
# A walk of the id index in the pages' order: what the ties took before, and still take on a
# first page, where the walk passes few rows.
WALK = "SELECT queries.pk FROM queries WHERE queries.project_id = "


def clicks(rng: random.Random) -> dict:
    """Clicks 0 for about 45 % (a tie set of ~2,700), unknown for 40 %, else spread."""
    roll = rng.random()
    if roll < 0.45:
        return {"clicks": 0}
    return {} if roll < 0.85 else {"clicks": rng.randint(1, 40)}


def rows(rng: random.Random, start: int, count: int) -> list:
    return [(f"query {number}", rng.choice(LANGUAGES), "US", [], None, clicks(rng))
            for number in range(start, start + count)]


def stored(world) -> list[tuple[str, str, int | None]]:
    """(id, language, clicks) of the project's queries, as the database has them."""
    return [(str(row[0]), row[1], row[2]) for row in world.run(lambda s: s.execute(text(
        "SELECT id, language, clicks FROM queries WHERE project_id = :p"),
        {"p": world.project_id}).all())]


def brute_force(queries: list, languages: list[str] | None, descending: bool,
                ids_descending: bool) -> list[str]:
    chosen = [row for row in queries if not languages or row[1] in languages]
    known = sorted((row for row in chosen if row[2] is not None), key=lambda row: row[0],
                   reverse=ids_descending)
    known.sort(key=lambda row: row[2], reverse=descending)  # stable: ties by id
    unknown = sorted((row for row in chosen if row[2] is None), key=lambda row: row[0],
                     reverse=ids_descending)
    return [row[0] for row in known + unknown]


def walked(statements) -> list[str]:
    return [s for s in statements if s.startswith(WALK) and "ORDER BY" in s]


def deep_page(api, statements, **filters) -> list[str]:
    statements.clear()
    answer = api.queries(sort=[{"field": "clicks", "direction": "ASC"}], page=DEEP + 10,
                         limit=LIMIT, **filters)
    assert answer.status_code == 200, answer.text
    return [item["id"] for item in answer.json()["results"]]


def ids_read(api, statements) -> None:
    """Wait until the project's ids, read in a thread of their own from the first deep page
    of an epoch on, are in: a deep page among the ties no longer walks the id index."""
    deadline = time.monotonic() + 60
    while deep_page(api, statements) and walked(statements):
        assert time.monotonic() < deadline, "the project's ids were never read"
        time.sleep(0.02)


def assert_pages_exact(api, world, statements) -> None:
    """Pages whose places lie among the ties (clicks 0, or unknown) and a few others, in
    each order, once the project's ids are read."""
    ids_read(api, statements)
    queries = stored(world)
    for languages in (None, ["de", "fr"]):
        for descending in (False, True):
            for ids_descending in (False, True):
                wanted = brute_force(queries, languages, descending, ids_descending)
                sort = [{"field": "clicks", "direction": "DESC" if descending else "ASC"}]
                if ids_descending:
                    sort.append({"field": "id", "direction": "DESC"})
                last = -(-len(wanted) // LIMIT)
                for page in sorted({1, 30, 54, 55, 100, last}):
                    body = {"sort": sort, "page": page, "limit": LIMIT}
                    if languages:
                        body["languages"] = languages
                    statements.clear()
                    answer = api.queries(**body)
                    assert answer.status_code == 200, answer.text
                    got = [item["id"] for item in answer.json()["results"]]
                    assert got == wanted[(page - 1) * LIMIT:page * LIMIT], body
                    if page >= DEEP:
                        assert not walked(statements), (body, walked(statements))


@pytest.fixture
def many_ties(world):
    rng = random.Random(7)
    world.run(lambda s: imports.add_rows(s, world.project_id, [rows(rng, 0, ROWS)],
                                         batch_rows=1000))
    return world


def test_pages_among_thousands_of_ties_are_exact_and_never_walk_the_ids(
        api, many_ties, statements, monkeypatch):
    world = many_ties
    assert_pages_exact(api, world, statements)

    # New queries, read from then on by the keys loaded since (no new epoch).
    world.run(lambda s: admin.insert_queries(s, world.project_id, rows(random.Random(8),
                                                                         ROWS, 300)))
    assert_pages_exact(api, world, statements)

    # Six hundred new queries whose ids all fall between two neighbouring ids held: one
    # bucket of the id order overflows, and the project's ids are read again.
    middle = sorted(row[0] for row in stored(world))[ROWS // 2]
    crafted = iter(f"{middle[:24]}{number:012x}" for number in random.Random(10).sample(
        range(16 ** 12), 600))
    monkeypatch.setattr(inserting, "new_uuid", lambda: next(crafted))
    for start in (ROWS + 300, ROWS + 600):
        world.run(lambda s, start=start: admin.insert_queries(
            s, world.project_id, rows(random.Random(start), start, 300)))
        assert_pages_exact(api, world, statements)
    monkeypatch.undo()

    # Ids changed by hand (a write around the engine): a third now begin alike, which moves
    # them in the id order; the places held before are wrong for them unless the project's
    # new epoch drops them.
    prefix = "0000abcd"
    postgres = world.run(lambda s: s.get_bind().dialect.name == "postgresql")
    changed = (f"('{prefix}' || substr(id::text, 9))::uuid" if postgres
               else f"'{prefix}' || substr(id, 9)")
    world.run(lambda s: s.execute(text(
        f"UPDATE queries SET id = {changed} WHERE project_id = :p AND pk % 3 = 0"),
        {"p": world.project_id}))
    assert sum(row[0].startswith(prefix) for row in stored(world)) > 2000
    assert_pages_exact(api, world, statements)

    # The newest queries deleted by hand and others inserted after them (SQLite gives their
    # pks again: the largest plus one), then more of the ties deleted.
    world.run(lambda s: s.execute(text(
        "DELETE FROM queries WHERE pk IN (SELECT pk FROM queries WHERE project_id = :p "
        "ORDER BY pk DESC LIMIT 200)"), {"p": world.project_id}))
    api.queries(limit=1)  # the read that builds the project's bitmaps again
    world.run(lambda s: admin.insert_queries(s, world.project_id, rows(random.Random(9),
                                                                         ROWS + 900, 200)))
    world.run(lambda s: s.execute(text(
        "DELETE FROM queries WHERE project_id = :p AND clicks = 0 AND pk % 5 = 0"),
        {"p": world.project_id}))
    assert_pages_exact(api, world, statements)


def test_pages_are_exact_while_the_ids_are_being_read(api, many_ties, statements,
                                                      monkeypatch):
    """The first deep page of an epoch does not wait for the project's ids (a minute at ten
    million queries): it answers, exactly, while they are read; later pages use them."""
    world = many_ties
    release = threading.Event()
    read_all = id_keys.ProjectKeys.read_all

    def held_back(keys, *args):
        assert release.wait(30)
        read_all(keys, *args)

    monkeypatch.setattr(id_keys.ProjectKeys, "read_all", held_back)
    wanted = brute_force(stored(world), None, False, False)
    place = (DEEP + 9) * LIMIT
    for _request in range(3):  # the ids still unread: the database orders the ties
        assert deep_page(api, statements) == wanted[place:place + LIMIT]
    release.set()
    ids_read(api, statements)
    assert deep_page(api, statements) == wanted[place:place + LIMIT]
    assert not walked(statements)


def test_ties_lying_at_the_end_of_the_id_order_are_found_without_walking_it_all(
        api, world, statements, monkeypatch):
    """Ties whose ids all come after every other query's (imported together, later, with
    ids made in time order): the walk of the id index from the first id passes thousands of
    other queries; past what narrowing costs, it gives up for the id order held in memory
    (once read). Pages stay exact."""
    others, ties = 3000, 3000
    ids = iter(f"{number:08x}-0000-4000-8000-000000000000" for number in range(others + ties))
    monkeypatch.setattr(inserting, "new_uuid", lambda: next(ids))
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        (f"query {number}", "en", "US", [], None, {"clicks": 1 + number % 40})
        for number in range(others)]))
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        (f"tie {number}", "en", "US", [], None, {"clicks": 0})
        for number in range(ties)]))
    narrowed = []
    real = listing._Page._narrowed
    monkeypatch.setattr(listing._Page, "_narrowed",
                        lambda page, *args: narrowed.append(args[1]) or real(page, *args))
    wanted = brute_force(stored(world), None, False, False)
    deadline = time.monotonic() + 60
    for page in (1, 2, 1, 2):
        body = {"sort": [{"field": "clicks", "direction": "ASC"}], "page": page, "limit": LIMIT}
        while True:
            answer = api.queries(**body)
            assert answer.status_code == 200, answer.text
            got = [item["id"] for item in answer.json()["results"]]
            assert got == wanted[(page - 1) * LIMIT:page * LIMIT]
            if narrowed or time.monotonic() > deadline:
                break  # the id order was read (in its thread) and the walk gave up for it
            time.sleep(0.02)
    assert narrowed, "the walk never gave up for the id order held in memory"


def test_pages_found_by_counting_the_ties_per_block_of_the_id_order_are_exact(
        api, many_ties, statements, monkeypatch):
    """Large ties are counted per group of blocks of the id order, then per block (by
    bitmaps; 1,024 buckets a block and 16 blocks a group, here 2 and 4, so that 6,000 queries
    make 47 blocks in 12 groups) from the nearer end, and only the blocks holding the page's
    places are placed key by key: pages exact in each order, with a filter, and after new
    queries (blocks extended, and new ones past the last id)."""
    world = many_ties
    monkeypatch.setattr(id_keys, "BLOCK_BITS", 1)
    monkeypatch.setattr(id_keys, "VISIT_SHARE", 0)
    monkeypatch.setattr(id_keys, "VISIT_TIE_SHARE", 0)
    monkeypatch.setattr(id_keys, "GROUP_BITS", 2)
    narrowed = []
    holding = id_keys.ProjectKeys.holding

    def counted(project, keys, first, last):
        part, before = holding(project, keys, first, last)
        narrowed.append((len(keys), len(part), before))
        return part, before

    monkeypatch.setattr(id_keys.ProjectKeys, "holding", counted)
    assert_pages_exact(api, world, statements)
    world.run(lambda s: admin.insert_queries(s, world.project_id, rows(random.Random(8),
                                                                         ROWS, 300)))
    assert_pages_exact(api, world, statements)
    # Ties of 1,500-2,900: a page's candidates come from a few blocks of 128 queries.
    assert narrowed and all(part * 8 < keys for keys, part, _before in narrowed)
    assert any(before for _keys, _part, before in narrowed)
