"""An edit, undo or export as the dashboard records it: a plain record that pages word and
show, whatever database keeps it (jobs/store.py)."""

from __future__ import annotations

from dataclasses import dataclass

ACTIVE = ("queued", "running")
FINISHED = ("done", "cancelled", "failed")


@dataclass
class Edit:
    id: str
    project_id: str
    kind: str
    scope: str
    scope_filter: dict | None
    scope_words: str
    delta: dict | None
    tag_names: dict | None
    sort: list | None
    undo_of: str | None
    undone_by: str | None
    state: str
    message: str | None
    expected: int
    total: int
    processed: int
    changed: int
    untouched: int
    cursor_k: int
    cursor_last: str | None
    batches: int
    pending_batch: int | None
    cancel_requested: bool
    session_ref: str | None
    actor: str
    masked_key: str
    owner: str | None
    created_at: float
    started_at: float | None
    run_started_at: float | None
    run_processed_start: int
    heartbeat_at: float | None
    finished_at: float | None
    requests: int
    rate_limited: int
    file: str | None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def undoable(self) -> bool:
        """Undo is offered for a finished (or cancelled) edit that changed something and was
        not undone yet; undos and exports are not undone."""
        return (self.kind == "edit" and self.state in ("done", "cancelled")
                and self.changed > 0 and not self.undone_by)

    @property
    def resumable(self) -> bool:
        return self.state == "interrupted" and not self.undone_by
