"""POST /api/imports/list (an extension): a project's imports made in the settings, newest
first — the file, its state and counts, the queries rules tagged as they came in, who started
it and when. Read-only; the dashboard's Activity lists them. Uploads still waiting for their
columns to be chosen are not imports yet, and are left out."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..bodies.records import timestamp
from ..bodies.validation import Strict
from ..imports.import_jobs import FAILED, FINISHED, INTERRUPTED, QUEUED, RUNNING, ImportJob

LISTED = (QUEUED, RUNNING, FINISHED, FAILED, INTERRUPTED)
MAX_LISTED = 100


class ImportListBody(Strict):
    limit: Annotated[int, Field(ge=1, le=MAX_LISTED)] = 20


def import_record(job: ImportJob) -> dict:
    return {"id": job.id, "fileName": job.file_name, "state": job.state, "rows": job.rows,
            "added": job.added, "present": job.present, "rejected": job.rejected,
            "blankLines": job.blank_lines, "taggedByRules": job.tagged_by_rules,
            "by": job.actor_email,
            "createdAt": timestamp(job.created_at),
            "finishedAt": timestamp(job.finished_at) if job.finished_at else None}


def list_imports(session: Session, project_id: str, body: ImportListBody) -> dict:
    jobs = session.scalars(
        select(ImportJob).where(ImportJob.project_id == project_id,
                                ImportJob.state.in_(LISTED))
        .order_by(ImportJob.created_at.desc(), ImportJob.id.desc()).limit(body.limit))
    return {"results": [import_record(job) for job in jobs]}
