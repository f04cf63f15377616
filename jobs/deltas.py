"""Bulk edits are deltas: what an edit does to one query's tags, and what undoing it does.

Everything here is pure (no HTTP, no database), so the rules are easy to test:

- `Delta.apply(tags)` gives a query's new tag set from the set it has *now* (read from the
  service just before the write): add these, remove those — or, rarely, replace with exactly
  these. A query whose set does not change is not written.
- `Change` records exactly what an edit did to one query (`added`, `removed`); `undo(tags)`
  reverses only that, on the set the query has by then: later changes by others stay.
- `undo_filters` is the filter an undo walks: one every query the edit changed still matches.
  (A job's filter is the API's own, `QueryFilters`, stored as its body.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace

from queryapi import QueryFilters

ADD, REMOVE, REPLACE, EDIT = "add", "remove", "replace", "edit"


def _ids(values: Iterable) -> frozenset[int]:
    return frozenset(int(value) for value in values)


@dataclass(frozen=True)
class Delta:
    """add/remove (both may be given: a row's quick edit), or replace (an exact set)."""

    add: frozenset[int] = frozenset()
    remove: frozenset[int] = frozenset()
    replace: frozenset[int] | None = None

    def __post_init__(self):
        object.__setattr__(self, "add", _ids(self.add))
        object.__setattr__(self, "remove", _ids(self.remove))
        if self.replace is not None:
            object.__setattr__(self, "replace", _ids(self.replace))
            if self.add or self.remove:
                raise ValueError("A replacement cannot also add or remove tags.")
        if self.add & self.remove:
            raise ValueError("A tag cannot be added and removed at once.")

    @property
    def tag_ids(self) -> frozenset[int]:
        return self.add | self.remove | (self.replace or frozenset())

    @property
    def empty(self) -> bool:
        return self.replace is None and not self.add and not self.remove

    def apply(self, tags: Iterable[int]) -> tuple[int, ...]:
        if self.replace is not None:
            return tuple(sorted(self.replace))
        return tuple(sorted((set(tags) | self.add) - self.remove))

    def to_json(self) -> dict:
        return {"add": sorted(self.add), "remove": sorted(self.remove),
                "replace": None if self.replace is None else sorted(self.replace)}

    @classmethod
    def from_json(cls, data: dict) -> Delta:
        replace = data.get("replace")
        return cls(data.get("add") or (), data.get("remove") or (),
                   None if replace is None else replace)


@dataclass(frozen=True)
class Change:
    """What an edit did to one query: the tags it added and the tags it removed."""

    query_id: str
    query: str
    language: str
    country: str
    added: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()

    @classmethod
    def between(cls, record, before: Iterable[int], after: Iterable[int]) -> Change:
        before, after = set(before), set(after)
        return cls(record.id, record.query, record.language, record.country,
                   tuple(sorted(after - before)), tuple(sorted(before - after)))

    def undo(self, tags: Iterable[int]) -> tuple[int, ...]:
        """The set after undoing this change, from the set the query has now: what was added
        goes (if still there), what was removed comes back (if still missing)."""
        return tuple(sorted((set(tags) - set(self.added)) | set(self.removed)))

    def looks_applied(self, tags: Iterable[int]) -> bool:
        """The query's tags show this change (used when a batch's write may or may not have
        happened before an interruption)."""
        tags = set(tags)
        return set(self.added) <= tags and not (set(self.removed) & tags)


def row_key_json(record) -> str:
    """A row's identity as the page sends it back: id, and (query, language, country) — the
    key set-tags matches on, used to find the row again if it moved out of the view."""
    return json.dumps([record.id, record.query, record.language, record.country],
                      ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class RowKey:
    id: str
    query: str
    language: str
    country: str

    @classmethod
    def parse(cls, value: str) -> RowKey | None:
        try:
            data = json.loads(value)
        except (TypeError, ValueError):
            return None
        if (not isinstance(data, list) or len(data) != 4
                or not all(isinstance(part, str) and part for part in data)
                or any(len(part) > 2000 for part in data)):
            return None
        return cls(*data)

    def same_query(self, record) -> bool:
        return (record.query == self.query and record.language.casefold()
                == self.language.casefold() and record.country.casefold()
                == self.country.casefold())


def undo_filters(original: QueryFilters, delta: Delta) -> QueryFilters:
    """A filter that covers every query an edit over `original` changed, as far as undoing it
    still matters. After adding tags A: the filter without its tag conditions, with "has one
    of A" (a query that lost all of A since has nothing to undo). After removing or replacing:
    the filter without its tag conditions (the edit may have changed those)."""
    base = original.without_tags()
    if delta.replace is None and delta.add and not delta.remove:
        return replace(base, tag_ids=tuple(sorted(delta.add)))
    return base
