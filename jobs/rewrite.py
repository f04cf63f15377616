"""The step every edit shares, in a page or in a job: fresh rows in, each row's new tags
worked out from its current ones, and only the rows whose tags really change written and
recorded. An in-page edit, the undo of one and each batch of a job call it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from queryapi import Query, TagAssignment

from .deltas import Change


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
