"""One lifecycle for every background job (weblib/job_lifecycle.py), on real SQLite and
PostgreSQL and on both kinds of time column the two sides keep (seconds since the epoch, naive
UTC datetimes): a queued job is claimed by exactly one of the processes that try at once, its
heartbeat thread beats until the job is no longer its process's, a job is dead when its owner
process is gone or it has been silent longer than its state allows, and it is interrupted
only as it was seen."""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Float,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    insert,
    select,
)

from tests.support.databases import postgres_database_of_its_own
from tests.support.processes import at_once
from tests.support.waiting import wait_until
from weblib.job_lifecycle import (
    EPOCH_SECONDS,
    INTERRUPTED,
    QUEUED,
    QUEUED_STALE_SECONDS,
    RUNNING,
    Clock,
    Heartbeat,
    Lifecycle,
)
from weblib.processes import owner_is_dead, process_owner
from weblib.sqlite import BEGIN_OPTION, sqlite_engine

NAIVE_UTC = Clock(lambda: datetime.now(UTC).replace(tzinfo=None), timedelta.total_seconds)
CLOCKS = {"epoch": (Float, EPOCH_SECONDS), "datetime": (DateTime, NAIVE_UTC)}
STALE = 30.0
STOPPED = "It stopped before it finished."
CHECKING = "checking"  # a state of one side's own in which a process works on the job


def jobs_table(times: str) -> Table:
    time_type = CLOCKS[times][0]
    return Table(
        "lifecycle_jobs", MetaData(),
        Column("id", String(36), primary_key=True),
        Column("state", String(20), nullable=False),
        Column("owner", String(200), nullable=True),
        Column("heartbeat_at", time_type, nullable=True),
        Column("created_at", time_type, nullable=False),
        Column("finished_at", time_type, nullable=True),
        Column("message", Text, nullable=True),
        Column("note", Text, nullable=True),  # a column of the side's own
    )


def lifecycle_of(times: str) -> Lifecycle:
    return Lifecycle(jobs_table(times), CLOCKS[times][1], ended=("done", "failed"),
                     working=(CHECKING,))


def engine_of(url: str):
    return sqlite_engine(url) if url.startswith("sqlite") else create_engine(url)


def writing(engine):
    """A write transaction (on SQLite, the write lock taken up front, as both sides do)."""
    return engine.connect().execution_options(**{BEGIN_OPTION: "IMMEDIATE"})


class Jobs:
    """A table of jobs in a real database, and the lifecycle acting on it."""

    def __init__(self, url: str, times: str):
        self.url, self.times = url, times
        self.engine = engine_of(url)
        self.lifecycle = lifecycle_of(times)
        self.table = self.lifecycle.table
        self.clock = self.lifecycle.clock
        self.table.create(self.engine)

    def ago(self, seconds: float):
        now = self.clock.now()
        return now - (timedelta(seconds=seconds) if self.times == "datetime" else seconds)

    def add(self, job_id: str, state: str = QUEUED, owner: str | None = None,
            heartbeat_ago: float | None = None, created_ago: float = 0.0) -> None:
        with self.engine.begin() as connection:
            connection.execute(insert(self.table).values(
                id=job_id, state=state, owner=owner, created_at=self.ago(created_ago),
                heartbeat_at=None if heartbeat_ago is None else self.ago(heartbeat_ago)))

    def get(self, job_id: str):
        with self.engine.connect() as connection:
            return connection.execute(
                select(self.table).where(self.table.c.id == job_id)).first()

    def move(self, do) -> bool:
        """`do(connection)` in a write transaction of its own; what it answered."""
        with writing(self.engine) as connection, connection.begin():
            return do(connection)


@pytest.fixture(scope="module")
def postgres_url():
    with postgres_database_of_its_own("tagdesk_lifecycle_test_") as url:
        yield url


def jobs_in(request, tmp_path):
    database, times = request.param
    url = request.getfixturevalue("postgres_url") if database == "postgres" \
        else f"sqlite:///{tmp_path / 'jobs.sqlite3'}"
    made = Jobs(url, times)
    yield made
    made.table.drop(made.engine)
    made.engine.dispose()


ON_POSTGRES = pytest.mark.postgres


@pytest.fixture(params=[
    ("sqlite", "epoch"), ("sqlite", "datetime"),
    pytest.param(("postgres", "epoch"), marks=ON_POSTGRES),
    pytest.param(("postgres", "datetime"), marks=ON_POSTGRES),
], ids="-".join)
def jobs(request, tmp_path):
    yield from jobs_in(request, tmp_path)


@pytest.fixture(params=[
    ("sqlite", "epoch"), pytest.param(("postgres", "datetime"), marks=ON_POSTGRES),
], ids="-".join)
def jobs_for_processes(request, tmp_path):
    """Each database once, each kind of time once: what other processes do is the same on
    either kind of time column, and each spawned process takes a second or two to start."""
    yield from jobs_in(request, tmp_path)


# --- claiming --------------------------------------------------------------------------------

JOBS_TO_CLAIM = 30


def claim_every_job(url: str, times: str) -> list[str]:
    """A worker process: try to claim every queued job; the ids it took."""
    lifecycle, engine = lifecycle_of(times), engine_of(url)
    taken = []
    try:
        for number in range(JOBS_TO_CLAIM):
            job_id = f"job-{number}"
            with writing(engine) as connection, connection.begin():
                if lifecycle.claim(connection, job_id, process_owner(),
                                   note=f"taken by {os.getpid()}"):
                    taken.append(job_id)
    finally:
        engine.dispose()
    return taken


def test_each_queued_job_is_claimed_by_exactly_one_of_the_workers_that_try_at_once(
        jobs_for_processes):
    jobs = jobs_for_processes
    for number in range(JOBS_TO_CLAIM):
        jobs.add(f"job-{number}")
    taken = at_once(claim_every_job, (jobs.url, jobs.times), 4)
    claims = [job_id for one_worker in taken for job_id in one_worker]
    assert sorted(claims) == sorted(f"job-{number}" for number in range(JOBS_TO_CLAIM))
    for job_id in claims:
        job = jobs.get(job_id)
        pid = job.owner.split(":")[1]
        assert (job.state, job.note) == (RUNNING, f"taken by {pid}")
        assert job.heartbeat_at is not None


def test_only_a_queued_job_is_claimed_and_only_while_the_condition_holds(jobs):
    lifecycle, c = jobs.lifecycle, jobs.table.c
    for state in (RUNNING, INTERRUPTED, CHECKING, "done"):
        jobs.add(state, state=state, owner="another-host:1:a")
        assert not jobs.move(lambda db, job_id=state: lifecycle.claim(db, job_id, "me"))
        assert jobs.get(state).owner == "another-host:1:a"
    jobs.add("mine", owner="me")
    assert not jobs.move(lambda db: lifecycle.claim(db, "mine", "me", c.owner == "another"))
    assert jobs.move(lambda db: lifecycle.claim(db, "mine", "me", c.owner == "me"))
    assert not jobs.move(lambda db: lifecycle.claim(db, "mine", "me"))  # not queued any more


# --- the moves after a claim -----------------------------------------------------------------


def test_a_job_ends_only_from_running_by_its_owner_in_a_state_its_side_names(jobs):
    lifecycle = jobs.lifecycle
    jobs.add("job")
    assert not jobs.move(lambda db: lifecycle.finish(db, "job", "me", "done"))  # queued
    assert jobs.move(lambda db: lifecycle.claim(db, "job", "me"))
    with pytest.raises(ValueError):
        jobs.move(lambda db: lifecycle.finish(db, "job", "me", "cancelled"))
    assert not jobs.move(lambda db: lifecycle.finish(db, "job", "someone else", "done"))
    assert jobs.move(lambda db: lifecycle.finish(db, "job", "me", "failed", "Why.",
                                                 note="kept"))
    job = jobs.get("job")
    assert (job.state, job.message, job.note) == ("failed", "Why.", "kept")
    assert job.finished_at is not None
    assert not jobs.move(lambda db: lifecycle.finish(db, "job", "me", "done"))  # once


def test_only_an_interrupted_job_is_queued_again(jobs):
    lifecycle = jobs.lifecycle
    jobs.add("job", state=RUNNING, owner="another-host:1:a", heartbeat_ago=0)
    assert not jobs.move(lambda db: lifecycle.requeue(db, "job", "me"))
    assert jobs.move(lambda db: lifecycle.interrupt(db, jobs.get("job"), STOPPED))
    job = jobs.get("job")
    assert (job.state, job.message) == (INTERRUPTED, STOPPED) and job.finished_at is not None
    assert jobs.move(lambda db: lifecycle.requeue(db, "job", "me", note="again"))
    job = jobs.get("job")
    assert (job.state, job.owner, job.message, job.finished_at, job.note) == (
        QUEUED, "me", None, None, "again")


def test_a_table_without_the_lifecycles_columns_is_refused():
    table = Table("other", MetaData(), Column("id", String(36), primary_key=True),
                  Column("state", String(20)))
    with pytest.raises(ValueError, match="owner, heartbeat_at"):
        Lifecycle(table, EPOCH_SECONDS, ended=("done",))


# --- the heartbeat ---------------------------------------------------------------------------


def thread_named(name: str) -> bool:
    return any(thread.name == name for thread in threading.enumerate())


def test_the_heartbeat_thread_beats_until_the_job_is_no_longer_its_processs(jobs):
    lifecycle = jobs.lifecycle
    jobs.add("job")
    assert jobs.move(lambda db: lifecycle.claim(db, "job", process_owner()))
    beats = []

    def beat() -> bool:
        beats.append(jobs.get("job").heartbeat_at)
        return jobs.move(lambda db: lifecycle.beat(db, "job", process_owner()))

    with Heartbeat(beat, 0.02, "test-heartbeat-stops"):
        assert wait_until(lambda: len(beats) >= 3)
        assert jobs.get("job").heartbeat_at > beats[0]  # each beat writes the time anew
        seen = jobs.get("job")
        assert lifecycle.is_dead(seen, STALE) is False
        # Interrupted meanwhile (taken for dead elsewhere): the thread stops by itself.
        assert wait_until(lambda: jobs.move(lambda db: lifecycle.interrupt(
            db, jobs.get("job"), STOPPED)))
        assert wait_until(lambda: not thread_named("test-heartbeat-stops"))
    assert jobs.get("job").state == INTERRUPTED


def test_a_beat_that_fails_is_logged_and_tried_again(caplog):
    answers = iter([ConnectionError("database away"), True, False])

    def beat() -> bool:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with caplog.at_level(logging.WARNING, "weblib.job_lifecycle"), \
            Heartbeat(beat, 0.01, "test-heartbeat-fails"):
        assert wait_until(lambda: not thread_named("test-heartbeat-fails"))
    assert "test-heartbeat-fails: heartbeat not written" in caplog.text
    assert next(answers, "all used") == "all used"  # it beat again after the failure


def test_a_beat_checks_the_owner_and_the_state_it_works_in(jobs):
    lifecycle = jobs.lifecycle
    jobs.add("job", state=CHECKING, owner="me", heartbeat_ago=60)
    assert not jobs.move(lambda db: lifecycle.beat(db, "job", "me"))  # not running
    assert not jobs.move(lambda db: lifecycle.beat(db, "job", "other", state=CHECKING))
    assert jobs.move(lambda db: lifecycle.beat(db, "job", "me", state=CHECKING))
    assert not lifecycle.is_dead(jobs.get("job"), STALE)


# --- the one rule for dead -------------------------------------------------------------------


def beat_forever(url: str, times: str, job_id: str) -> None:
    """A worker process: claim the job and beat its heartbeat until the process is killed."""
    lifecycle, engine = lifecycle_of(times), engine_of(url)
    with writing(engine) as connection, connection.begin():
        lifecycle.claim(connection, job_id, process_owner())

    def beat() -> bool:
        with writing(engine) as connection, connection.begin():
            return lifecycle.beat(connection, job_id, process_owner())

    with Heartbeat(beat, 0.05, "worker-heartbeat"):
        time.sleep(600)


def test_a_job_whose_process_is_killed_is_dead_at_once_though_its_heartbeat_is_fresh(
        jobs_for_processes):
    jobs = jobs_for_processes
    jobs.add("job")
    worker = multiprocessing.get_context("spawn").Process(
        target=beat_forever, args=(jobs.url, jobs.times, "job"))
    worker.start()
    try:
        assert wait_until(lambda: jobs.get("job").state == RUNNING, timeout=60)
        first = jobs.get("job").heartbeat_at
        assert wait_until(lambda: jobs.get("job").heartbeat_at != first)  # it beats
        assert not jobs.lifecycle.is_dead(jobs.get("job"), STALE)
    finally:
        worker.kill()
        worker.join(15)
    seen = jobs.get("job")
    assert jobs.lifecycle.is_dead(seen, STALE)
    assert jobs.move(lambda db: jobs.lifecycle.interrupt(db, seen, STOPPED))
    assert jobs.get("job").state == INTERRUPTED


def test_dead_is_an_owner_gone_or_a_silence_longer_than_the_state_allows(jobs):
    here_gone = f"{os.uname().nodename}:999999999:x"
    elsewhere = "another-host:12:y"
    cases = {  # job id: (state, owner, seconds since its heartbeat, dead?)
        "running-here": (RUNNING, process_owner(), 0, False),
        "running-owner-gone": (RUNNING, here_gone, 0, True),
        "running-no-owner": (RUNNING, None, 0, True),
        "running-elsewhere": (RUNNING, elsewhere, STALE - 5, False),
        "running-elsewhere-silent": (RUNNING, elsewhere, STALE + 5, True),
        "checking-elsewhere-silent": (CHECKING, elsewhere, STALE + 5, True),
        "queued-waiting-its-turn": (QUEUED, elsewhere, None, False),
        "queued-owner-gone": (QUEUED, here_gone, None, True),
        "queued-too-long": (QUEUED, elsewhere, None, True),
        "ended-owner-gone": ("done", here_gone, 0, False),
        "interrupted-owner-gone": (INTERRUPTED, here_gone, 0, False),
    }
    for job_id, (state, owner, silent, _) in cases.items():
        jobs.add(job_id, state=state, owner=owner, heartbeat_ago=silent,
                 created_ago=QUEUED_STALE_SECONDS + 60 if job_id == "queued-too-long"
                 else STALE + 60)
    assert owner_is_dead(here_gone) and not owner_is_dead(process_owner())
    with jobs.engine.connect() as connection:
        watched = jobs.lifecycle.watching(connection)
    assert {job.id for job in watched} == {
        job_id for job_id, case in cases.items() if case[0] in (QUEUED, RUNNING, CHECKING)}
    dead = {job.id for job in jobs.lifecycle.dead(watched, STALE)}
    assert dead == {job_id for job_id, case in cases.items() if case[3]}
    with jobs.engine.connect() as connection:
        one_project = jobs.lifecycle.watching(connection, jobs.table.c.id.like("queued-%"))
    assert {job.id for job in one_project} == {
        "queued-waiting-its-turn", "queued-owner-gone", "queued-too-long"}


def test_a_job_is_interrupted_only_as_it_was_seen(jobs):
    lifecycle = jobs.lifecycle
    jobs.add("beat-since", state=RUNNING, owner="another-host:1:a", heartbeat_ago=STALE + 5)
    jobs.add("taken-since", state=QUEUED, owner="another-host:1:a",
             created_ago=QUEUED_STALE_SECONDS + 5)
    jobs.add("ended-since", state=RUNNING, owner="another-host:1:a", heartbeat_ago=STALE + 5)
    seen = {job_id: jobs.get(job_id) for job_id in ("beat-since", "taken-since", "ended-since")}
    assert all(lifecycle.is_dead(job, STALE) for job in seen.values())
    assert jobs.move(lambda db: lifecycle.beat(db, "beat-since", "another-host:1:a"))
    assert jobs.move(lambda db: lifecycle.claim(db, "taken-since", "another-host:2:b"))
    assert jobs.move(lambda db: lifecycle.finish(db, "ended-since", "another-host:1:a", "done"))
    for job_id, job in seen.items():
        assert not jobs.move(lambda db, job=job: lifecycle.interrupt(db, job, STOPPED))
        assert jobs.get(job_id).state != INTERRUPTED
    assert not jobs.move(lambda db: lifecycle.interrupt(db, jobs.get("ended-since"), STOPPED))
    # What its side writes with it, in the same statement.
    jobs.add("silent", state=RUNNING, owner="another-host:1:a", heartbeat_ago=STALE + 5)
    assert jobs.move(lambda db: lifecycle.interrupt(db, jobs.get("silent"), STOPPED,
                                                    note="its own"))
    job = jobs.get("silent")
    assert (job.state, job.message, job.note) == (INTERRUPTED, STOPPED, "its own")


def test_the_silence_a_state_allows():
    lifecycle = lifecycle_of("epoch")
    assert lifecycle.allowed_silence(RUNNING, STALE) == STALE
    assert lifecycle.allowed_silence(CHECKING, STALE) == STALE
    assert lifecycle.allowed_silence(QUEUED, STALE) == QUEUED_STALE_SECONDS
    assert lifecycle.allowed_silence(QUEUED, 2 * QUEUED_STALE_SECONDS) == \
        2 * QUEUED_STALE_SECONDS

