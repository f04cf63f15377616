"""jobs.rewrite: the read-modify-write step that in-page edits, undos and jobs share."""

from __future__ import annotations

from datetime import UTC, datetime

from jobs.deltas import Delta
from jobs.rewrite import rewrite
from queryapi import Query, TagAssignment

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def query(query_id: str, *tags: int) -> Query:
    return Query(query_id, "p1", tags, f"text {query_id}", "de", "DE", NOW)


def test_only_rows_whose_tags_change_are_written_and_recorded():
    rows = [query("a", 1), query("b", 1, 2), query("c")]
    step = rewrite(rows, lambda row: Delta(add={2}).apply(row.tags))
    assert step.writes == [TagAssignment("text a", "de", "DE", (1, 2)),
                           TagAssignment("text c", "de", "DE", (2,))]
    assert [(c.query_id, c.added, c.removed) for c in step.changes] == [
        ("a", (2,), ()), ("c", (2,), ())]
    assert step.written == {"a": (1, 2), "c": (2,)}
    assert step.untouched == 1


def test_rows_given_no_new_tags_are_left_out_entirely():
    rows = [query("a", 1), query("b", 1)]
    step = rewrite(rows, lambda row: (3,) if row.id == "b" else None)
    assert [c.query_id for c in step.changes] == ["b"]
    assert step.untouched == 0
    assert step.written == {"b": (3,)}
