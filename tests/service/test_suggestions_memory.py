"""Learning holds a bounded sample and scores and writes in parts: the memory a learning job
needs does not grow with the project (a 10M-query project once took 24 GB, enough to end the
service's process), no transaction of it writes more than a part's suggestions (one of all of
them held a million-query project's writers for 10 to 30 s), and every query is scored."""

from __future__ import annotations

import random
import tracemalloc

from sqlalchemy import text

from service import create_app
from service.engine import suggested
from service.learning.learner import Learner
from service.org import admin
from service.store.db import session_scope
from service.suggestions.learning import Settings
from tests.support.world import small_org

THEMES = {"brand": ["nike", "adidas", "puma", "reebok", "asics"],
          "sale": ["cheap", "discount", "deal", "offer", "bargain"],
          "local": ["near", "store", "shop", "open", "city"]}
FILLER = [f"w{n}" for n in range(3000)]
# Small enough that both projects below are many times over them.
SMALL = Settings(most_learned_from=600, least_per_tag=100, scored_at_once=500)


def learned(database_url: str, queries: int, watch: bool = False):
    """A project of `queries` queries, half tagged by their theme's word, learned: the peak
    of memory allocated while learning, how many tagged queries it learned from, and the keys
    of the untagged queries given no suggestion; to `watch` it, the suggestions kept."""
    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    try:
        rng = random.Random(queries)
        with session_scope(app) as session:
            org = small_org(session, f"Org {queries}", "Shop", tags=tuple(THEMES))
            admin.insert_queries(session, org.project_id, [
                (f"{rng.choice(THEMES[theme])} {rng.choice(FILLER)} {rng.choice(FILLER)} {n}",
                 "en", "US", [org.tags[theme]] if n % 2 == 0 else [], None)
                for n in range(queries) for theme in [rng.choice(list(THEMES))]])
        learner = Learner(app.extensions["tagdesk_sessionmaker"], settings=SMALL)
        from service.suggestions import learning, scoring  # noqa: F401  (imports not counted)

        tracemalloc.start()
        try:
            learner.refresh(org.project_id)
            learner.wait(300)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        with session_scope(app) as session:
            learned_from = session.execute(text(
                "SELECT learned_from FROM suggestion_models WHERE project_id = :p"),
                {"p": org.project_id}).scalar_one()
            kept = session.execute(text(
                "SELECT count(*) FROM query_suggestions WHERE project_id = :p"),
                {"p": org.project_id}).scalar_one()
            given = set(session.execute(text(
                "SELECT s.query_pk FROM query_suggestions s WHERE s.project_id = :p AND NOT "
                "EXISTS (SELECT 1 FROM query_tags t WHERE t.query_pk = s.query_pk)"),
                {"p": org.project_id}).scalars())
            untagged = set(session.execute(text(
                "SELECT q.pk FROM queries q WHERE q.project_id = :p AND NOT EXISTS "
                "(SELECT 1 FROM query_tags t WHERE t.query_pk = q.pk)"),
                {"p": org.project_id}).scalars())
        assert given <= untagged
        if watch:
            return kept
        return peak, learned_from, untagged - given
    finally:
        app.extensions["tagdesk_engine"].dispose()


def test_the_memory_of_learning_does_not_grow_with_the_project(database_url):
    small_peak, small_from, small_left = learned(database_url, 3_000)
    large_peak, large_from, large_left = learned(database_url, 12_000)
    # Four times the queries: the same sample learned from, parts of the same size scored.
    assert small_from <= SMALL.most_learned_from * 1.2
    assert large_from <= SMALL.most_learned_from * 1.2
    assert large_peak <= 1.3 * small_peak, (small_peak, large_peak)
    # Every part was scored: nearly every untagged query, in the last part as in the first,
    # has a suggestion (each holds its theme's word).
    assert len(small_left) <= 0.05 * 1_500 and len(large_left) <= 0.05 * 6_000


def test_no_transaction_of_learning_writes_more_than_a_parts_suggestions(database_url,
                                                                         monkeypatch):
    """The suggestions kept, seen from another connection as each part begins to be read:
    they grow a part at a time (one transaction at the end wrote them all, and every
    look saw none)."""
    seen: list[int] = []
    real = suggested.texts_after

    def counted(connection, project_id, after, limit):
        with connection.engine.connect() as other:
            seen.append(other.execute(text(
                "SELECT count(*) FROM query_suggestions WHERE project_id = :p"),
                {"p": project_id}).scalar_one())
        return real(connection, project_id, after, limit)

    monkeypatch.setattr(suggested, "texts_after", counted)
    kept = learned(database_url, 3_000, watch=True)
    grown = [later - earlier for earlier, later in zip(seen, [*seen[1:], kept], strict=True)]
    assert sum(1 for step in grown if step > 0) >= 3_000 // SMALL.scored_at_once - 1, grown
    # A part of 500 queries, each suggested at most its three tags.
    assert max(grown) <= SMALL.scored_at_once * len(THEMES), grown
