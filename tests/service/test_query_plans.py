"""Both ways a page of matches is read (its rows collected by their keys and sorted, or an
index walked in the page's order: the sort's own, or a tag's links in time order) return
exactly what a plain reading of the filters says, for every sort order; the count engine's
bitmaps behind totalRecords stay exact through every kind of write."""

import random
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from service.api import query_filters
from service.bodies.validation import QueryListBody
from service.engine import listing
from service.engine.held import Held
from tests.service.counters import assert_counters_exact, simple_fold
from tests.support.api import Api

LANGS = [("de", "DE"), ("de", "AT"), ("en", "US"), ("en", "GB"), ("fr", "FR"), ("pl", "PL")]
WORDS = ["schuhe", "shoes", "chaussures", "buty", "jacke", "jacket", "rot", "red", "größe"]


@pytest.fixture
def dataset(world):
    rng = random.Random(3)
    names = list(world.tags)
    rows = set()
    while len(rows) < 300:
        language, country = rng.choice(LANGS)
        text = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        rows.add((text, language, country))
    world.add_queries([(q, lang, c, rng.sample(names, rng.choice([0, 0, 1, 1, 2])))
                       for q, lang, c in sorted(rows)])
    return world


class Pages:
    """queries/list called in this process through the service's WSGI app (Flask's test
    client), with the world's key and project: the same view and JSON as over HTTP, without
    a loopback round trip, which cost more than twice the view's own work here (5.4 ms a
    page against 1.6 ms). The tests that read hundreds of pages use it; the others call the
    live service."""

    def __init__(self, world):
        self.client = world.app.test_client()
        self.headers = {"x-api-key": world.key, "x-project-id": world.project_id}

    def queries(self, **body) -> dict:
        answer = self.client.post("/api/queries/list", json=body, headers=self.headers)
        assert answer.status_code == 200, answer.get_data(as_text=True)
        return answer.get_json()


def reference(records, tag_ids_by_name, body):
    def keep(r):
        if body.get("query") and simple_fold(body["query"]) not in simple_fold(r["query"]):
            return False
        if body.get("languages") and r["language"] not in body["languages"]:
            return False
        if body.get("countries") and r["country"] not in body["countries"]:
            return False
        wanted = {tag_ids_by_name[n] for n in body.get("tagNames", [])}
        return not wanted or bool(set(r["tags"]) & wanted)
    return [r for r in records if keep(r)]


FILTERS = [
    {},
    {"languages": ["de"]},
    {"languages": ["de", "fr"], "countries": ["DE", "FR"]},
    {"query": "schu"},
    {"query": "rö"},
    {"tagNames": ["brand"]},
    {"tagNames": ["brand", "local"], "languages": ["en"]},
    {"query": "shoe", "tagNames": ["sale"]},
    # Text with codes and tags.
    {"query": "schu", "languages": ["de", "en"], "countries": ["DE", "AT", "US"],
     "tagNames": ["brand", "local"]},
    {"query": "rö", "countries": ["DE", "AT"]},
]
SORTS = [("updatedAt", "DESC"), ("updatedAt", "ASC"), ("query", "ASC"), ("language", "DESC"),
         ("language", "ASC"), ("country", "ASC"), ("country", "DESC"), ("id", "ASC")]


@pytest.mark.parametrize(("collect_always", "walk_cost"), [(0, 1e-9), (10**9, 0.25)],
                         ids=["walk-in-order", "collect-and-sort"])
def test_every_filter_and_sort_matches_the_reference(dataset, monkeypatch,
                                                     collect_always, walk_cost):
    # Walking costs next to nothing: every filtered page walks an index (a tag's links when
    # the filter needs one tag and the page is in time order); or every page is collected.
    monkeypatch.setattr(listing, "COLLECT_ALWAYS", collect_always)
    monkeypatch.setattr(listing, "WALK_COST", walk_cost)
    api = Pages(dataset)
    everything = api.queries(limit=1000)["results"]
    assert len(everything) == 300
    # An unfiltered page reads neither constant (listing._Page.rows: its own path, whose
    # pages test_deep_unfiltered_pages… checks in every order): read once, on the first run.
    for body in [body for body in FILTERS if body or collect_always == 0]:
        expected_set = reference(everything, dataset.tags, body)
        for field, direction in SORTS:
            got = []
            page = 1
            while page:  # pages of a prime size: their edges fall at ever other offsets
                answer = api.queries(**body, sort=[{"field": field, "direction": direction}],
                                     limit=23, page=page)
                assert answer["page"]["totalRecords"] == len(expected_set), body
                got += answer["results"]
                page = answer["page"]["nextPage"]
            expected = sorted(expected_set, key=lambda r: r["id"])
            expected.sort(key=lambda r: r[field], reverse=direction == "DESC")
            assert [r["id"] for r in got] == [r["id"] for r in expected], (body, field)


def test_deep_unfiltered_pages_picked_from_the_index_match_the_reference(dataset,
                                                                         monkeypatch):
    """Past DEFER_FROM_OFFSET an unfiltered page picks its row keys from the index first; the
    pages are the same as read the plain way, for every order (id alone included)."""
    api = Pages(dataset)
    everything = api.queries(limit=1000)["results"]
    assert len(everything) == 300
    for field, direction in [*SORTS, ("id", "DESC")]:  # SORTS has ("updatedAt", "ASC")
        expected = sorted(everything, key=lambda r: r["id"])
        expected.sort(key=lambda r: r[field], reverse=direction == "DESC")
        pages = {}
        for defer_from in (0, 10**9):
            monkeypatch.setattr(listing, "DEFER_FROM_OFFSET", defer_from)
            pages[defer_from] = [
                [r["id"] for r in api.queries(sort=[{"field": field, "direction": direction}],
                                              limit=40, page=page)["results"]]
                for page in range(1, 10)]
        assert pages[0] == pages[10**9], field
        assert sum(pages[0], []) == [r["id"] for r in expected], (field, direction)


def test_a_rare_tags_pages_by_time_follow_every_change_of_its_queries(api, world, statements,
                                                                     monkeypatch):
    """One rare tag sorted by update time is read from its links' copy of the time (migration
    0018), when walking them costs less than collecting its matches (here: always). Set-tags
    moves its queries' times one by one and several at once (ties, broken by id); every page
    in both directions matches the plain reading of all rows."""
    monkeypatch.setattr(listing, "COLLECT_ALWAYS", 0)
    world.add_queries([(f"query {i:04}", "en", "US", []) for i in range(2000)])
    brand, sale = world.tags["brand"], world.tags["sale"]

    def tag(numbers, tag_ids):
        answer = api.set_tags([{"query": f"query {i:04}", "language": "en", "country": "US",
                                "tagIds": tag_ids} for i in numbers])
        assert answer.status_code == 200, answer.text
        time.sleep(0.003)  # the next call's time differs (milliseconds)

    tag(range(6), [brand])
    tag([6, 7], [brand])
    tag([3], [brand, sale])
    tag([1, 1500], [sale, brand])
    tag([8], [brand])
    tag([0], [])  # no longer carries it
    everything = [r for page in (1, 2)
                  for r in api.queries(limit=1000, page=page, sort=[
                      {"field": "id", "direction": "ASC"}]).json()["results"]]
    carriers = [r for r in everything if brand in r["tags"]]
    assert len(carriers) == 9 and len(everything) == 2000
    for direction in ("DESC", "ASC"):
        expected = sorted(carriers, key=lambda r: r["id"])
        expected.sort(key=lambda r: r["updatedAt"], reverse=direction == "DESC")
        statements.clear()
        got = [r for page in range(1, 6) for r in api.queries(
            tagIds=[brand], sort=[{"field": "updatedAt", "direction": direction}], limit=2,
            page=page).json()["results"]]
        assert [r["id"] for r in got] == [r["id"] for r in expected], direction
        assert any("query_tags.updated_at" in s for s in statements)


def test_text_counts_are_exact_whether_or_not_a_project_is_contiguous(api, world):
    shoes = [(f"running shoes {i}", "en", "US", []) for i in range(5)]
    world.add_queries(shoes[:3])
    assert api.queries(query="shoes").json()["page"]["totalRecords"] == 3
    # Rows of another project land between this project's rows: the span no longer holds
    # only this project, and the count must still be exact.
    world.add_queries([("other shoes", "en", "US", [])], project_id=world.other_project_id)
    world.add_queries(shoes[3:])
    assert api.queries(query="shoes").json()["page"]["totalRecords"] == 5
    assert api.queries(query="shoes", page=1, limit=10).json()["results"][0]["project"] == (
        world.project_id)


# --- the engine's bitmaps through every write ----------------------------------------------


def read_and_check(world):
    """Every project read once (a read builds again the bitmaps of a project that a write went
    around the engine in), then the bitmaps checked against the rows."""
    for project_id in world.run(lambda s: s.execute(text("SELECT id FROM projects")).scalars()
                                .all()):
        world.run(lambda s, p=str(project_id): query_filters.list_queries(
            s, p, QueryListBody(), Held()))
    assert_counters_exact(world)


def test_counters_and_texts_follow_imports_edits_moves_and_deletes(api, world):
    world.add_queries([("schuhe rot", "de", "DE", ["brand", "sale"]),
                       ("schuhe blau", "de", "AT", ["brand"]),
                       ("red shoes", "en", "US", []),
                       ("chaussures", "fr", "FR", ["local"])])
    world.add_queries([("help", "en", "GB", [])], project_id=world.other_project_id)
    assert_counters_exact(world)

    tags = world.tags
    answer = api.set_tags([
        {"query": "schuhe rot", "language": "de", "country": "DE", "tagIds": [tags["local"]]},
        {"query": "red shoes", "language": "en", "country": "US",
         "tagIds": [tags["brand"], tags["question"]]},
    ])
    assert answer.status_code == 200, answer.text
    assert_counters_exact(world)
    assert api.queries(tagNames=["brand"]).json()["page"]["totalRecords"] == 2
    assert api.queries(tagIds=[str(tags["sale"])]).json()["page"]["totalRecords"] == 0
    assert api.queries(languages=["de"]).json()["page"]["totalRecords"] == 2
    assert api.queries(languages=["de", "en"], countries=["AT", "US"]).json()[
        "page"]["totalRecords"] == 2

    def move_and_delete(session):
        session.execute(text("UPDATE queries SET language = 'fr', country = 'FR', "
                             "query = 'Red Sneakers' WHERE query = 'red shoes'"))
        session.execute(text("DELETE FROM queries WHERE query = 'schuhe blau'"))
        session.execute(text("DELETE FROM tags WHERE name = 'local'"))
    world.run(move_and_delete)
    read_and_check(world)
    assert api.queries(countries=["FR"]).json()["page"]["totalRecords"] == 2
    assert api.queries(query="sneak").json()["page"]["totalRecords"] == 1
    assert api.queries(query="red sh").json()["page"]["totalRecords"] == 0
    assert api.queries(tagNames=["brand"]).json()["page"]["totalRecords"] == 1

    # A link moved to another tag (no code path does it; the bitmaps follow it all the same),
    # and the queries' times changed alone (their links' copies of the time follow).
    world.run(lambda s: s.execute(text(
        "UPDATE query_tags SET tag_id = :sale WHERE tag_id = :brand"),
        {"sale": tags["sale"], "brand": tags["brand"]}))
    assert api.queries(tagNames=["sale"]).json()["page"]["totalRecords"] == 1
    assert api.queries(tagNames=["brand"]).json()["page"]["totalRecords"] == 0
    world.run(lambda s: s.execute(text("UPDATE queries SET updated_at = '2030-01-02 03:04:05'")))
    read_and_check(world)

    # Only a code changes: the bitmaps of the codes follow it.
    world.run(lambda s: s.execute(text(
        "UPDATE queries SET country = 'CH' WHERE query = 'schuhe rot'")))
    read_and_check(world)
    assert api.queries(query="schuhe", countries=["CH"]).json()["page"]["totalRecords"] == 1
    assert api.queries(query="schuhe", countries=["DE"]).json()["page"]["totalRecords"] == 0

    world.run(lambda s: s.execute(text("DELETE FROM projects WHERE id = :id"),
                                  {"id": world.other_project_id}))
    read_and_check(world)


def test_concurrent_set_tags_keep_counters_exact_without_deadlocks(api, world):
    """Writers that swap the same tags in opposite directions: on PostgreSQL each call
    removes some tags' links and adds others' in separate statements."""
    names = list(world.tags)
    rows = [(f"query {i}", "en", "US", [names[i % 2]]) for i in range(40)]
    world.add_queries(rows)
    tags = world.tags

    def flip(worker: int) -> list[int]:
        statuses = []
        mine = rows[worker * 10:(worker + 1) * 10]
        for round_ in range(6):
            first, second = (0, 1) if (worker + round_) % 2 else (1, 0)
            statuses.append(api_for_thread().set_tags([
                {"query": q, "language": "en", "country": "US",
                 "tagIds": [tags[names[first if i % 2 else second]]]}
                for i, (q, *_rest) in enumerate(mine)]).status_code)
        return statuses

    def api_for_thread():
        return Api(api.base_url, world.key, world.project_id)

    with ThreadPoolExecutor(4) as pool:
        statuses = [s for result in pool.map(flip, range(4)) for s in result]
    assert set(statuses) == {200}
    assert_counters_exact(world)
    assert sum(api.queries(tagIds=[str(tags[n])]).json()["page"]["totalRecords"]
               for n in names[:2]) == 40


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_postgres_plans_each_statement_for_its_values(service_app):
    """The driver prepares no statement, so each is planned for its own values (a generic
    plan is far slower for a large project's rare tag); the server's own cached plans (foreign-key
    checks, triggers) are kept, not planned again per row; no parallel workers and no JIT
    compilation (each costs more than a short statement)."""
    engine = service_app.extensions["tagdesk_engine"]
    assert engine.dialect.name == "postgresql"
    with engine.connect() as connection:
        for attempt in range(10):  # psycopg prepares a statement on its fifth execution
            connection.execute(text("SELECT count(*) FROM queries WHERE project_id = :p"),
                               {"p": f"00000000-0000-4000-8000-00000000000{attempt % 2}"})
        assert connection.exec_driver_sql(
            "SELECT count(*) FROM pg_prepared_statements").scalar() == 0
        assert connection.exec_driver_sql("SHOW plan_cache_mode").scalar() == "auto"
        assert connection.exec_driver_sql(
            "SHOW max_parallel_workers_per_gather").scalar() == "0"
        assert connection.exec_driver_sql("SHOW jit").scalar() == "off"


def test_set_tags_with_no_items_changes_nothing(api, world):
    world.add_queries([("red shoes", "en", "US", ["brand"])])
    answer = api.set_tags([])
    assert (answer.status_code, answer.json()) == (200, [])
    assert_counters_exact(world)
