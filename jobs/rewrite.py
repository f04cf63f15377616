"""The step every edit shares, in a page or in a job: fresh rows in, each row's new tags
worked out from its current ones, and only the rows whose tags really change written and
recorded. An in-page edit, the undo of one and each batch of a job call it.

How the write goes out depends on the service. Where it offers tags-edit (an extension), a
write sends each row's change (these tags added, those removed): whatever another writer
committed after the read stays, so no lease is needed. A service with only the reference's
endpoints takes whole tag sets (set-tags), which overwrite anything committed between the read
and the write: such a write holds the project's lease from its read to its write, so that
Tagdesk's own edits take turns (`lease_needed`, `held_for_write`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from queryapi import Client, Query, TagAssignment, TagEdit

from .deltas import Change
from .store import Store


@dataclass
class Rewrite:
    writes: list[TagAssignment] = field(default_factory=list)  # one set-tags call's items
    changes: list[Change] = field(default_factory=list)        # what each write changes
    written: dict[str, tuple[int, ...]] = field(default_factory=dict)  # id -> tags after
    untouched: int = 0  # rows that already had the tags they were given


def rewrite(rows: Iterable[Query],
            new_tags: Callable[[Query], Sequence[int] | None]) -> Rewrite:
    """`new_tags(row)`: the row's tags after the edit, or None to leave the row out."""
    result = Rewrite()
    for row in rows:
        new = new_tags(row)
        if new is None:
            continue
        if set(new) == set(row.tags):
            result.untouched += 1
            continue
        result.writes.append(row.assignment(new))
        result.changes.append(Change.between(row, row.tags, new))
        result.written[row.id] = tuple(new)
    return result


def lease_needed(client: Client) -> bool:
    """Whether this service's writes are whole tag sets (no tags-edit), which must hold the
    project's lease from their read to their write."""
    return not client.capabilities().tag_edits


@contextmanager
def held_for_write(store: Store, client: Client, project_id: str, holder: str,
                   wait: float) -> Iterator[None]:
    """The project's lease from a read to its write, when the write needs it (LockBusy when
    another edit holds it longer than `wait`)."""
    if not lease_needed(client):
        yield
        return
    with store.project_lock(project_id, holder, wait=wait):
        yield


def write(client: Client, project_id: str, step: Rewrite) -> dict[str, Query]:
    """Send a rewrite's writes: each row's change where the service edits tags in place,
    else its whole new set. The updated records, by id."""
    if not step.writes:
        return {}
    if lease_needed(client):
        records = client.set_tags(project_id, step.writes)
    else:
        records = client.edit_tags(project_id, [
            TagEdit(change.query, change.language, change.country, change.added,
                    change.removed) for change in step.changes])
    return {record.id: record for record in records}
