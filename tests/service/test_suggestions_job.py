"""The suggestions' background job (service/learning/learner.py) over real HTTP on SQLite and
(TAGDESK_TEST_POSTGRES=1) PostgreSQL: it learns again once enough links changed and not more
often than its interval, Refresh starts it whatever changed, requests go on while it learns
(the status says "learning"), what was tagged or rejected while it learned is never
suggested, and the queries an import adds are scored when the import ends."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from sqlalchemy import text

from service.engine import suggested
from service.learning import learner
from service.learning.learner import of_app
from service.store.db import begin_write, session_scope
from service.suggestions import learning
from tests.service.counters import assert_counters_exact
from tests.service.test_imports import EMAIL, PASSWORD, Browser
from tests.service.test_suggestions_api import REFRESH, STATUS, listed, rows
from tests.support.api import Api

MIN_LINKS = 3


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "SUGGESTIONS_MIN_LINKS": MIN_LINKS, "SUGGESTIONS_MIN_SHARE": 1.0,
            "SUGGESTIONS_MIN_SECONDS": 0, "IMPORTS_FOLDER": str(tmp_path / "imports")}


def learned_at(api: Api) -> str | None:
    return api.post(STATUS, {}).json()["learnedAt"]


def tag(api: Api, records: list[dict], tag_id: int) -> None:
    response = api.call("PATCH", "/api/queries/many/tags-edit", {"queries": [
        {"query": r["query"], "language": r["language"], "country": r["country"],
         "add": [tag_id]} for r in records]})
    assert response.status_code == 200, response.text


@pytest.fixture
def first(api, world, service_app) -> str:
    world.add_queries(rows())
    assert api.post(REFRESH, {}).status_code == 202
    of_app(service_app).wait(120)
    return learned_at(api)


def test_it_learns_again_once_enough_links_changed(api, world, service_app, first):
    untagged = [r for r in listed(api).values() if not r["tags"]]
    tag(api, untagged[:MIN_LINKS - 1], world.tags["local"])
    of_app(service_app).wait(120)
    assert learned_at(api) == first  # two links: not enough
    tag(api, untagged[MIN_LINKS - 1:MIN_LINKS], world.tags["local"])
    of_app(service_app).wait(120)
    assert learned_at(api) > first


def test_not_more_often_than_its_interval(api, world, service_app, first):
    of_app(service_app).thresholds = learner.Thresholds(MIN_LINKS, 1.0, 3600.0)
    untagged = [r for r in listed(api).values() if not r["tags"]]
    tag(api, untagged[:MIN_LINKS * 2], world.tags["local"])
    of_app(service_app).wait(120)
    assert learned_at(api) == first
    # Refresh starts it whatever the interval.
    assert api.post(REFRESH, {}).json() == {"state": "learning", "started": True}
    of_app(service_app).wait(120)
    assert learned_at(api) > first


def test_requests_go_on_while_it_learns_and_what_changed_meanwhile_is_not_suggested(
        api, world, service_app, monkeypatch, first):
    brand = world.tags["brand"]
    suggested = [r for r in listed(api, include=["suggestions"]).values()
                 if brand in {s["tagId"] for s in r["suggestions"]}]
    assert len(suggested) >= 2
    reading, release = threading.Event(), threading.Event()
    real = learning.learn  # the learner imports it when it runs

    def held(*args, **kwargs):
        reading.set()
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(learning, "learn", held)
    assert api.post(REFRESH, {}).json()["started"] is True
    assert reading.wait(60)
    try:
        assert api.post(STATUS, {}).json()["state"] == "learning"
        assert api.post(REFRESH, {}).json()["started"] is False  # one job at a time
        tag(api, suggested[:1], brand)  # a write goes through while it learns
        rejected = api.post("/api/suggestions/reject", {"tagId": brand,
                                                        "queryIds": [suggested[1]["id"]]})
        assert rejected.status_code == 200
    finally:
        release.set()
    of_app(service_app).wait(120)
    assert api.post(STATUS, {}).json()["state"] == "ready"
    names = set(listed(api, suggestedTagIds=[brand], minConfidence=0))
    assert not names & {suggested[0]["query"], suggested[1]["query"]}
    assert brand in listed(api)[suggested[0]["query"]]["tags"]


def test_an_import_s_queries_are_scored_when_it_ends(api, world, service_app, first):
    browser = Browser(service_app, world.with_administrator(EMAIL, PASSWORD)).sign_in()
    browser.imported("query,language,country,tags\nmountain shoes,en,US,\n"
                     "sports bag,en,US,\n", name="new.csv")
    of_app(service_app).wait(120)
    scored = world.run(lambda s: dict(s.execute(text(
        "SELECT q.query, count(s.tag_id) FROM queries q LEFT JOIN query_suggestions s "
        "ON s.query_pk = q.pk WHERE q.query IN ('mountain shoes', 'sports bag') "
        "GROUP BY q.query")).all()))
    assert scored == {"mountain shoes": 1, "sports bag": 1}
    assert learned_at(api) == first  # scored, not learned again


def test_the_command_line_s_import_is_scored_when_it_ends(api, world, flask_cli, tmp_path,
                                                          first):
    path = tmp_path / "new.csv"
    path.write_text("query,language,country,tags\nmountain shoes,en,US,\n")
    result = flask_cli("import-queries", world.project_id, str(path))
    assert result.exit_code == 0, result.output
    assert world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM query_suggestions s JOIN queries q ON q.pk = s.query_pk "
        "WHERE q.query = 'mountain shoes'")).scalar()) == 1


def test_a_learning_stopped_half_way_leaves_every_count_exact(api, world, service_app, first,
                                                               monkeypatch):
    """Its suggestions are written a part at a time: when the job stops being this
    process's half-way (another process found it dead), the parts written stay, the rest is
    left, and the suggested bitmaps equal the suggestions kept at every commit."""
    before = learned_at(api)
    real_learn = learning.learn

    def suggesting_every_tag(*args, **kwargs):  # a new model whose suggestions all differ
        model = real_learn(*args, **kwargs)
        return dataclasses.replace(model, bias=model.bias + 50)

    monkeypatch.setattr(learning, "learn", suggesting_every_tag)
    parts = learner.Learner(service_app.extensions["tagdesk_sessionmaker"],
                            settings=learning.Settings(scored_at_once=8))
    real, reads = suggested.texts_after, []

    def interrupted_on_the_third_part(connection, project_id, after, limit):
        reads.append(after)
        if len(reads) == 3:
            with session_scope(service_app) as session:
                begin_write(session)
                for seen in suggested.watched(session.connection(), project_id):
                    suggested.jobs.interrupt(session.connection(), seen, "Stopped (test).")
        return real(connection, project_id, after, limit)

    monkeypatch.setattr(suggested, "texts_after", interrupted_on_the_third_part)
    parts.refresh(world.project_id)
    parts.wait(120)
    assert len(reads) == 3
    assert world.run(lambda s: s.execute(text(
        "SELECT state FROM suggestion_jobs ORDER BY created_at DESC LIMIT 1")).scalar()) == \
        "interrupted"
    assert learned_at(api) == before  # the model is the last finished learning's
    every = world.run(lambda s: s.execute(text(
        "SELECT count(*) FROM query_suggestions WHERE confidence > 0.999")).scalar())
    assert every >= 16  # the two parts written: each query suggested every tag it lacks
    assert_counters_exact(world)
