"""Bulk edits are deltas: what an edit does to one query's tags, and what undoing it does.

Everything here is pure (no HTTP, no database), so the rules are easy to test:

- `Delta.apply(tags)` gives a query's new tag set from the set it has *now* (read from the
  service just before the write): add these, remove those — or, rarely, replace with exactly
  these. A query whose set does not change is not written.
- `Change` records exactly what an edit did to one query (`added`, `removed`); `undo(tags)`
  reverses only that, on the set the query has by then: later changes by others stay.
- `Scope` is a filter (the view's text, languages, countries, tags) as stored with a job, with
  the one question a walk over it needs answered locally: does a query with these tags still
  match after the write? (Only the tag part of a filter can change by tagging.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

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


@dataclass(frozen=True)
class Scope:
    """A filter over a project's queries, as a job stores it. `tag_names` come from the view
    (the dashboard filters by name); `tag_ids` from undo's covering filters. The API combines
    the two with AND; `tag_match` says whether each means "has at least one of these" (any)
    or "has every one of these" (all). `not_tag_names`: tags the queries must not carry;
    `untagged`: queries with no tag (never with tag names or ids)."""

    text: str = ""
    languages: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()
    tag_names: tuple[str, ...] = ()
    tag_ids: tuple[int, ...] = ()
    tag_match: str = "any"
    not_tag_names: tuple[str, ...] = ()
    untagged: bool = False
    # A regular expression on the text (RE2, case ignored): a rule's condition.
    pattern: str = ""
    # Filled in by the walk: the ids of the tags named in tag_names and not_tag_names.
    named_ids: frozenset[int] | None = field(default=None, compare=False)
    not_named_ids: frozenset[int] | None = field(default=None, compare=False)

    def filters(self) -> QueryFilters:
        return QueryFilters(text=self.text, languages=self.languages, countries=self.countries,
                            tag_ids=self.tag_ids, tag_names=self.tag_names,
                            tag_match=self.tag_match, exclude_tag_names=self.not_tag_names,
                            untagged=self.untagged, pattern=self.pattern)

    @property
    def has_tag_condition(self) -> bool:
        return bool(self.tag_names or self.tag_ids or self.not_tag_names or self.untagged)

    def relied_on(self) -> set[int]:
        """The tags whose removal can take a query out of this scope."""
        return set(self.named_ids or ()) | set(self.tag_ids)

    def still_matches(self, tags: Iterable[int]) -> bool:
        """Does a query of this scope still match after its tags became `tags`? (Its text,
        language and country cannot have changed.)"""
        tags = set(tags)
        if self.untagged and tags:
            return False
        if self.tag_names or self.not_tag_names:
            if self.named_ids is None or self.not_named_ids is None:
                raise RuntimeError("The scope's tag names were not resolved to ids.")
            if tags & self.not_named_ids:
                return False
        every = self.tag_match == "all"
        if self.tag_names and not (self.named_ids <= tags if every else tags & self.named_ids):
            return False
        if not self.tag_ids:
            return True
        return set(self.tag_ids) <= tags if every else bool(tags & set(self.tag_ids))

    def resolved(self, tags) -> Scope:
        """With `named_ids` and `not_named_ids` filled in from the project's tags (names match
        case-insensitively; an unknown name names no tag)."""
        tags = list(tags)

        def ids(names) -> frozenset[int]:
            wanted = {name.casefold() for name in names}
            return frozenset(tag.id for tag in tags if tag.name.casefold() in wanted)

        return replace(self, named_ids=ids(self.tag_names), not_named_ids=ids(self.not_tag_names))

    def without_tags(self) -> Scope:
        return Scope(self.text, self.languages, self.countries, pattern=self.pattern)

    def to_json(self) -> dict:
        stored = {"text": self.text, "languages": list(self.languages),
                  "countries": list(self.countries), "tag_names": list(self.tag_names),
                  "tag_ids": list(self.tag_ids)}
        # Only when used: jobs stored before these existed read the same.
        if self.tag_match != "any":
            stored["tag_match"] = self.tag_match
        if self.not_tag_names:
            stored["not_tag_names"] = list(self.not_tag_names)
        if self.untagged:
            stored["untagged"] = True
        if self.pattern:
            stored["pattern"] = self.pattern
        return stored

    @classmethod
    def from_json(cls, data: dict | None) -> Scope:
        data = data or {}
        return cls(data.get("text") or "", tuple(data.get("languages") or ()),
                   tuple(data.get("countries") or ()), tuple(data.get("tag_names") or ()),
                   tuple(int(t) for t in data.get("tag_ids") or ()),
                   "all" if data.get("tag_match") == "all" else "any",
                   tuple(data.get("not_tag_names") or ()), data.get("untagged") is True,
                   str(data.get("pattern") or ""))


def undo_scope(original: Scope, delta: Delta) -> Scope:
    """A filter that covers every query an edit over `original` changed, as far as undoing it
    still matters. After adding tags A: the filter's text/languages/countries with "has one of
    A" (a query that lost all of A since has nothing to undo). After removing or replacing:
    the filter without its tag conditions (the edit may have changed those)."""
    base = original.without_tags()
    if delta.replace is None and delta.add and not delta.remove:
        return Scope(base.text, base.languages, base.countries, (), tuple(sorted(delta.add)))
    return base
