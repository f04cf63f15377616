"""The suggestions' jobs on the one job lifecycle (weblib/job_lifecycle.py, table
`suggestion_jobs`, migration 0041), over real HTTP on SQLite and (TAGDESK_TEST_POSTGRES=1)
PostgreSQL: a learning job whose process is gone, or silent longer than the stale time, is
marked interrupted with a sentence and learning starts again; a live one blocks Refresh; the
heartbeat beats while a slow learning runs; with TAGDESK_SUGGESTIONS_QUEUE the job goes on a
Redis queue that `flask --app service suggestions-worker` runs (TAGDESK_TEST_REDIS=1)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import DateTime, column, inspect, select, table, text

from service.api import suggestions as suggestions_api
from service.engine import suggested
from service.engine.tables import suggestion_jobs
from service.learning.learner import BROKEN, STOPPED, Learner, Thresholds, of_app
from service.learning.queue import NOT_QUEUED
from service.store.db import begin_write
from service.store.models import utcnow
from service.suggestions import learning
from tests.service.migrating import (
    P1,
    engine_of_its_own,
    migrate,
    migrated_with_rows,
    model_differences,
)
from tests.service.test_suggestions_api import REFRESH, STATUS, rows
from tests.support.databases import REDIS_URL, close_service_app
from tests.support.waiting import wait_until
from weblib.job_lifecycle import queue_owner

ROOT = Path(__file__).resolve().parents[2]
OWNER_OF_A_PROCESS = ("from weblib.processes import process_owner; "
                      "print(process_owner(), flush=True)")


def jobs(world) -> list:
    return world.run(lambda s: s.execute(text(
        "SELECT id, kind, state, owner, message, heartbeat_at FROM suggestion_jobs "
        "ORDER BY created_at, id")).all())


def learning_elsewhere(world, owner: str, silent_for: timedelta | None = None,
                       kind: str = suggested.LEARN) -> str:
    """A job of the project (learning, or `kind`) that the process `owner` claimed (its
    heartbeat now, or `silent_for` ago), as that process would have; its id."""
    def start(session):
        begin_write(session)
        connection = session.connection()
        suggested.ensure(connection, world.project_id)
        job_id = suggested.new_job(connection, world.project_id, kind, owner, utcnow())
        assert suggested.jobs.claim(connection, job_id, owner)
        if silent_for is not None:
            connection.execute(text("UPDATE suggestion_jobs SET heartbeat_at = :at, "
                                    "created_at = :at WHERE id = :id"),
                               {"at": utcnow() - silent_for, "id": job_id})
        return job_id

    return world.run(start)


@pytest.fixture
def gone_owner() -> str:
    """The owner of a process of this host that has ended."""
    done = subprocess.run([sys.executable, "-c", OWNER_OF_A_PROCESS], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def live_owner():
    """The owner of a process of this host that runs (and says nothing) until the test
    ends."""
    process = subprocess.Popen(
        [sys.executable, "-c", OWNER_OF_A_PROCESS + "; import time; time.sleep(600)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.wait(10)
        process.stdout.close()


def test_a_job_whose_process_is_gone_is_interrupted_and_learning_starts_again(
        api, world, service_app, gone_owner):
    world.add_queries(rows())
    dead = learning_elsewhere(world, gone_owner)
    scoring = learning_elsewhere(world, gone_owner, kind=suggested.SCORE)
    answer = api.post(REFRESH, {})
    assert answer.status_code == 202
    assert answer.json() == {"state": "learning", "started": True}
    of_app(service_app).wait(120)
    found = {job.id: job for job in jobs(world)}
    assert (found[dead].state, found[dead].message) == ("interrupted", STOPPED["learn"])
    assert (found[scoring].state, found[scoring].message) == ("interrupted", STOPPED["score"])
    assert [(job.kind, job.state) for job in found.values()
            if job.id not in (dead, scoring)] == [("learn", "learned")]
    answer = api.post(STATUS, {}).json()
    assert answer["state"] == "ready"
    assert "problem" not in answer  # the interrupted one is not the newest


def test_a_silent_job_older_than_the_stale_time_is_interrupted_and_learning_starts_again(
        api, world, service_app, live_owner):
    world.add_queries(rows())
    stale = of_app(service_app).thresholds.stale_seconds
    silent = learning_elsewhere(world, live_owner, timedelta(seconds=stale + 60))
    assert api.post(REFRESH, {}).json()["started"] is True
    of_app(service_app).wait(120)
    states = {job.id: (job.state, job.message) for job in jobs(world)}
    assert states.pop(silent) == ("interrupted", STOPPED["learn"])
    assert [state for state, _message in states.values()] == ["learned"]
    assert api.post(STATUS, {}).json()["state"] == "ready"


def test_a_live_job_blocks_refresh_and_the_status_says_learning(api, world, service_app,
                                                                live_owner):
    world.add_queries(rows())
    live = learning_elsewhere(world, live_owner)
    answer = api.post(REFRESH, {})
    assert answer.status_code == 202
    assert answer.json() == {"state": "learning", "started": False}
    assert api.post(STATUS, {}).json()["state"] == "learning"  # never learned: not started
    of_app(service_app).wait(120)
    assert [(job.id, job.state) for job in jobs(world)] == [(live, "running")]


def test_refreshes_at_once_start_one_job(api, world, service_app, monkeypatch):
    world.add_queries(rows())
    assert api.post(REFRESH, {}).json()["started"] is True  # the project's row made
    of_app(service_app).wait(120)
    reading, release = threading.Event(), threading.Event()
    real = learning.learn  # the learner imports it when it runs

    def held(*args, **kwargs):
        reading.set()
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(learning, "learn", held)
    made = suggested.new_job

    def slowly_made(*args, **kwargs):  # every asker inside its transaction at once
        time.sleep(0.5)
        return made(*args, **kwargs)

    monkeypatch.setattr(suggested, "new_job", slowly_made)
    start = threading.Barrier(8)

    def refresh(_n):
        start.wait(30)
        return api.another_session().post(REFRESH, {}).json()["started"]

    try:
        with ThreadPoolExecutor(8) as pool:
            started = list(pool.map(refresh, range(8)))
        assert sorted(started) == [False] * 7 + [True]
        assert reading.wait(60)
        assert [(job.kind, job.state) for job in jobs(world)] == [
            ("learn", "learned"), ("learn", "running")]
    finally:
        release.set()
    of_app(service_app).wait(120)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "learned")] * 2


def test_an_import_s_queries_are_scored_by_a_job(api, world, service_app, flask_cli, tmp_path):
    world.add_queries(rows())
    assert api.post(REFRESH, {}).json()["started"] is True
    of_app(service_app).wait(120)
    path = tmp_path / "new.csv"
    path.write_text("query,language,country,tags\nmountain shoes,en,US,\n")
    assert flask_cli("import-queries", world.project_id, str(path)).exit_code == 0
    assert [(job.kind, job.state, job.message) for job in jobs(world)] == [
        ("learn", "learned", "Learned from 24 tagged queries."),
        ("score", "scored", "1 new query scored.")]


def learning_slowed(monkeypatch, seconds: float) -> None:
    """Each learning, the real one, then a wait of `seconds` inside the job (the job imports
    `learn` as it starts)."""
    learn = learning.learn

    def slowly(*args, **kwargs):
        model = learn(*args, **kwargs)
        time.sleep(seconds)
        return model

    monkeypatch.setattr(learning, "learn", slowly)


def test_a_service_app_closed_by_the_tests_ends_its_jobs_first(api, world, service_app,
                                                                 monkeypatch):
    """The tests' teardown of a service app (close_service_app) waits for the learning its
    threads run: a job left running wrote into the next test's database, which PostgreSQL's
    emptying of it met as a deadlock (CI, the OpenAPI conformance of suggestions/accept)."""
    world.add_queries(rows())
    learning_slowed(monkeypatch, 2)
    assert api.post(REFRESH, {}).json()["started"] is True
    assert wait_until(lambda: [job.state for job in jobs(world)] == ["running"], 60, 0.05)
    close_service_app(service_app)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "learned")]


def test_the_heartbeat_beats_while_a_slow_learning_runs(api, world, service_app,
                                                       monkeypatch):
    """A learning that takes over 8 s (the real one, then a wait inside the job, as a slow
    machine or a large project would: the process's CPU stays free for the other tests),
    against a stale time of 10 s (a beat every 2.5 s). With 4 s (a beat a second), a CI run on a
    loaded machine (25 minutes in all) once found the job silent that long and began another."""
    world.add_queries([(f"{query} {n}", language, country, tags)
                       for n in range(40) for query, language, country, tags in rows()])
    learning_slowed(monkeypatch, 8)
    service_app.extensions["tagdesk_learner"] = slow = Learner(
        service_app.extensions["tagdesk_sessionmaker"], Thresholds(stale_seconds=10.0))
    started = time.monotonic()
    assert api.post(REFRESH, {}).json()["started"] is True
    beats = []
    while time.monotonic() - started < 120:
        [job] = jobs(world)
        if job.state not in ("queued", "running"):
            break
        if job.state == "running":
            beats.append(job.heartbeat_at)
            state = api.post(STATUS, {}).json()["state"]
            # Every look meanwhile finds it at work. The job may end during the look (a CI
            # run found "ready" so): only a look with the job running after it must say so.
            [after] = jobs(world)
            assert state == "learning" or after.state != "running", (state, after.state)
        time.sleep(0.2)
    slow.wait(120)
    assert time.monotonic() - started > 8
    assert [job.state for job in jobs(world)] == ["learned"]
    assert beats == sorted(beats)
    assert len(set(beats)) >= 3, beats
    assert api.post(STATUS, {}).json()["state"] == "ready"


def test_a_status_that_saw_the_first_learning_at_work_starts_no_second(api, world,
                                                                       service_app,
                                                                       monkeypatch):
    """The status reads the project's row while its first learning runs; the learning ends
    before the status asks for one (a project that never learned starts learning on its first
    look). The job it saw has ended learned, so no second learning starts: with a Refresh's
    "whatever changed", a CI run on a loaded machine found two learned jobs."""
    world.add_queries(rows())
    learn = learning.learn
    go = threading.Event()

    def when_told(*args, **kwargs):
        assert go.wait(60)
        return learn(*args, **kwargs)

    monkeypatch.setattr(learning, "learn", when_told)
    made = suggestions_api.counter

    def the_learning_ends_meanwhile(*args, **kwargs):
        if not go.is_set():  # the status has read the row: the learning is still at work
            go.set()
            of_app(service_app).wait(60)
        return made(*args, **kwargs)

    monkeypatch.setattr(suggestions_api, "counter", the_learning_ends_meanwhile)
    assert api.post(REFRESH, {}).json()["started"] is True
    assert api.post(STATUS, {}).json()["state"] == "learning"
    of_app(service_app).wait(60)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "learned")]
    assert api.post(STATUS, {}).json()["state"] == "ready"


def test_a_first_learning_that_failed_is_not_started_again_by_every_look(api, world,
                                                                         service_app,
                                                                         monkeypatch, caplog):
    """A project whose first learning fails (say, out of memory at its size) is tried again by
    a status look once its last asking is `min_seconds` old, as learning after writes is: not
    at every look (a page open on it looks every few seconds), each a whole learning spent."""
    def broken(*_args, **_kwargs):
        raise MemoryError

    monkeypatch.setattr(learning, "learn", broken)
    service_app.extensions["tagdesk_learner"] = learner = Learner(
        service_app.extensions["tagdesk_sessionmaker"], Thresholds(min_seconds=120.0))
    world.add_queries(rows())
    first = api.post(STATUS, {}).json()  # the look that starts it
    # The learning it starts may fail before its answer is made (a CI run found so): then
    # the answer says why already; nothing else is a problem yet.
    assert (first["state"], first.get("problem", BROKEN["learn"])) == (
        "learning", BROKEN["learn"])
    learner.wait(60)
    for _ in range(2):  # each says why there is nothing yet
        answer = api.post(STATUS, {}).json()
        assert (answer["state"], answer["problem"]) == ("learning", BROKEN["learn"])
        learner.wait(60)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "failed")]
    assert api.post(REFRESH, {}).json()["started"] is True  # Refresh tries again at once
    learner.wait(60)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "failed")] * 2
    # Two minutes on, a look tries again.
    world.run(lambda s: s.execute(text(
        "UPDATE suggestion_models SET asked_at = :then"), {"then": utcnow() - timedelta(
            seconds=121)}))
    assert api.post(STATUS, {}).json()["state"] == "learning"
    learner.wait(60)
    assert [(job.kind, job.state) for job in jobs(world)] == [("learn", "failed")] * 3


def test_a_queue_that_does_not_answer_leaves_the_job_interrupted(api, world, service_app):
    service_app.config["SUGGESTIONS_QUEUE"] = "redis://127.0.0.1:1/0"  # nothing listens
    world.add_queries(rows())
    answer = api.post(REFRESH, {})
    assert answer.status_code == 202
    assert answer.json() == {"state": "learning", "started": False}
    [job] = jobs(world)
    assert (job.state, job.owner, job.message) == (
        "interrupted", queue_owner("tagdesk-suggestions"), NOT_QUEUED)
    answer = api.post(STATUS, {}).json()  # says why, and tries again two minutes on
    assert (answer["state"], answer["problem"]) == ("learning", NOT_QUEUED)
    assert len(jobs(world)) == 1


def test_the_worker_command_needs_the_queue(flask_cli):
    result = flask_cli("suggestions-worker", "--burst")
    assert result.exit_code == 2
    assert "TAGDESK_SUGGESTIONS_QUEUE" in result.output


@pytest.mark.redis
def test_refresh_queues_the_job_and_a_worker_learns_it(api, world, service_app,
                                                      database_url):
    from redis import Redis
    from rq import Queue

    name = f"tagdesk-test-suggestions-{secrets.token_hex(4)}"
    service_app.config.update(SUGGESTIONS_QUEUE=REDIS_URL, SUGGESTIONS_QUEUE_NAME=name)
    world.add_queries(rows())
    queue = Queue(name, connection=Redis.from_url(REDIS_URL))
    try:
        assert api.post(REFRESH, {}).json() == {"state": "learning", "started": True}
        [job] = jobs(world)
        assert (job.state, job.owner) == ("queued", queue_owner(name))
        assert queue.job_ids == [job.id]  # its id, and nothing else
        assert api.post(STATUS, {}).json()["state"] == "learning"
        assert api.post(REFRESH, {}).json()["started"] is False
        env = {**os.environ, "TAGDESK_DATABASE_URL": database_url,
               "TAGDESK_SUGGESTIONS_QUEUE": REDIS_URL, "TAGDESK_SUGGESTIONS_QUEUE_NAME": name}
        done = subprocess.run([sys.executable, "-m", "flask", "--app", "service",
                               "suggestions-worker", "--burst"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        [job] = jobs(world)
        assert job.state == "learned", job
        assert job.message == "Learned from 24 tagged queries."
        host, pid, _token = job.owner.split(":")
        assert int(pid) != os.getpid()  # the worker's process claimed it
        assert api.post(STATUS, {}).json()["state"] == "ready"
    finally:
        queue.delete(delete_jobs=True)
        queue.connection.close()


# --- migration 0041 -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0041_moves_the_claim_to_a_job_and_back(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_suggestion_jobs_") as engine:
        migrated_with_rows(engine, "0040", [("shoes", "en", "US")])
        since = utcnow() - timedelta(minutes=5)
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO suggestion_models (project_id, learning_owner, learning_since) "
                "VALUES (:p, 'host:1:token', :since)"), {"p": P1, "since": since})
        migrate(engine, "0041")
        assert [d for d in model_differences(engine) if "suggestion" in repr(d)] == []
        c = suggestion_jobs.c
        with engine.connect() as connection:
            [job] = connection.execute(select(c.project_id, c.kind, c.state, c.owner,
                                              c.heartbeat_at)).all()
        assert tuple(job) == (P1, "learn", "running", "host:1:token", since)
        migrate(engine, "0040", down=True)
        assert "suggestion_jobs" not in inspect(engine).get_table_names()
        claims = table("suggestion_models", column("learning_owner"),
                       column("learning_since", DateTime))
        with engine.connect() as connection:
            assert tuple(connection.execute(select(claims)).one()) == ("host:1:token", since)
        migrate(engine, "head")
