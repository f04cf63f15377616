"""Import jobs: a CSV file imported into a project by a background thread of the service
process that received it, with its state, progress and rejected rows in the database (tables
`imports` and `import_rejections`, migration 0016), so that any process can draw its progress
bar and its report, after a reload too.

- The upload is kept in the instance folder (`imports/<id>.csv`, mode 600) until the job ends.
- A job is `queued`, then `running`, then `finished` (its report), `failed` (a file that is not
  CSV at all, which changed nothing, or an error: a sentence says which) or `interrupted`.
- A file of another shape is `choosing` first (its Columns page). "Check the file" makes it
  `checking`: a job of the same threads (`run_check`) writes the file in the import's own shape
  with the columns chosen and reads it as an import would, writing nothing but its progress,
  then stores what an import would do (`check`, the one function that computes it) and the
  job is `choosing` again. Each check has its own id (`check_id`): a check started later, the
  import, or Cancel replaces it, and a replaced check stops at its next write of progress and
  stores nothing. "Import queries" queues the job with its columns (`choice`); the job writes
  the file in its own shape (or takes the one its last check wrote, for the same columns).
- Uploads left `choosing` are swept (`sweep`) once KEEP_HOURS have passed since they were
  uploaded or last checked: their rows and files go.
- Each batch of rows is one transaction with the job's counters, progress, heartbeat and the
  batch's rejected rows: what the page shows is always what was committed. A batch commits
  only while the job is still this process's and running.
- Queued, claimed, running, its heartbeat and when it is dead are the lifecycle every
  background job shares (weblib/job_lifecycle.py, `lifecycle` below); checking is a state in
  which a process works on the job too.
- While a job runs, a thread of its process beats its heartbeat every quarter of
  STALE_SECONDS (`heartbeat`), whatever step the job is in: a step may take longer than
  STALE_SECONDS (a large batch of rows, adding a range on a loaded database), and a job was
  declared interrupted while its process lived.
- A job whose process is gone (on this host: its pid no longer runs; on any host: no
  heartbeat for STALE_SECONDS) is marked interrupted with a sentence by whoever looks at it
  next, never left "running". What its finished batches added stays; importing the same file
  again adds the rest, since rows the project has are skipped.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass
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
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from weblib.job_lifecycle import INTERRUPTED, QUEUED, RUNNING, Clock, Heartbeat, Lifecycle
from weblib.processes import ThreadPool, process_owner

from .. import schema
from ..org import org_record
from ..store.db import begin_write
from ..store.models import Base, Project, new_uuid, utcnow
from . import import_sources, imports

log = logging.getLogger(__name__)

# Queued, running and interrupted are every background job's (weblib.job_lifecycle).
FINISHED, FAILED = "finished", "failed"
# Uploaded, not of the import's own shape: waiting for the person to choose its columns.
CHOOSING = "choosing"
# Its columns chosen, the file being checked (run_check); then `choosing` again.
CHECKING = "checking"
ACTIVE = (QUEUED, RUNNING)
# The states whose job a process of the service is working on (interrupt_dead looks after them).
BUSY = (QUEUED, RUNNING, CHECKING)

STALE_SECONDS = 60.0  # a running job (or check) without a heartbeat for this long has died
# After an import that added this many queries the planner's statistics are refreshed, as
# after the command line's (schema.analyze; docs/decisions.md).
ANALYZE_AFTER_ROWS = 10_000
MAX_FILE_NAME = 255
CHUNK = 1024 * 1024
# Of an import's time, reading and checking the file is about 30 % (1M rows: 10 of 36 s);
# adding its rows, the rest.
READING_SHARE = 30
# Of a check's time, writing the file in the import's own shape is about half; reading it as
# an import would, the rest.
SHAPING_SHARE = 50
# An upload left on its Columns page is removed this long after it was uploaded or last checked
# (config IMPORT_KEEP_HOURS, TAGDESK_IMPORT_KEEP_HOURS).
KEEP_HOURS = 24.0
REJECTED_SHOWN = 5  # the first rejected rows a check names

STOPPED = ("Tagdesk stopped working on this import before it finished (the service restarted "
           "or its process was stopped). The rows counted here were imported; import the same "
           "file again to add the rest: rows the project already has are skipped.")
BROKEN = ("Something went wrong on our side while importing. It has been noted. The rows "
          "counted here were imported; import the same file again to add the rest.")
CHECK_STOPPED = ("The check of the file stopped before it ended (the service restarted or its "
                 "process was stopped). Nothing was changed: check the file again.")
CHECK_BROKEN = ("Something went wrong on our side while checking the file. It has been noted. "
                "Nothing was changed.")
CHECK_CANCELLED = "The check was cancelled. Nothing was changed."

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
    # Blank lines passed over, said once in the report (migration 0035).
    blank_lines: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # A file of another shape (migration 0032): its columns as chosen (Chosen, as JSON) for its
    # check and its import; the running check's id; the last check's result (as JSON).
    choice: Mapped[str | None] = mapped_column(Text, nullable=True)
    check_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    checked: Mapped[str | None] = mapped_column(Text, nullable=True)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def busy(self) -> bool:
        """A process is working on it: its import, or a check of its file."""
        return self.state in BUSY

    @property
    def chosen(self) -> Chosen | None:
        return Chosen.from_json(self.choice)

    @property
    def check_result(self) -> dict | None:
        """The last check's result (check's answer, with its `chosen` and `check_id`), or
        {"problem": sentence} when it could not be made, or {"note": sentence}; None if
        none."""
        try:
            return json.loads(self.checked) if self.checked else None
        except ValueError:
            return None

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
        if self.state == CHECKING:  # a check writes its progress as a share of the file's size
            return min(99, self.bytes_read * 100 // self.file_size)
        if self.reading:
            return self.bytes_read * READING_SHARE // self.file_size
        good = self.rows - self.rejected
        done = (self.added + self.present) / good if good else 1
        return min(100, READING_SHARE + int(done * (100 - READING_SHARE)))

    @property
    def counts(self) -> imports.Counts:
        return imports.Counts(self.rows, self.added, self.present, self.rejected,
                              self.last_line, self.bytes_read, blank=self.blank_lines or 0,
                              tagged=self.tagged_by_rules or 0)

    @property
    def summary(self) -> str:
        return imports.summary(self.counts)


# Its moves, its heartbeat and the rule for a dead job (weblib.job_lifecycle); its times are
# naive UTC.
lifecycle = Lifecycle(ImportJob.__table__, Clock(utcnow, timedelta.total_seconds),
                      ended=(FINISHED, FAILED), working=(CHECKING,))


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
    # Its number cells by number, a JSON object (imports.Rejected.numbers); None: none.
    numbers: Mapped[str | None] = mapped_column(Text)


# What the settings area does when a job ends, in the transaction that ends it (its activity
# log entry): called with the session, the job (its final state) and its project's name.
OnEnd = Callable[[Session, ImportJob, str], None]


@dataclass(frozen=True)
class Chosen:
    """A file's columns as chosen on its Columns page, and whether the tags its rows name that
    the project lacks are created first."""

    choice: import_sources.Choice
    create_tags: bool = False
    # Queries already present take the file's numbers (else theirs are left as they are).
    update_numbers: bool = True

    def to_json(self) -> str:
        fields = asdict(self.choice)
        fields["tags_columns"] = list(self.choice.tags_columns)
        return json.dumps({"choice": fields, "create_tags": self.create_tags,
                           "update_numbers": self.update_numbers}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | None) -> Chosen | None:
        try:
            data = json.loads(text) if text else None
            if not data:
                return None
            fields = data["choice"]
            return cls(import_sources.Choice(**{**fields, "tags_columns": tuple(
                fields.get("tags_columns", ()))}), bool(data.get("create_tags")),
                bool(data.get("update_numbers", True)))
        except (TypeError, ValueError, KeyError):
            return None


# --- the uploaded file -------------------------------------------------------------------------


def clean_file_name(name: str | None) -> str:
    """The upload's own name, for people to recognise it: no folders, no control characters."""
    name = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip()
    return name[:MAX_FILE_NAME] or "upload.csv"


def upload_path(folder: Path, import_id: str) -> Path:
    return folder / f"{import_id}.csv"


def check_path(folder: Path, import_id: str, check_id: str, ended: bool = False) -> Path:
    """The file a check writes in the import's own shape (`ended`: kept for the import)."""
    return folder / f"{import_id}.csv.{check_id}.{'checked' if ended else 'checking'}"


def job_files(folder: Path, import_id: str) -> list[Path]:
    """Every file of a job in the folder: its upload, and the files written from it."""
    return [path for path in folder.glob(f"{import_id}.csv*") if path.is_file()] \
        if folder.is_dir() else []


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


def interrupt_dead(session: Session, jobs: list[ImportJob], folder: Path | None = None,
                   stale_seconds: float = STALE_SECONDS, on_end: OnEnd | None = None
                   ) -> list[ImportJob]:
    """Mark the jobs among `jobs` whose process is gone as interrupted (committed, with
    `on_end` for each in the same transaction); the jobs marked. Their files are removed if
    they are in this host's folder. A check whose process is gone is given up: the job is
    `choosing` again, its page saying the check stopped, its upload kept."""
    dead = lifecycle.dead(jobs, stale_seconds)
    if not dead:
        return []
    begin_write(session)
    marked, checks = [], []
    for job in dead:
        # Only as it was seen: a heartbeat since then means its process lives.
        seen = lifecycle.still_as_seen(job)
        if job.state == CHECKING:
            check_id = job.check_id
            if _end_check(session, job.id, check_id, {"problem": CHECK_STOPPED}, *seen):
                session.refresh(job)
                checks.append((job, check_id))
            continue
        if lifecycle.interrupt(session, job, STOPPED):
            session.refresh(job)
            if on_end is not None:
                on_end(session, job, session.get(Project, job.project_id).name)
            marked.append(job)
    session.commit()
    if folder is not None:
        for job in marked:
            for path in job_files(folder, job.id):
                path.unlink(missing_ok=True)
        for job, check_id in checks:
            check_path(folder, job.id, check_id or "").unlink(missing_ok=True)
    return marked + [job for job, _ in checks]


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
                    tagged_by_rules=counts.tagged, blank_lines=counts.blank,
                    bytes_read=counts.bytes_read, heartbeat_at=utcnow())
            .execution_options(synchronize_session=False))
        if result.rowcount != 1:
            raise Stopped()
        if batch.rejected:
            session.execute(insert(ImportRejection), [
                {"import_id": self.import_id, "line": row.line, "reason": row.reason,
                 "query": row.query, "language": row.language, "country": row.country,
                 "tags": row.tags,
                 "numbers": json.dumps(dict(row.numbers)) if row.numbers else None}
                for row in batch.rejected])


def heartbeat(sessions: sessionmaker, import_id: str, owner: str, interval: float,
              check_id: str | None = None) -> Heartbeat:
    """A thread that beats a running job's heartbeat (or that of this check of its file) every
    `interval` seconds, in a transaction of its own, until it stops (or until the job is no
    longer this process's and running)."""
    def beat() -> bool:
        session: Session = sessions()
        try:
            begin_write(session)
            mine = lifecycle.beat(session, import_id, owner) if check_id is None else \
                lifecycle.beat(session, import_id, owner, ImportJob.check_id == check_id,
                               state=CHECKING)
            session.commit()
            return mine
        finally:
            session.close()

    return Heartbeat(beat, interval, f"tagdesk-import-heartbeat-{import_id[:8]}")


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
        # Only by the process that received it: its upload is in this host's folder.
        started = lifecycle.claim(session, import_id, owner, ImportJob.owner == owner,
                                  started_at=utcnow())
        session.commit()
        if not started:
            return None
        job = session.get(ImportJob, import_id)
        project_id, chosen, checked = job.project_id, job.chosen, job.check_result
        session.commit()
        read_as, title_lines = "", 0
        try:
            with heartbeat(sessions, import_id, owner, stale_seconds / 4):
                if chosen is not None:  # its columns chosen on its Columns page
                    title_lines = _shape_chosen(session, import_id, owner, project_id, folder,
                                                shaped, chosen, checked)
                else:
                    read_as, title_lines, currency = _in_own_shape(path, shaped)
                    _keep_currency(session, project_id, currency)
                missing = imports.MissingTags(imports.project_tags(session, project_id))
                session.commit()
                with open(shaped if chosen or read_as else path, "rb") as binary:
                    counts = imports.import_file(
                        session, project_id, binary, JobSink(import_id, owner, missing),
                        batch_rows, title_lines, file_name=job.file_name,
                        update_numbers=chosen.update_numbers if chosen else True)
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
                     message=" ".join(filter(None, [imports.tag_changes_sentence(counts),
                                                    imports.renumbered_sentence(counts),
                                                    read_as])))
        if state == FINISHED and counts.added >= ANALYZE_AFTER_ROWS:
            _analyze(session)
        return state
    finally:
        session.close()
        for leftover in [path, shaped, *job_files(folder, import_id)]:
            leftover.unlink(missing_ok=True)


def _shape_chosen(session: Session, import_id: str, owner: str, project_id: str, folder: Path,
                  shaped: Path, chosen: Chosen, checked: dict | None) -> int:
    """The upload written in the import's own shape to `shaped` with the columns chosen (the
    file its last check wrote, when that check had the same columns), the tags it names that
    the project lacks created if asked, and the job's size made the shaped file's (its
    progress is read from it); the title lines it has above its rows (Shaping.title_lines).
    NotCsv when the columns cannot be read."""
    last = Chosen.from_json((checked or {}).get("chosen"))
    kept = check_path(folder, import_id, checked["check_id"], ended=True) \
        if last is not None and last.choice == chosen.choice and checked.get("check_id") else None
    if kept is not None and kept.exists():
        os.replace(kept, shaped)
        title_lines = int(checked.get("title_lines") or 0)
        currency = checked.get("currency")
    else:
        with open(upload_path(folder, import_id), "rb") as binary, \
                open(shaped, "w", encoding="utf-8", newline="") as out:
            shaping = import_sources.Shaping(binary, chosen.choice)
            shaping.write(out)
            title_lines, currency = shaping.title_lines, shaping.numbers.currency
    _keep_currency(session, project_id, currency)
    if chosen.create_tags:
        with open(shaped, encoding="utf-8", newline="") as text:
            named = import_sources.tags_named(text)
        begin_write(session)
        job = session.get(ImportJob, import_id)
        import_sources.create_missing_tags(session, project_id, named,
                                           org_record.ByImport(job.file_name, job.user_id))
        session.commit()
    begin_write(session)
    session.execute(update(ImportJob).where(ImportJob.id == import_id, ImportJob.state == RUNNING,
                                            ImportJob.owner == owner)
                    .values(file_size=shaped.stat().st_size, heartbeat_at=utcnow())
                    .execution_options(synchronize_session=False))
    session.commit()
    return title_lines


def _keep_currency(session: Session, project_id: str, currency: str | None) -> None:
    """The project's CPC currency, where it had none, as the file says it (committed)."""
    if currency:
        begin_write(session)
        import_sources.keep_currency(session, project_id, currency)
        session.commit()


def _in_own_shape(path: Path, shaped: Path) -> tuple[str, int, str | None]:
    """("", 0) when the file has the import's own shape; else how it was read, once written
    in that shape to `shaped` (its columns guessed from its header: service/import_sources.
    py), and the title lines above its rows; or NotCsv."""
    with open(path, "rb") as binary:
        if imports.in_own_shape(binary):
            return "", 0, None
        with open(shaped, "w", encoding="utf-8", newline="") as out:
            shaping = import_sources.normalized(binary, import_sources.Choice(), out)
    return (import_sources.describe(shaping.choice, shaping.source, shaping.numbers.described),
            shaping.title_lines, shaping.numbers.currency)


def _analyze(session: Session) -> None:
    try:
        schema.analyze(session.get_bind())
    except Exception:  # the import is done; fresher statistics are a bonus
        log.exception("statistics not refreshed after an import")


def _end(session: Session, import_id: str, owner: str, state: str, on_end: OnEnd | None,
         message: str = "", counts: imports.Counts | None = None) -> str | None:
    values = {}
    if counts is not None:
        values.update(rows=counts.rows, added=counts.added, present=counts.present,
                      rejected=counts.rejected, last_line=counts.last_line,
                      tagged_by_rules=counts.tagged, blank_lines=counts.blank,
                      bytes_read=counts.bytes_read)
    begin_write(session)
    if not lifecycle.finish(session, import_id, owner, state, message, **values):
        session.rollback()
        return None
    job = session.get(ImportJob, import_id, populate_existing=True)
    if on_end is not None:
        on_end(session, job, session.get(Project, job.project_id).name)
    session.commit()
    return state


# --- checks of a file on its Columns page ------------------------------------------------------


def check(session: Session, project_id: str, path: Path, shaped: Path, chosen: Chosen,
          progress: CheckProgress | None = None, batch_rows: int = imports.BATCH_ROWS) -> dict:
    """What importing the upload at `path` with the columns chosen would do, as its Columns
    page says it: {"summary", "created", "missing", "separators", "rejected", "title_lines"}
    (the counts, the tags that would be created, the sentence of the tags the project lacks,
    the one of the separators its tags cells use, the first rejected rows; the title lines
    of the file written, for its import).
    Nothing is changed: the file is written in the import's own shape to `shaped` (the import
    of the same columns may read it), then read and checked as an import would (imports.
    check_only), the tags to be created counted as if they existed. NotCsv when the columns
    cannot be read; `progress` may raise Stopped."""
    with open(path, "rb") as binary, open(shaped, "w", encoding="utf-8", newline="") as out:
        told = (lambda _rows: progress.shaping(binary.tell())) if progress else None
        shaping = import_sources.Shaping(binary, chosen.choice)
        shaping.write(out, told)
    with open(shaped, encoding="utf-8", newline="") as text:
        named = import_sources.tags_named(text)
    lacking = import_sources.lacking_tags(session, project_id, named)
    sink = CheckSink(imports.MissingTags(imports.project_tags(session, project_id)),
                     shaped.stat().st_size, progress)
    session.rollback()
    numbers = list(shaping.numbers.columns)  # the bids read while shaping, then the rest
    with open(shaped, "rb") as binary:
        counts = imports.check_only(session, project_id, binary,
                                    lacking if chosen.create_tags else (), sink, batch_rows,
                                    shaping.title_lines, chosen.update_numbers, numbers)
    present = imports.renumbered_phrase(counts.renumbered, "to update")
    return {"summary": (f"{counts.added:,} will be added, {counts.present:,} already present"
                        f"{present}, {counts.rejected:,} rejected"
                        f"{imports.blank_lines_phrase(counts.blank)}."),
            "numbers": [sentence for column in shaping.numbers.named(numbers)
                        for sentence in column.sentences()],
            "created": lacking if chosen.create_tags else [],
            "missing": sink.missing.sentence(),
            "separators": shaping.tag_separators.sentence(), "rejected": sink.first,
            "languages": shaping.detection.tally.sentence() if shaping.detection else "",
            "title_lines": shaping.title_lines, "currency": shaping.numbers.currency}


class CheckSink(imports.Sink):
    """What a check keeps of each batch it read: the tags its rejected rows name that the
    project lacks, its first rejected rows; and its progress, told."""

    def __init__(self, missing: imports.MissingTags, size: int,
                 progress: CheckProgress | None = None):
        self.missing = missing
        self.size = size  # of the file in the import's own shape
        self.progress = progress
        self.first: list[str] = []

    def done(self, batch: imports.Batch, counts: imports.Counts) -> None:
        self.missing.add(batch.rejected)
        self.first.extend(imports.rejected_line(row)
                          for row in batch.rejected[:REJECTED_SHOWN - len(self.first)])
        if self.progress is not None:
            self.progress.checking(counts, self.size)


def _this_check(check_id: str) -> tuple:
    """The job is still checking, and its check is this one."""
    return ImportJob.state == CHECKING, ImportJob.check_id == check_id


class CheckProgress:
    """A check's progress as one figure (written as a share of the upload's size in
    `bytes_read`: writing the file in the import's own shape SHAPING_SHARE %, reading it the
    rest), the rows read and rejected, and its heartbeat, each in a transaction of its own
    while the check is the job's; Stopped once it is not (cancelled, or replaced by another
    check or by the import)."""

    def __init__(self, sessions: sessionmaker, import_id: str, check_id: str, file_size: int):
        self.sessions = sessions
        self.import_id = import_id
        self.check_id = check_id
        self.file_size = file_size

    def shaping(self, position: int) -> None:
        self._write(min(position, self.file_size) * SHAPING_SHARE // 100, 0, 0)

    def checking(self, counts: imports.Counts, size: int) -> None:
        share = SHAPING_SHARE + (100 - SHAPING_SHARE) * min(counts.bytes_read, size) / (size or 1)
        self._write(int(self.file_size * min(share, 99) / 100), counts.rows, counts.rejected)

    def _write(self, done: int, rows: int, rejected: int) -> None:
        session: Session = self.sessions()
        try:
            begin_write(session)
            result = session.execute(
                update(ImportJob).where(ImportJob.id == self.import_id,
                                        *_this_check(self.check_id))
                .values(bytes_read=done, rows=rows, rejected=rejected, heartbeat_at=utcnow())
                .execution_options(synchronize_session=False))
            session.commit()
        finally:
            session.close()
        if result.rowcount != 1:
            raise Stopped()


def start_check(session: Session, import_id: str, chosen: Chosen, owner: str) -> str | None:
    """Make the upload's job `checking` with these columns, replacing a check that runs
    (committed); the new check's id, or None when the job is neither choosing nor checking
    (its import has started)."""
    check_id = new_uuid()
    begin_write(session)
    result = session.execute(
        update(ImportJob).where(ImportJob.id == import_id,
                                ImportJob.state.in_((CHOOSING, CHECKING)))
        .values(state=CHECKING, check_id=check_id, choice=chosen.to_json(), checked=None,
                owner=owner, heartbeat_at=utcnow(), bytes_read=0, rows=0, rejected=0)
        .execution_options(synchronize_session=False))
    session.commit()
    return check_id if result.rowcount == 1 else None


def cancel_check(session: Session, import_id: str) -> bool:
    """Stop the running check of an upload, if one runs (its job stops at its next write and
    stores nothing): the job is `choosing` again, its page saying so. Whether one ran."""
    job = session.get(ImportJob, import_id, populate_existing=True)
    if job is None or job.state != CHECKING:
        session.rollback()
        return False
    check_id = job.check_id
    begin_write(session)
    ended = _end_check(session, import_id, check_id, {"note": CHECK_CANCELLED})
    session.commit()
    return ended


def queue_chosen(session: Session, import_id: str, chosen: Chosen, owner: str) -> bool:
    """Queue the import of an upload with its columns chosen, replacing a check that runs
    (committed); whether it was queued (False: it had been already)."""
    begin_write(session)
    result = session.execute(
        update(ImportJob).where(ImportJob.id == import_id,
                                ImportJob.state.in_((CHOOSING, CHECKING)))
        .values(state=QUEUED, check_id=None, choice=chosen.to_json(), owner=owner,
                created_at=utcnow(), heartbeat_at=None, bytes_read=0, rows=0, rejected=0)
        .execution_options(synchronize_session=False))
    session.commit()
    return result.rowcount == 1


def _end_check(session: Session, import_id: str, check_id: str | None, result: dict,
               *also) -> bool:
    """In the session's write transaction: the job `choosing` again with the check's result,
    if that check is still the job's (and `also` holds); whether it was."""
    if check_id is None:
        return False
    ended = session.execute(
        update(ImportJob).where(ImportJob.id == import_id, *_this_check(check_id), *also)
        .values(state=CHOOSING, check_id=None, checked=json.dumps(result, ensure_ascii=False),
                bytes_read=0, rows=0, rejected=0, heartbeat_at=utcnow())
        .execution_options(synchronize_session=False))
    return ended.rowcount == 1


def run_check(sessions: sessionmaker, import_id: str, check_id: str, folder: Path,
              batch_rows: int = imports.BATCH_ROWS,
              stale_seconds: float = STALE_SECONDS) -> bool:
    """Run a check of an upload to its end in this thread (its heartbeat beaten by another),
    and store its result on the job, which is `choosing` again; the file it wrote in the
    import's own shape is kept for the import. Whether it stored its result (not when the
    check was cancelled or replaced meanwhile, nor when it was not this process's)."""
    owner = process_owner()
    working = check_path(folder, import_id, check_id)
    kept = check_path(folder, import_id, check_id, ended=True)
    session: Session = sessions()
    try:
        job = session.scalar(select(ImportJob).where(
            ImportJob.id == import_id, ImportJob.owner == owner, *_this_check(check_id)))
        if job is None:
            return False
        project_id, chosen, file_size = job.project_id, job.chosen, job.file_size
        session.rollback()
        try:
            with heartbeat(sessions, import_id, owner, stale_seconds / 4, check_id):
                result = check(session, project_id, upload_path(folder, import_id), working,
                               chosen, CheckProgress(sessions, import_id, check_id, file_size),
                               batch_rows)
            os.replace(working, kept)
            result.update(chosen=chosen.to_json(), check_id=check_id)
        except Stopped:
            session.rollback()
            return False
        except (imports.NotCsv, FileNotFoundError) as error:
            session.rollback()
            result = {"problem": str(error) if isinstance(error, imports.NotCsv)
                      else "The file is no longer here: upload it again."}
        except Exception:
            session.rollback()
            log.exception("check %s of import %s failed", check_id, import_id)
            result = {"problem": CHECK_BROKEN}
        begin_write(session)
        ended = _end_check(session, import_id, check_id, result)
        session.commit()
        if not ended:
            kept.unlink(missing_ok=True)
            return False
        for other in folder.glob(f"{import_id}.csv.*.checked"):
            if other != kept:  # an earlier check's
                other.unlink(missing_ok=True)
        return True
    finally:
        session.close()
        working.unlink(missing_ok=True)


# --- uploads left on their Columns page ---------------------------------------------------------


def sweep(session: Session, folder: Path | None, keep_seconds: float,
          now: datetime | None = None) -> list[str]:
    """Uploads left on their Columns page (`choosing`) for more than `keep_seconds` since they
    were uploaded or last checked: their rows deleted and, in this host's folder, their files
    (the upload, a check's file in the import's own shape). Any other file of the folder that
    old whose job is no longer waiting, choosing or running goes too (a job of a project since
    deleted, an upload stopped half-way). The ids of the rows deleted (committed)."""
    now = now or utcnow()
    cutoff = now - timedelta(seconds=keep_seconds)
    touched = func.coalesce(ImportJob.heartbeat_at, ImportJob.created_at)
    begin_write(session)
    gone = list(session.scalars(
        delete(ImportJob).where(ImportJob.state == CHOOSING, touched < cutoff)
        .returning(ImportJob.id).execution_options(synchronize_session=False)))
    session.commit()
    if folder is None or not folder.is_dir():
        return gone
    for import_id in gone:
        for path in job_files(folder, import_id):
            path.unlink(missing_ok=True)
    waiting = set(session.scalars(select(ImportJob.id).where(
        ImportJob.state.in_((*BUSY, CHOOSING)))))
    session.rollback()
    oldest = time.time() - keep_seconds - (utcnow() - now).total_seconds()
    for path in folder.iterdir():
        try:
            if path.is_file() and path.name.split(".", 1)[0] not in waiting \
                    and path.stat().st_mtime < oldest:
                path.unlink(missing_ok=True)
        except OSError:  # gone meanwhile
            continue
    return gone


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

    def submit_check(self, import_id: str, check_id: str) -> None:
        future = self._threads.submit(check_id, lambda: run_check(
            self.sessions, import_id, check_id, self.folder, self.batch_rows,
            self.stale_seconds))
        future.add_done_callback(lambda _: self._threads.futures.pop(check_id, None))

    def wait(self, import_id: str, timeout: float | None = None) -> bool:
        """Wait for a job (or a check, by its id) of this process to end; whether it has (or
        was not running here)."""
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
