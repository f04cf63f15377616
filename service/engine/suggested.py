"""Suggested tags as the service keeps them, per project: the model last learned and its
status (`suggestion_models`), each query's suggestions with their confidence
(`query_suggestions`, those at or above KEPT_FROM) and, beside the engine's other bitmaps,
the queries suggested each tag at the model's default confidence (kind `suggested`). The
rejected pairs (`suggestion_rejections`) are never kept again, until the tag goes.

What the learning job reads (`links`, `rejections` and `tagged_queries` in one read, then
the queries to score a part at a time: `texts_after`) and writes (each part's suggestions in
a short transaction of its own, `write_part`, dropping pairs linked or rejected meanwhile;
each exact with its bitmaps; then the model in one more: `replace`, `add_scored`), what a
rejection writes (`reject`), and what the reads ask (`of_queries`, `keys_at`, `state`). The
jobs that learn and score (`suggestion_jobs`) move as every background job's (`jobs`)."""

from __future__ import annotations

import io
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
from pyroaring import BitMap
from sqlalchemy import and_, delete, exists, func, insert, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Row

from weblib.job_lifecycle import QUEUED, Clock, Lifecycle

from ..store.models import Project, Tag, new_uuid, utcnow
from . import kinds, pieces
from .keys import keys_condition
from .suggestion_links import On, taken_away
from .tables import (
    Query,
    query_suggestions,
    query_tags,
    suggestion_jobs,
    suggestion_models,
    suggestion_rejections,
)
from .writer import Writer

if TYPE_CHECKING:
    # Imported where used: scikit-learn and SciPy take ~2 s to import, paid by a process only
    # when it reads or learns a model, not by every process that loads the engine.
    from ..suggestions.learning import TaggedQuery
    from ..suggestions.model import Model
    from ..suggestions.scoring import Pairs, Suggestions

# Suggestions under this confidence are not kept (a suggestion more likely wrong than right).
KEPT_FROM = 0.5
WRITTEN_AT_ONCE = 5000
READ_AT_ONCE = 50_000

# The jobs' kinds: learning a project's model (and scoring every query), or scoring the
# queries an import added. Queued, running and interrupted are every background job's.
LEARN, SCORE = "learn", "score"
LEARNED, SCORED, FAILED = "learned", "scored", "failed"
# Their moves, their heartbeat and the rule for a dead job; their times are naive UTC.
jobs = Lifecycle(suggestion_jobs, Clock(utcnow, timedelta.total_seconds),
                 ended=(LEARNED, SCORED, FAILED))
KEPT_DAYS = 7  # a project's ended jobs are kept this long


@dataclass(frozen=True, eq=False)
class Links:
    """A project's links as the engine keeps them, each tag's queries as a bitmap (a few
    bytes a link), read in one moment."""

    by_tag: dict[int, BitMap]
    written: int  # projects.links_written when read

    def count(self) -> int:
        return sum(len(keys) for keys in self.by_tag.values())

    def counts(self, tag_ids: np.ndarray) -> np.ndarray:
        return np.array([len(self.by_tag.get(tag, ())) for tag in tag_ids.tolist()],
                        dtype=np.int64)

    def of(self, keys: np.ndarray) -> Pairs:
        """The (query key, tag) links of these keys."""
        from ..suggestions.scoring import Pairs

        among = BitMap(keys.astype(np.uint32))
        found = [(np.frombuffer((tagged & among).to_array(), dtype=np.uint32), tag)
                 for tag, tagged in self.by_tag.items()]
        return Pairs(np.concatenate([part.astype(np.int64) for part, _ in found] or [_NONE]),
                     np.concatenate([np.full(len(part), tag, dtype=np.int64)
                                     for part, tag in found] or [_NONE]))


_NONE = np.zeros(0, dtype=np.int64)


def default_of(model: Model) -> float | None:
    """The model's default confidence, or None when none was right often enough (inf, nan)."""
    value = model.default_confidence
    return value if model.ready and math.isfinite(value) else None


def ensure(connection: Connection, project_id: str) -> None:
    """The project's row of suggestion_models, made if missing (and the project there)."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    connection.execute(dialect.insert(suggestion_models).from_select(
        ["project_id"], select(Project.id).where(Project.id == project_id))
        .on_conflict_do_nothing())


def hold(connection: Connection, project_id: str) -> None:
    """The project's row of suggestion_models, held to the commit: one transaction at a time
    decides whether a learning job starts (SQLite's write lock already does that)."""
    if connection.dialect.name == "postgresql":
        connection.execute(select(suggestion_models.c.project_id).where(
            suggestion_models.c.project_id == project_id).with_for_update(key_share=True))


# --- the jobs ----------------------------------------------------------------------------------


def new_job(connection: Connection, project_id: str, kind: str, owner: str,
            now: datetime) -> str:
    """A queued job of `kind` (LEARN, SCORE) for `owner` (the process or the queue that will
    run it); its id. A learning job is the project's last asking (`asked_at`). The project's
    jobs ended more than KEPT_DAYS ago go."""
    job_id = new_uuid()
    connection.execute(insert(suggestion_jobs).values(
        id=job_id, project_id=project_id, kind=kind, state=QUEUED, owner=owner, created_at=now))
    if kind == LEARN:
        connection.execute(update(suggestion_models).where(
            suggestion_models.c.project_id == project_id).values(asked_at=now))
    jobs_c = suggestion_jobs.c
    connection.execute(delete(suggestion_jobs).where(
        jobs_c.project_id == project_id, jobs_c.state.not_in(jobs.watched),
        jobs_c.finished_at < now - timedelta(days=KEPT_DAYS)))
    return job_id


def job(connection: Connection, job_id: str) -> Row | None:
    return connection.execute(select(suggestion_jobs).where(
        suggestion_jobs.c.id == job_id)).one_or_none()


def watched(connection: Connection, project_id: str) -> list[Row]:
    """The project's jobs (as seen now) that a process should be working on, with their
    kind."""
    c = suggestion_jobs.c
    return list(connection.execute(select(c.id, c.state, c.owner, c.heartbeat_at, c.created_at,
                                          c.kind).where(c.project_id == project_id,
                                                        c.state.in_(jobs.watched))).all())


@dataclass(frozen=True)
class Seen:
    """A job as state() read it (weblib.job_lifecycle.Seen)."""

    id: str
    state: str
    owner: str | None
    heartbeat_at: datetime | None
    created_at: datetime


def last_learning(connection: Connection, project_id: str) -> Row | None:
    """The project's newest learning job, whatever its state (`state`, `message`)."""
    c = suggestion_jobs.c
    return connection.execute(select(c.state, c.message).where(
        c.project_id == project_id, c.kind == LEARN).order_by(
        c.created_at.desc(), c.id).limit(1)).one_or_none()


def learning_job(row: Row | None) -> Seen | None:
    """The newest learning job a process should be working on, of a row of state()."""
    if row is None or row.job_id is None:
        return None
    return Seen(row.job_id, row.job_state, row.job_owner, row.job_heartbeat_at,
                row.job_created_at)


def state(connection: Connection, project_id: str) -> Row | None:
    """The project's row of suggestion_models, with `links_changed`: the links written since
    its model's snapshot, and its newest learning job a process should be working on
    (`job_id`, `job_state`, … : learning_job)."""
    models, c = suggestion_models.c, suggestion_jobs.c
    columns = [column for column in models if column.name != "model"]
    newest = select(c.id).where(c.project_id == models.project_id, c.kind == LEARN,
                                c.state.in_(jobs.watched)).order_by(
        c.created_at.desc(), c.id).limit(1).correlate(suggestion_models).scalar_subquery()
    return connection.execute(select(
        *columns, (Project.links_written - models.written_then).label("links_changed"),
        c.id.label("job_id"), c.state.label("job_state"), c.owner.label("job_owner"),
        c.heartbeat_at.label("job_heartbeat_at"), c.created_at.label("job_created_at"))
        .join(Project, Project.id == models.project_id)
        .outerjoin(suggestion_jobs, c.id == newest)
        .where(models.project_id == project_id)).one_or_none()


def load(connection: Connection, project_id: str) -> Model | None:
    """The project's model, if one was learned (its bytes are read only here)."""
    from ..suggestions.model import Model

    saved = connection.execute(select(suggestion_models.c.model).where(
        suggestion_models.c.project_id == project_id)).scalar()
    return None if saved is None else Model.load(io.BytesIO(saved))


def links(connection: Connection, project_id: str) -> Links:
    """The project's links, from the engine's bitmaps of its tags."""
    written = connection.execute(select(Project.links_written).where(
        Project.id == project_id)).scalar() or 0
    tags = set(connection.execute(select(Tag.id).where(Tag.project_id == project_id)).scalars())
    by_tag: dict[int, BitMap] = {}
    table = pieces.pieces.c
    for value, keys in connection.execute(select(table.value, table["keys"]).where(
            table.project_id == project_id, table.kind == kinds.TAG, table.size > 0)):
        if int(value) in tags:
            by_tag[int(value)] = by_tag.get(int(value), BitMap()) | BitMap.deserialize(keys)
    return Links(by_tag, written)


def rejections(connection: Connection, project_id: str) -> Pairs:
    """The project's rejected (query key, tag) pairs (few: each is a person's click)."""
    table = suggestion_rejections.c
    return _pairs(connection.execute(select(table.query_pk, table.tag_id).where(
        table.project_id == project_id)).all())


def tagged_queries(connection: Connection, keys: BitMap, links: Links) -> list[TaggedQuery]:
    """These queries (the project's) as learning reads them, with their tags, by key."""
    from ..suggestions.learning import TaggedQuery

    tags_of: dict[int, list[int]] = defaultdict(list)
    for tag, tagged in sorted(links.by_tag.items()):
        for key in tagged & keys:
            tags_of[key].append(tag)
    ordered = list(keys)
    found = []
    for start in range(0, len(ordered), READ_AT_ONCE):
        found.extend(TaggedQuery(pk, text, language, tuple(tags_of.get(pk, ())))
                     for pk, text, language in connection.execute(
                         select(Query.pk, Query.query, Query.language).where(keys_condition(
                             On(connection), Query.pk, ordered[start:start + READ_AT_ONCE]))
                         .order_by(Query.pk)))
    return found


def texts_after(connection: Connection, project_id: str, after: int,
                limit: int) -> tuple[np.ndarray, list[str]]:
    """The keys and texts of up to `limit` of the project's queries with keys above `after`,
    in order of key: a part of the queries to score."""
    rows = connection.execute(select(Query.pk, Query.query).where(
        Query.project_id == project_id, Query.pk > after).order_by(Query.pk).limit(limit)).all()
    return np.array([row[0] for row in rows], dtype=np.int64), [row[1] for row in rows]


def last_key(connection: Connection, project_id: str) -> int:
    return connection.execute(select(func.max(Query.pk)).where(
        Query.project_id == project_id)).scalar() or 0


def _pairs(rows) -> Pairs:
    """(query key, tag) rows as Pairs, through plain integers (numpy asks a database row for
    attributes it lacks, one exception each: ~50 s for a million links)."""
    from ..suggestions.scoring import Pairs

    flat = np.fromiter((value for row in rows for value in row), dtype=np.int64,
                       count=2 * len(rows)).reshape(-1, 2)
    return Pairs(flat[:, 0].copy(), flat[:, 1].copy())


def _inserted(connection: Connection, project_id: str, scored: Suggestions, written: int,
              above: int, through: int) -> None:
    """The scored pairs (of queries with keys in (above, through]) as rows, a slice at a
    time, then those rejected meanwhile taken out again, and those linked meanwhile when links
    were written since they were read (`written`)."""
    _insert_rows(connection, project_id, scored)
    table, rejected = query_suggestions.c, suggestion_rejections.c
    # A project's rejections are few: each pair looked up by its key.
    connection.execute(delete(query_suggestions).where(
        tuple_(table.query_pk, table.tag_id).in_(
            select(rejected.query_pk, rejected.tag_id).where(
                rejected.project_id == project_id))))
    now_written = connection.execute(select(Project.links_written).where(
        Project.id == project_id)).scalar_one()
    if now_written != written and len(scored):
        links_c = query_tags.c
        connection.execute(delete(query_suggestions).where(
            table.project_id == project_id, table.query_pk > above, table.query_pk <= through,
            exists().where(and_(links_c.query_pk == table.query_pk,
                                links_c.tag_id == table.tag_id))))


INSERTED = "INSERT INTO query_suggestions (query_pk, tag_id, project_id, confidence)"


def _insert_rows(connection: Connection, project_id: str, scored: Suggestions) -> None:
    """The scored pairs as rows of query_suggestions, a slice at a time: by COPY on
    PostgreSQL, plain tuples to SQLite (6.8M rows at 10M queries took 435 s as rows of
    parameters through SQLAlchemy)."""
    for start in range(0, len(scored), WRITTEN_AT_ONCE):
        part = slice(start, start + WRITTEN_AT_ONCE)
        rows = zip(scored.query_ids[part].tolist(), scored.tag_ids[part].tolist(),
                   itertools.repeat(project_id), scored.confidence[part].tolist())
        if connection.dialect.name == "postgresql":
            driver = connection.connection.driver_connection
            with driver.cursor() as cursor, cursor.copy(
                    "COPY query_suggestions (query_pk, tag_id, project_id, confidence)"
                    " FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            connection.exec_driver_sql(INSERTED + " VALUES (?, ?, ?, ?)", list(rows))


def write_part(connection: Connection, project_id: str, scored: Suggestions, written: int,
               above: int, through: int) -> None:
    """The suggestions of the queries with keys in (above, through] in place of theirs, in
    the caller's short write transaction: a new model's are written a part at a time, so no
    transaction holds the project for long. The bitmaps follow at the default confidence the
    project has now (a new model's is set at its end, by replace): they stay exact at every
    commit. The project's row first, as every writer of links takes it before their
    suggestions: a link and its suggestion never both stand."""
    project_first(connection, project_id)
    writer = Writer(connection, project_id).begin()
    default = connection.execute(select(suggestion_models.c.default_confidence).where(
        suggestion_models.c.project_id == project_id)).scalar()
    was = _at_default(connection, project_id, default, above, through)
    table = query_suggestions.c
    connection.execute(delete(query_suggestions).where(
        table.project_id == project_id, table.query_pk > above, table.query_pk <= through))
    _inserted(connection, project_id, scored, written, above, through)
    now = _at_default(connection, project_id, default, above, through)
    for value in set(was) | set(now):
        _follow(writer, value, was.get(value, BitMap()), now.get(value, BitMap()))
    writer.finish()


def _follow(writer: Writer, value: str, was: BitMap, now: BitMap) -> None:
    """A tag's suggested bitmap from `was` to `now`, as the writer's changes."""
    if now - was:
        writer.changes.add(kinds.SUGGESTED, value, now - was)
    if was - now:
        writer.changes.remove(kinds.SUGGESTED, value, was - now)


def _at_default(connection: Connection, project_id: str, default: float | None,
                above: int = 0, through: int | None = None) -> dict[str, BitMap]:
    """The project's suggestions kept at the default confidence by tag, of the queries with
    keys in (above, through]."""
    if default is None:
        return {}
    table = query_suggestions.c
    where = [table.project_id == project_id, table.query_pk > above,
             table.confidence >= default]
    if through is not None:
        where.append(table.query_pk <= through)
    found: dict[str, BitMap] = defaultdict(BitMap)
    for pk, tag in connection.execute(select(table.query_pk, table.tag_id).where(*where)):
        found[str(tag)].add(pk)
    return found


def project_first(connection: Connection, project_id: str) -> None:
    """The project's row, held to the commit before any suggestion's row is (every write of
    links takes it before it takes their suggestions away: no two wait for each other)."""
    statement = select(Project.engine_stamp).where(Project.id == project_id)
    if connection.dialect.name == "postgresql":
        statement = statement.with_for_update(key_share=True)  # FOR NO KEY UPDATE
    connection.execute(statement)


def replace(connection: Connection, project_id: str, model: Model, read: Links,
            learned_at: datetime, scored_through: int) -> None:
    """A model learned from the links `read` in place of the last one, its suggestions (of
    the queries with keys up to `scored_through`) already written by write_part: the bitmaps
    of those at its default confidence and its row, in one short transaction (the caller's,
    begun for writing, committed by the caller)."""
    project_first(connection, project_id)
    writer = Writer(connection, project_id).begin()
    default = default_of(model)
    now = _at_default(connection, project_id, default)
    before_values = connection.execute(select(pieces.pieces.c.value).where(
        pieces.pieces.c.project_id == project_id, pieces.pieces.c.kind == kinds.SUGGESTED,
        pieces.pieces.c.size > 0).distinct()).scalars().all()
    for value in set(before_values) | set(now):
        _follow(writer, value, pieces.read_union(connection, project_id, kinds.SUGGESTED,
                                                 [value]), now.get(value, BitMap()))
    writer.finish()  # the project's row first, then the model's (as every write)
    saved = io.BytesIO()
    model.save(saved)
    connection.execute(update(suggestion_models).where(
        suggestion_models.c.project_id == project_id).values(
        model=saved.getvalue(), learned_at=learned_at, learned_from=model.learned_from,
        held_back_right=model.held_back_right if default is not None else None,
        default_confidence=default, links_at_learning=read.count(), written_then=read.written,
        scored_through=scored_through))


def add_scored(connection: Connection, project_id: str, scored_through: int) -> None:
    """The queries entered since the last scoring scored through `scored_through` (their
    suggestions and bitmaps written by write_part), in the caller's write transaction."""
    connection.execute(update(suggestion_models).where(
        suggestion_models.c.project_id == project_id,
        suggestion_models.c.scored_through < scored_through).values(
        scored_through=scored_through))


def reject(connection: Connection, project_id: str, tag_id: int, keys: list[int],
           actor: str | None) -> int:
    """The tag is never suggested to these queries again (until it is merged or deleted); in
    the caller's write transaction. How many were not rejected before."""
    known = BitMap(connection.execute(select(Query.pk).where(
        Query.project_id == project_id, keys_condition(On(connection), Query.pk, keys)
    )).scalars())
    if not known:
        return 0
    table = suggestion_rejections.c
    already = BitMap(connection.execute(select(table.query_pk).where(
        table.tag_id == tag_id, keys_condition(On(connection), table.query_pk, list(known))
    )).scalars())
    new = known - already
    now = utcnow()
    project_first(connection, project_id)
    writer = Writer(connection, project_id).begin()
    if new:
        connection.execute(insert(suggestion_rejections), [
            {"query_pk": pk, "tag_id": tag_id, "project_id": project_id, "rejected_at": now,
             "rejected_by": actor} for pk in new])
        taken_away(connection, project_id, tag_id, new, writer.changes)
    writer.finish()
    return len(new)


def of_queries(connection: Connection, project_id: str, keys: list[int],
               min_confidence: float | None) -> dict[int, list[tuple[int, float]]]:
    """Each query's suggestions at or above min_confidence (None: the default), best first."""
    default = connection.execute(select(suggestion_models.c.default_confidence).where(
        suggestion_models.c.project_id == project_id)).scalar()
    if default is None or not keys:
        return {}
    table = query_suggestions.c
    # By the keys alone (the table's key): the project's keys are the caller's.
    rows = connection.execute(select(table.query_pk, table.tag_id, table.confidence).where(
        table.confidence >= (default if min_confidence is None else min_confidence),
        keys_condition(On(connection), table.query_pk, keys)).order_by(
        table.query_pk, table.confidence.desc(), table.tag_id))
    found: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for pk, tag, confidence in rows:
        found[pk].append((tag, confidence))
    return found


def keys_among(connection: Connection, project_id: str, tag_id: int, keys: list[int],
               min_confidence: float) -> BitMap:
    """Those of `keys` suggested the tag at or above a confidence (as keys_at, read by the
    keys: a row's accept reads its own suggestion, not the tag's all)."""
    table, models = query_suggestions.c, suggestion_models.c
    if not keys:
        return BitMap()
    return BitMap(connection.execute(select(table.query_pk).join(
        suggestion_models, models.project_id == table.project_id).where(
        keys_condition(On(connection), table.query_pk, keys),
        table.project_id == project_id, table.tag_id == tag_id,
        models.default_confidence.is_not(None),
        table.confidence >= min_confidence)).scalars())


def keys_at(connection: Connection, project_id: str, tag_id: int,
            min_confidence: float) -> BitMap:
    """The queries suggested the tag at or above a confidence (none when the model has no
    default confidence)."""
    table, models = query_suggestions.c, suggestion_models.c
    return BitMap(connection.execute(select(table.query_pk).join(
        suggestion_models, models.project_id == table.project_id).where(
        table.project_id == project_id, table.tag_id == tag_id,
        models.default_confidence.is_not(None),
        table.confidence >= min_confidence)).scalars())
