"""The demo organization: three projects, about twenty tags, realistic multilingual queries,
and an administrator for its settings (seed_administrator)."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from itertools import islice

from sqlalchemy import func, select, text

from . import admin, bulk_load, keys, schema
from .db import session_scope
from .demo_data import PROJECTS, TAGS, assign_tags, generate_queries
from .models import ApiKey, User, utcnow
from .settings import accounts, audit

DEMO_ORG_NAME = "Demo organization"
DEMO_ADMIN = "admin@demo.example"  # admin-2@demo.example for a second demo in one database
SMALL_PROJECT_TAGS = 8
BATCH = 5000
BULK_REBUILD_AT = 50_000
# SQLite: queries committed at a time, a range of the key's order each (service/bulk_load.py).
# In WAL mode every page a transaction writes stays in the write-ahead log until it commits,
# and each page read looks the log up: one transaction of ten million (a 12.5 GB log) was
# still linking tags after an hour of CPU, when a million take a minute.
SQLITE_CHUNK = 1_000_000


def seed(app, count: int, progress: Callable[[str], None] = lambda _m: None,
         seed_value: int = 7) -> str:
    """Create the demo organization; `count` queries go to the first project. Returns a key."""
    rng = random.Random(seed_value)
    with session_scope(app) as session:
        org_id = admin.create_org(session, DEMO_ORG_NAME)
        key = admin.create_key(session, org_id, app.config["KEY_PREFIX"], name="Demo key")
        plan = []
        for position, project_name in enumerate(PROJECTS):
            project_id = admin.create_project(session, org_id, project_name)
            tags = TAGS if position == 0 else TAGS[:SMALL_PROJECT_TAGS]
            tag_ids = [admin.create_tag(session, project_id, name, color)
                       for name, color in tags]
            size = count if position == 0 else min(1000, count // 10)
            plan.append((project_id, project_name, tag_ids, size))

    sqlite = app.extensions["tagdesk_engine"].dialect.name == "sqlite"
    for project_id, project_name, tag_ids, size in plan:
        rows = iter(_rows(size, tag_ids, rng, seed_value + len(project_name)))
        inserted = 0
        if sqlite and size > SQLITE_CHUNK:
            inserted = _load_in_ranges(app, project_id, rows)
        elif sqlite:
            with session_scope(app) as session:
                inserted = admin.insert_queries(session, project_id, rows, batch_size=BATCH)
        else:
            with session_scope(app) as session, _trigram_index_built_after(session, size):
                inserted = admin.insert_queries(session, project_id, rows, batch_size=BATCH)
        progress(f"{project_name}: {inserted:,} queries")
    schema.analyze(app.extensions["tagdesk_engine"])
    return key


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


@contextmanager
def _trigram_index_built_after(session, size: int):
    """On PostgreSQL, build the trigram index once after a large load: updating a GIN index
    row by row costs far more than building it. Only the demo does this — the index is
    dropped inside the loading transaction, which holds the table for its duration."""
    rebuild = size >= BULK_REBUILD_AT and session.get_bind().dialect.name == "postgresql"
    if rebuild:
        session.execute(text("DROP INDEX IF EXISTS ix_query_texts_trgm"))
    yield
    if rebuild:
        session.flush()
        # The build sorts every trigram of every text: with the packaged 64 MB it spills to
        # disk in many runs (at ten million queries, most of the load's time).
        session.execute(text("SET LOCAL maintenance_work_mem = '1GB'"))
        session.execute(text(
            "CREATE INDEX ix_query_texts_trgm ON query_texts USING gin (folded gin_trgm_ops)"))


def _load_in_ranges(app, project_id: str, rows: Iterator) -> int:
    """SQLite: every row staged, then added in the order of the project's key, SQLITE_CHUNK
    places a transaction (as imports do): each range goes into the text indexes beside the
    last, so a million costs the same however many came before."""
    with app.extensions["tagdesk_engine"].connect() as connection:
        load = bulk_load.Load.on(connection, project_id)
        load.prepare()
        with connection.begin():
            load.open()
            while batch := list(islice(rows, BATCH)):
                load.stage(batch)
        with connection.begin():
            placed = load.order()
        inserted = 0
        for first in range(1, placed + 1, SQLITE_CHUNK):
            with connection.begin():
                inserted += load.insert(first, min(first + SQLITE_CHUNK - 1, placed))
            load.committed()
        with connection.begin():
            load.close()
    return inserted


def _rows(size: int, tag_ids: list[int], rng: random.Random, seed_value: int) -> Iterator:
    now = utcnow()
    year = 365 * 24 * 3600
    for index, (query, language, country) in enumerate(generate_queries(size, seed_value)):
        picked = [tag_ids[i] for i in assign_tags(index, query, language, country, rng)
                  if i < len(tag_ids)]
        # Recent edits are more common than old ones, as in real tagging work.
        age = timedelta(seconds=int(year * rng.random() ** 2), milliseconds=rng.randrange(1000))
        yield query, language, country, picked, now - age
