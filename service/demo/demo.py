"""The demo organization: three projects, about twenty tags, realistic multilingual queries,
and an administrator for its settings (seed_administrator)."""

from __future__ import annotations

import multiprocessing
import random
import secrets
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from itertools import chain, islice

from sqlalchemy import func, select

from .. import schema
from ..imports import imports
from ..org import accounts, admin, audit, keys
from ..store.db import session_scope
from ..store.models import ApiKey, User, utcnow
from .demo_data import PROJECTS, TAGS, assign_tags, generate_queries, query_numbers

DEMO_ORG_NAME = "Demo organization"
DEMO_ADMIN = "admin@demo.example"  # admin-2@demo.example for a second demo in one database
SMALL_PROJECT_TAGS = 8
DEMO_CURRENCY = "EUR"  # of the demo queries' CPC
BATCH = 5000
# Queries committed at a time, a range of the key's order each, as imports add them
# (service/imports/imports.py). PostgreSQL: an import's ranges, two connections adding at once (1M:
# 98 → 69 s against one statement). SQLite: one writer, and no one else writing, so fewer
# commits; but not one, since one transaction of ten million made a write-ahead log no page
# look-up could cross quickly.
RANGE_ROWS = {"sqlite": 1_000_000, "postgresql": imports.BATCH_ROWS}
# From this many queries, a child process makes their texts and times while this one tags and
# stages them: the texts take one core as long as the rest (forked, the child imports
# nothing; a smaller demo is made here, with no process to start).
MADE_ASIDE_ROWS = 100_000


def seed(app, count: int, progress: Callable[[str], None] = lambda _m: None,
         seed_value: int = 7) -> str:
    """Create the demo organization; `count` queries go to the first project. Returns a key."""
    rng = random.Random(seed_value)
    with session_scope(app) as session:
        org_id = admin.create_org(session, DEMO_ORG_NAME)
        key = admin.create_key(session, org_id, app.config["KEY_PREFIX"], name="Demo key")
        plan = []
        for position, project_name in enumerate(PROJECTS):
            project_id = admin.create_project(session, org_id, project_name,
                                              currency=DEMO_CURRENCY)
            tags = TAGS if position == 0 else TAGS[:SMALL_PROJECT_TAGS]
            tag_ids = [admin.create_tag(session, project_id, name, color)
                       for name, color in tags]
            size = count if position == 0 else min(1000, count // 10)
            plan.append((project_id, project_name, tag_ids, size))

    range_rows = RANGE_ROWS[app.extensions["tagdesk_engine"].dialect.name]
    jobs = [(size, tag_ids, seed_value + len(project_name))
            for _project_id, project_name, tag_ids, size in plan]
    aside = count >= MADE_ASIDE_ROWS and "fork" in multiprocessing.get_all_start_methods()
    made = _made_aside(jobs, rng) if aside else _made_here(jobs, rng)
    for (project_id, project_name, _tag_ids, _size), batches in zip(plan, made, strict=True):
        with session_scope(app) as session:
            inserted = imports.add_rows(session, project_id, batches, range_rows)
        progress(f"{project_name}: {inserted:,} queries")
    schema.analyze(app.extensions["tagdesk_engine"])
    return key


Job = tuple[int, list[int], int]  # how many queries, the project's tag ids, the seed value


def _made_here(jobs: list[Job], rng: random.Random) -> Iterator[Iterator[list]]:
    """Each project's rows, a batch at a time, made as they are asked for."""
    for size, tag_ids, seed_value in jobs:
        rows = iter(_rows(size, tag_ids, rng, seed_value))
        yield iter(lambda rows=rows: list(islice(rows, BATCH)), [])


def _made_aside(jobs: list[Job], rng: random.Random) -> Iterator[Iterator[list]]:
    """The same batches, their texts and times made by a forked child process one batch ahead
    of those taken (a pipe holds little: memory stays flat), tagged here with `rng` in the
    same order as `_made_here` does; the child goes when they are taken or given up. (Making
    the whole rows there left this process waiting 13 of its 23 s of staging a million.)"""
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_make, args=(jobs, sending), daemon=True,
                            name="tagdesk-demo-rows")
    child.start()
    sending.close()
    try:
        for _size, tag_ids, _seed_value in jobs:
            texts = chain.from_iterable(iter(lambda: _received(receiving), None))
            rows = iter(_tagged(texts, tag_ids, rng))
            yield iter(lambda rows=rows: list(islice(rows, BATCH)), [])
    finally:
        receiving.close()
        child.join(timeout=5)
        if child.is_alive():
            child.kill()
            child.join()


def _make(jobs: list[Job], sending) -> None:
    """In the child: every project's texts a batch at a time, then None, one project after
    the other."""
    with sending:
        for size, _tag_ids, seed_value in jobs:
            texts = iter(_texts(size, seed_value))
            for batch in iter(lambda texts=texts: list(islice(texts, BATCH)), []):
                sending.send(batch)
            sending.send(None)


def _received(receiving) -> list | None:
    try:
        return receiving.recv()
    except EOFError:
        raise RuntimeError("The demo's queries could not be made: the process making them "
                           "stopped (its error is printed above).") from None


def seed_administrator(app, key: str) -> tuple[str, str] | None:
    """An administrator of the demo organization (the one `key` belongs to), with a random
    password: (email, password) — or None when that organization has one already."""
    with session_scope(app) as session:
        org_id = session.scalar(select(ApiKey.org_id).where(ApiKey.key_hash == keys.digest(key)))
        if org_id is None or session.scalar(
                select(func.count()).select_from(User).where(User.org_id == org_id)):
            return None
        name, domain = DEMO_ADMIN.split("@")
        email, number = DEMO_ADMIN, 1
        while session.scalar(select(User.id).where(User.email == email)) is not None:
            number += 1
            email = f"{name}-{number}@{domain}"
        password = secrets.token_urlsafe(12)
        accounts.create_user(session, org_id, email, password)
        audit.record_change(session, org_id, "person.added", email,
                            "The demo's administrator, made with the demo.")
    return email, password


def _rows(size: int, tag_ids: list[int], rng: random.Random, seed_value: int) -> Iterator:
    return _tagged(_texts(size, seed_value), tag_ids, rng)


def _texts(size: int, seed_value: int) -> Iterator[tuple]:
    """A project's (query, language, country, time, numbers): its times and numbers drawn
    from generators of their own, so that they can be made apart from the tags."""
    now = utcnow()
    year = 365 * 24 * 3600
    r = random.Random(f"times {seed_value}")
    numbers = random.Random(f"numbers {seed_value}")
    for query, language, country in generate_queries(size, seed_value):
        # Recent edits are more common than old ones, as in real tagging work.
        age = timedelta(seconds=int(year * r.random() ** 2), milliseconds=int(r.random() * 1000))
        yield query, language, country, now - age, query_numbers(query, numbers)


def _tagged(texts: Iterable[tuple], tag_ids: list[int], rng: random.Random) -> Iterator:
    """The rows of these texts, with their tags."""
    for index, (query, language, country, updated_at, numbers) in enumerate(texts):
        picked = [tag_ids[i] for i in assign_tags(index, query, language, country, rng)
                  if i < len(tag_ids)]
        yield query, language, country, picked, updated_at, numbers
