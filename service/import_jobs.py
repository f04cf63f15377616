"""Import jobs: a CSV file imported into a project by a background thread of the service
process that received it, with its state, progress and rejected rows in the database (tables
`imports` and `import_rejections`, migration 0016), so that any process can draw its progress
bar and its report, after a reload too.

- The upload is kept in the instance folder (`imports/<id>.csv`, mode 600) until the job ends.
- A job is `queued`, then `running`, then `finished` (its report), `failed` (a file that is not
  CSV at all, which changed nothing, or an error: a sentence says which) or `interrupted`.
- Each batch of rows is one transaction with the job's counters, progress, heartbeat and the
  batch's rejected rows: what the page shows is always what was committed. A batch commits
  only while the job is still this process's and running.
- While a job runs, a thread of its process beats its heartbeat every quarter of
  STALE_SECONDS (`Heartbeat`), whatever step the job is in: a step may take longer than
  STALE_SECONDS (a large batch of rows, adding a range on a loaded database), and a job was
  declared interrupted while its process lived.
- A job whose process is gone (on this host: its pid no longer runs; on any host: no
  heartbeat for STALE_SECONDS) is marked interrupted with a sentence by whoever looks at it
  next, never left "running". What its finished batches added stays; importing the same file
  again adds the rest, since rows the project has are skipped.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from weblib.processes import ThreadPool, owner_is_dead, process_owner

from . import import_sources, imports, schema
from .db import begin_write
from .models import Base, Project, new_uuid, utcnow

log = logging.getLogger(__name__)

QUEUED, RUNNING, FINISHED, FAILED, INTERRUPTED = (
    "queued", "running", "finished", "failed", "interrupted")
# Uploaded, not of the import's own shape: waiting for the person to choose its columns.
CHOOSING = "choosing"
ACTIVE = (QUEUED, RUNNING)

STALE_SECONDS = 60.0          # a running job without a heartbeat for this long has died
QUEUED_STALE_SECONDS = 3600.0  # a queued one may wait for a free thread that long
# After an import that added this many queries the planner's statistics are refreshed, as
# after the command line's (schema.analyze; docs/decisions.md).
ANALYZE_AFTER_ROWS = 10_000
MAX_FILE_NAME = 255
CHUNK = 1024 * 1024
# Of an import's time, reading and checking the file is about 30 % (1M rows: 10 of 36 s);
# adding its rows, the rest.
READING_SHARE = 30

STOPPED = ("Tagdesk stopped working on this import before it finished (the service restarted "
           "or its process was stopped). The rows counted here were imported; import the same "
           "file again to add the rest: rows the project already has are skipped.")
BROKEN = ("Something went wrong on our side while importing. It has been noted. The rows "
          "counted here were imported; import the same file again to add the rest.")

# --- the tables --------------------------------------------------------------------------------


class ImportJob(Base):
    """A CSV file imported into a project: who, when, its state, progress and counts."""

    __tablename__ = "imports"
    __table_args__ = (Index("ix_imports_project_created", "project_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    org_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    # Who, as they were known then (NULL: the person has been removed).
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    actor_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    file_name: Mapped[str] = mapped_column(String(MAX_FILE_NAME))
    file_size: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[str] = mapped_column(String(20))
    message: Mapped[str] = mapped_column(Text, default="")
    bytes_read: Mapped[int] = mapped_column(BigInteger, default=0)
    last_line: Mapped[int] = mapped_column(Integer, default=0)
    rows: Mapped[int] = mapped_column(Integer, default=0)
    added: Mapped[int] = mapped_column(Integer, default=0)
    present: Mapped[int] = mapped_column(Integer, default=0)
    rejected: Mapped[int] = mapped_column(Integer, default=0)
    # Queries that rules tagged as they entered (migration 0028).
    tagged_by_rules: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def reading(self) -> bool:
        """Still reading the file (its rows are added once it is read; imports.import_file)."""
        return self.bytes_read < self.file_size

    @property
    def percent(self) -> int:
        """How far the job is: reading the file counts for READING_SHARE of it, adding the
        rows for the rest."""
        if self.state == FINISHED:
            return 100
        if not self.file_size:
            return 0
        if self.reading:
            return self.bytes_read * READING_SHARE // self.file_size
        good = self.rows - self.rejected
        done = (self.added + self.present) / good if good else 1
        return min(100, READING_SHARE + int(done * (100 - READING_SHARE)))

    @property
    def counts(self) -> imports.Counts:
        return imports.Counts(self.rows, self.added, self.present, self.rejected,
                              self.last_line, self.bytes_read, tagged=self.tagged_by_rules or 0)

    @property
    def summary(self) -> str:
        return imports.summary(self.counts)


class ImportRejection(Base):
    """A row of an import's file that was not imported: its line, why, and its fields."""

    __tablename__ = "import_rejections"

    import_id: Mapped[str] = mapped_column(
        ForeignKey("imports.id", ondelete="CASCADE"), primary_key=True)
    line: Mapped[int] = mapped_column(Integer, primary_key=True)
    reason: Mapped[str] = mapped_column(Text)
    query: Mapped[str] = mapped_column(Text)
    language: Mapped[str] = mapped_column(Text)
    country: Mapped[str] = mapped_column(Text)
    tags: Mapped[str] = mapped_column(Text)


# What the settings area does when a job ends, in the transaction that ends it (its activity
# log entry): called with the session, the job (its final state) and its project's name.
OnEnd = Callable[[Session, ImportJob, str], None]


# --- the uploaded file -------------------------------------------------------------------------


def clean_file_name(name: str | None) -> str:
    """The upload's own name, for people to recognise it: no folders, no control characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip()
    return name[:MAX_FILE_NAME] or "upload.csv"


def upload_path(folder: Path, import_id: str) -> Path:
    return folder / f"{import_id}.csv"


def save_upload(stream: BinaryIO, folder: Path, import_id: str) -> int:
    """Copy the upload into the folder, readable by its owner only; its size in bytes."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = upload_path(folder, import_id)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    size = 0
    try:
        with os.fdopen(descriptor, "wb") as handle:
            while chunk := stream.read(CHUNK):
                handle.write(chunk)
                size += len(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return size


# --- the jobs' state ---------------------------------------------------------------------------


def create(session: Session, org_id: str, project_id: str, user_id: int | None,
           actor_email: str | None, file_name: str, file_size: int, import_id: str,
           owner: str, state: str = QUEUED) -> ImportJob:
    job = ImportJob(id=import_id, org_id=org_id, project_id=project_id, user_id=user_id,
                    actor_email=actor_email, file_name=clean_file_name(file_name),
                    file_size=file_size, state=state, message="", owner=owner,
                    bytes_read=0, last_line=0, rows=0, added=0, present=0, rejected=0,
                    created_at=utcnow())
    session.add(job)
    session.flush()
    return job


def recent(session: Session, project_id: str, limit: int) -> list[ImportJob]:
    return list(session.scalars(
        select(ImportJob).where(ImportJob.project_id == project_id)
        .order_by(ImportJob.created_at.desc(), ImportJob.id).limit(limit)))


def rejections(session: Session, import_id: str, limit: int,
               after_line: int = 0) -> list[ImportRejection]:
    return list(session.scalars(
        select(ImportRejection)
        .where(ImportRejection.import_id == import_id, ImportRejection.line > after_line)
        .order_by(ImportRejection.line).limit(limit)))


def all_rejections(session: Session, import_id: str, page: int = 1000
                   ) -> Iterator[ImportRejection]:
    """Every rejected row of an import in line order, read a page at a time."""
    after = 0
    while rows := rejections(session, import_id, page, after):
        yield from rows
        after = rows[-1].line
        session.expunge_all()


def is_dead(job: ImportJob, now: datetime | None = None,
            stale_seconds: float = STALE_SECONDS) -> bool:
    if job.state not in ACTIVE:
        return False
    now = now or utcnow()
    seen = job.heartbeat_at or job.created_at
    silence = stale_seconds if job.state == RUNNING else max(stale_seconds,
                                                             QUEUED_STALE_SECONDS)
    return owner_is_dead(job.owner) or now - seen > timedelta(seconds=silence)


def interrupt_dead(session: Session, jobs: list[ImportJob], folder: Path | None = None,
                   stale_seconds: float = STALE_SECONDS, on_end: OnEnd | None = None
                   ) -> list[ImportJob]:
    """Mark the jobs among `jobs` whose process is gone as interrupted (committed, with
    `on_end` for each in the same transaction); the jobs marked. Their uploads are removed if
    they are in this host's folder."""
    dead = [job for job in jobs if is_dead(job, stale_seconds=stale_seconds)]
    if not dead:
        return []
    begin_write(session)
    marked = []
    for job in dead:
        # Only as it was seen: a heartbeat since then means its process lives.
        result = session.execute(
            update(ImportJob).where(ImportJob.id == job.id, ImportJob.state.in_(ACTIVE),
                                    ImportJob.owner.is_(None) if job.owner is None
                                    else ImportJob.owner == job.owner,
                                    ImportJob.heartbeat_at.is_(None) if job.heartbeat_at is None
                                    else ImportJob.heartbeat_at == job.heartbeat_at)
            .values(state=INTERRUPTED, message=STOPPED, finished_at=utcnow())
            .execution_options(synchronize_session=False))
        if result.rowcount == 1:
            session.refresh(job)
            if on_end is not None:
                on_end(session, job, session.get(Project, job.project_id).name)
            marked.append(job)
    session.commit()
    for job in marked:
        if folder is not None:
            upload_path(folder, job.id).unlink(missing_ok=True)
    return marked


class Stopped(Exception):
    """The job is no longer this process's to run (it was marked interrupted meanwhile)."""


class JobSink(imports.Sink):
    """Each batch's rejected rows, counters, progress and heartbeat, in its transaction."""

    def __init__(self, import_id: str, owner: str, missing: imports.MissingTags):
        self.import_id = import_id
        self.owner = owner
        self.missing = missing  # the tags its rejected rows name that the project lacks

    def done(self, batch: imports.Batch, counts: imports.Counts) -> None:
        self.missing.add(batch.rejected)

    def write(self, session: Session, batch: imports.Batch, counts: imports.Counts) -> None:
        result = session.execute(
            update(ImportJob)
            .where(ImportJob.id == self.import_id, ImportJob.state == RUNNING,
                   ImportJob.owner == self.owner)
            .values(rows=counts.rows, added=counts.added, present=counts.present,
                    rejected=counts.rejected, last_line=counts.last_line,
                    tagged_by_rules=counts.tagged,
                    bytes_read=counts.bytes_read, heartbeat_at=utcnow())
            .execution_options(synchronize_session=False))
        if result.rowcount != 1:
            raise Stopped()
        if batch.rejected:
            session.execute(insert(ImportRejection), [
                {"import_id": self.import_id, "line": row.line, "reason": row.reason,
                 "query": row.query, "language": row.language, "country": row.country,
                 "tags": row.tags}
                for row in batch.rejected])


class Heartbeat:
    """A thread that beats a running job's heartbeat every `interval` seconds, in a transaction
    of its own, until `stop()` (or until the job is no longer this process's and running)."""

    def __init__(self, sessions: sessionmaker, import_id: str, owner: str, interval: float):
        self.sessions = sessions
        self.import_id = import_id
        self.owner = owner
        self.interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f"tagdesk-import-heartbeat-{import_id[:8]}")

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                if not self.beat():
                    return
            except Exception:  # the next beat tries again; the job's own writes beat too
                log.exception("import %s: heartbeat not written", self.import_id)

    def beat(self) -> bool:
        """Write the heartbeat now; whether the job is still this process's and running."""
        session: Session = self.sessions()
        try:
            begin_write(session)
            result = session.execute(
                update(ImportJob).where(ImportJob.id == self.import_id,
                                        ImportJob.state == RUNNING, ImportJob.owner == self.owner)
                .values(heartbeat_at=utcnow()).execution_options(synchronize_session=False))
            session.commit()
            return result.rowcount == 1
        finally:
            session.close()


def run(sessions: sessionmaker, import_id: str, folder: Path, on_end: OnEnd | None = None,
        batch_rows: int = imports.BATCH_ROWS,
        stale_seconds: float = STALE_SECONDS) -> str | None:
    """Run a queued job to its end in this thread, its heartbeat beaten every quarter of
    `stale_seconds` by another; its final state (None if it was not this process's to run)."""
    owner = process_owner()
    path = upload_path(folder, import_id)
    shaped = path.with_name(path.name + ".shaped")
    session: Session = sessions()
    try:
        begin_write(session)
        started = session.execute(
            update(ImportJob).where(ImportJob.id == import_id, ImportJob.state == QUEUED,
                                    ImportJob.owner == owner)
            .values(state=RUNNING, started_at=utcnow(), heartbeat_at=utcnow())
            .execution_options(synchronize_session=False))
        session.commit()
        if started.rowcount != 1:
            return None
        job = session.get(ImportJob, import_id)
        project_id = job.project_id
        missing = imports.MissingTags(imports.project_tags(session, project_id))
        session.commit()
        read_as = ""
        try:
            with Heartbeat(sessions, import_id, owner, stale_seconds / 4):
                read_as = _in_own_shape(path, shaped)
                with open(shaped if read_as else path, "rb") as binary:
                    counts = imports.import_file(session, project_id, binary,
                                                 JobSink(import_id, owner, missing), batch_rows)
        except Stopped:
            session.rollback()
            return INTERRUPTED
        except imports.NotCsv as error:
            session.rollback()
            return _end(session, import_id, owner, FAILED, on_end,
                        message=f"Nothing was imported: {error}")
        except Exception:
            session.rollback()
            log.exception("import %s failed", import_id)
            return _end(session, import_id, owner, FAILED, on_end, message=BROKEN)
        if counts.rejected and not counts.added and not counts.present:
            # Nothing went in: a failure, whatever the file's shape, with its reasons.
            rows = "the only row was" if counts.rejected == 1 else \
                f"all {counts.rejected:,} rows were"
            return _end(session, import_id, owner, FAILED, on_end, counts=counts,
                        message=" ".join(filter(None, [
                            f"Nothing was imported: {rows} rejected.", missing.sentence(),
                            read_as])))
        state = _end(session, import_id, owner, FINISHED, on_end, counts=counts,
                     message=" ".join(filter(None, [imports.untagged_sentence(counts),
                                                    read_as])))
        if state == FINISHED and counts.added >= ANALYZE_AFTER_ROWS:
            _analyze(session)
        return state
    finally:
        session.close()
        path.unlink(missing_ok=True)
        shaped.unlink(missing_ok=True)


def _in_own_shape(path: Path, shaped: Path) -> str:
    """"" when the file has the import's own shape; else how it was read, once written in
    that shape to `shaped` (its columns guessed from its header: service/import_sources.py),
    or NotCsv."""
    with open(path, "rb") as binary:
        if imports.in_own_shape(binary):
            return ""
        with open(shaped, "w", encoding="utf-8", newline="") as out:
            choice, source = import_sources.normalized(binary, import_sources.Choice(), out)
    return import_sources.describe(choice, source)


def _analyze(session: Session) -> None:
    try:
        schema.analyze(session.get_bind())
    except Exception:  # the import is done; fresher statistics are a bonus
        log.exception("statistics not refreshed after an import")


def _end(session: Session, import_id: str, owner: str, state: str, on_end: OnEnd | None,
         message: str = "", counts: imports.Counts | None = None) -> str | None:
    values = {"state": state, "message": message, "finished_at": utcnow(),
              "heartbeat_at": utcnow()}
    if counts is not None:
        values.update(rows=counts.rows, added=counts.added, present=counts.present,
                      rejected=counts.rejected, last_line=counts.last_line,
                      tagged_by_rules=counts.tagged,
                      bytes_read=counts.bytes_read)
    begin_write(session)
    result = session.execute(
        update(ImportJob).where(ImportJob.id == import_id, ImportJob.state == RUNNING,
                                ImportJob.owner == owner)
        .values(**values).execution_options(synchronize_session=False))
    if result.rowcount != 1:
        session.rollback()
        return None
    job = session.get(ImportJob, import_id, populate_existing=True)
    if on_end is not None:
        on_end(session, job, session.get(Project, job.project_id).name)
    session.commit()
    return state


class Runner:
    """A few threads of this process run its import jobs (started on first use, and again
    in a forked worker)."""

    def __init__(self, sessions: sessionmaker, folder: Path, on_end: OnEnd | None = None,
                 workers: int = 2, batch_rows: int = imports.BATCH_ROWS,
                 stale_seconds: float = STALE_SECONDS):
        self.sessions = sessions
        self.folder = folder
        self.on_end = on_end
        self.batch_rows = batch_rows
        self.stale_seconds = stale_seconds
        self._threads = ThreadPool(workers, "tagdesk-import")

    def submit(self, import_id: str) -> None:
        future = self._threads.submit(import_id, lambda: run(
            self.sessions, import_id, self.folder, self.on_end, self.batch_rows,
            self.stale_seconds))
        future.add_done_callback(lambda _: self._threads.futures.pop(import_id, None))

    def wait(self, import_id: str, timeout: float | None = None) -> bool:
        """Wait for a job of this process to end; whether it has (or was not running here)."""
        future = self._threads.futures.get(import_id)
        if future is None:
            return True
        try:
            future.result(timeout)
        except FutureTimeout:
            return False
        return True

    def shutdown(self, wait: bool = False) -> None:
        self._threads.shutdown(wait)
