"""Counting any filter is bitmap algebra on the bitmaps a process holds (service/engine/
held.py) and those of its text: "any of" is a union, "all of" an intersection, "without" a
difference, "untagged" all queries but the union of every tag.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyroaring import BitMap, FrozenBitMap
from sqlalchemy import select
from sqlalchemy.orm import Session

from ..patterns import literals, matcher, required_literals, within_words
from . import folding, kinds, number_index, number_sums, pieces
from . import suggested as kept_suggestions
from .held import EMPTY, Header, Held, Project_, all_keys
from .keys import keys_condition
from .numbers import NAMES
from .tables import Query

# A term with a space: its candidates (texts holding each of its words and each of its
# two-character strings) are checked against their texts this many at a time.
CHECKED_AT_ONCE = 20_000


@dataclass(frozen=True)
class Filter:
    """A filter of a project's queries, its tags resolved to the project's tag ids."""

    text: str = ""
    languages: frozenset[str] = frozenset()
    countries: frozenset[str] = frozenset()
    # The query carries at least one tag of each set ("all of" is one set per tag; an empty
    # set matches nothing).
    required: tuple[frozenset[int], ...] = ()
    excluded: frozenset[int] = frozenset()
    untagged: bool = False
    # tagMatch "all": a tag's facet counts the view's queries that also carry it.
    match_all: bool = False
    pattern: str = ""  # RE2, without regard to case (service/patterns.py)
    # Numbers within bounds (stored values, inclusive; None: open): (name, lowest, highest).
    ranges: tuple[tuple[str, int | None, int | None], ...] = ()
    # Suggested one of these tags (None: no matter; empty: matches nothing), at or above
    # min_confidence (None: the model's default confidence).
    suggested: frozenset[int] | None = None
    min_confidence: float | None = None

    @property
    def empty(self) -> bool:
        return not (self.text or self.languages or self.countries or self.required
                    or self.excluded or self.untagged or self.pattern or self.ranges
                    or self.suggested is not None)


# A filter as the caller names it, made a Filter once the project's tags (id → folded name)
# are read in the same read as its counts.
FilterOf = Callable[[dict[int, str]], Filter]


@dataclass
class Counter:
    """The bitmaps of one read of a project, as of `at`."""

    session: Session
    project_id: str
    at: Header
    held: Project_
    store: Held
    project_tags: list[int]  # every tag of the project

    @property
    def everything(self) -> BitMap:
        return all_keys(self.held)

    def text(self, term: str) -> BitMap:
        folded = folding.fold(term)
        key = (self.project_id, self.at.epoch, self.at.texts_stamp, folded)
        return self.store.term(key, lambda: FrozenBitMap(self._text(folded))) & self.everything

    def _text(self, folded: str) -> BitMap:
        connection = self.session.connection()
        if len(folded) <= folding.SHORT:
            return pieces.read_union(connection, self.project_id, kinds.SHORT, [folded])
        if " " not in folded:
            return pieces.read_union(connection, self.project_id, kinds.WORD,
                                     self.held.vocabulary.containing(folded))
        candidates = BitMap(self.everything)
        for part in folded.split(" "):
            if part:
                candidates &= self.text(part)
        pairs = {folded[i:i + 2] for i in range(len(folded) - 1)}
        for pair in sorted(pairs, key=lambda pair: " " not in pair):
            candidates &= pieces.read_union(connection, self.project_id, kinds.SHORT, [pair])
        return self._checked(candidates, lambda text: folding.matches(folded, text))

    def _checked(self, candidates: BitMap, test) -> BitMap:
        """The candidates whose text passes `test`, their texts read by key."""
        found = BitMap()
        keys = list(candidates)
        for start in range(0, len(keys), CHECKED_AT_ONCE):
            part = keys[start:start + CHECKED_AT_ONCE]
            rows = self.session.execute(select(Query.pk, Query.query).where(
                keys_condition(self.session, Query.pk, part)))
            found.update(pk for pk, text in rows if test(text))
        return found

    def pattern(self, pattern: str, candidates: BitMap) -> BitMap:
        """The queries matching `pattern`, exact at least among `candidates`. Literals joined
        by `|` are text searches (their words' bitmaps) over the whole project; any other
        pattern is run on the candidates' texts, and what it found and checked is kept for the
        next read while the project's texts stay as they are."""
        key = (self.project_id, self.at.epoch, self.at.texts_stamp, "pattern", pattern)
        alternatives = literals(pattern)
        if alternatives is not None:
            return self.store.term(key, lambda: FrozenBitMap(BitMap.union(
                BitMap(), *(self.text(alternative) for alternative in alternatives)))
            ) & self.everything
        if within_words(pattern) and matcher(pattern)("") is False:
            return self.store.term(key, lambda: FrozenBitMap(self._in_words(pattern))
                                   ) & self.everything
        required = required_literals(pattern)
        if required:  # a match holds one of them: the others need no check
            candidates = candidates & BitMap.union(
                BitMap(), *(self.text(literal) for literal in required))
        checked, found = self.store.remembered(key) or (EMPTY, EMPTY)
        unchecked = candidates - checked
        if unchecked:
            new = self._checked(unchecked, matcher(pattern))
            checked, found = FrozenBitMap(checked | unchecked), FrozenBitMap(found | new)
            self.store.remember(key, (checked, found))
        return found & candidates

    def _in_words(self, pattern: str) -> BitMap:
        """The queries with a word that matches the pattern (patterns.within_words): the
        project's distinct words matched, not its texts."""
        search = matcher(pattern)
        return self.word_union([word for word in self.distinct_words() if search(word)])

    def distinct_words(self) -> list[str]:
        return self.held.vocabulary.ordered

    def word_union(self, words: list[str]) -> BitMap:
        return pieces.read_union(self.session.connection(), self.project_id, kinds.WORD,
                                 words) if words else BitMap()

    def codes(self, kind: int, values: frozenset[str]) -> BitMap:
        if len(values) == 1:  # the held bitmap itself: no copy of it (read only)
            return self.held.bitmap(kind, next(iter(values)))
        return BitMap.union(BitMap(), *(self.held.bitmap(kind, value) for value in values))

    def tag(self, tag_id: int) -> BitMap:
        return self.held.bitmap(kinds.TAG, str(tag_id))

    def tagged(self, tag_ids) -> BitMap:
        return BitMap.union(BitMap(), *(self.tag(tag_id) for tag_id in tag_ids))

    def suggested(self, tag_id: int, min_confidence: float | None) -> BitMap:
        """The queries suggested the tag: at the default confidence, the held bitmap; at
        another, read from the kept suggestions and kept until the project's next write."""
        if min_confidence is None:
            return self.held.bitmap(kinds.SUGGESTED, str(tag_id))
        key = (self.project_id, self.at.epoch, self.at.stamp, "suggested", tag_id,
               min_confidence)
        return self.store.term(key, lambda: FrozenBitMap(kept_suggestions.keys_at(
            self.session.connection(), self.project_id, tag_id, min_confidence)))

    def suggested_among(self, tag_id: int, keys: list[int], min_confidence: float) -> BitMap:
        """Those of `keys` suggested the tag at or above a confidence, read for them alone."""
        return kept_suggestions.keys_among(self.session.connection(), self.project_id, tag_id,
                                           keys, min_confidence)

    def suggested_tags(self, min_confidence: float | None) -> list[int]:
        """The tags suggested to at least one query."""
        held = {int(value) for value in self.held.values(kinds.SUGGESTED)}
        if min_confidence is None:
            return sorted(held)
        return [tag_id for tag_id in self.project_tags
                if tag_id in held or self.suggested(tag_id, min_confidence)]

    def parts(self, wanted: Filter, every_facet: bool = False) -> dict[str, BitMap]:
        """The filter's parts that narrow it, each the queries it lets through. The pattern's
        part is exact among the queries the other parts let through (or, for `every_facet`,
        among those each facet counts, which leave out one part each)."""
        found: dict[str, BitMap] = {}
        if wanted.text:
            found["text"] = self.text(wanted.text)
        if wanted.languages:
            found["languages"] = self.codes(kinds.LANGUAGE, wanted.languages)
        if wanted.countries:
            found["countries"] = self.codes(kinds.COUNTRY, wanted.countries)
        if wanted.required or wanted.excluded or wanted.untagged:
            tags = self.held.no_tag() if wanted.untagged else self.everything
            for ids in wanted.required:
                tags = tags & self.tagged(ids)
            if wanted.excluded:
                tags = tags - self.tagged(wanted.excluded)
            found["tags"] = tags
        if wanted.ranges:
            found["numbers"] = self.in_ranges(wanted.ranges)
        if wanted.suggested is not None:
            found["suggested"] = BitMap.union(BitMap(), *(
                self.suggested(tag_id, wanted.min_confidence)
                for tag_id in wanted.suggested)) & self.everything
        if wanted.pattern:
            if not found:
                candidates = self.everything
            elif every_facet:
                candidates = BitMap.union(*(self.combined(found, name) for name in found))
            else:
                candidates = self.combined(found)
            found["pattern"] = self.pattern(wanted.pattern, candidates)
        return found

    def in_ranges(self, ranges: tuple) -> BitMap:
        """The queries within every range, kept until the project's next write: a view's
        pages, sorts and counts ask the same ranges, each a walk of the numbers' bits
        (at 10M queries, ~35 ms a range)."""
        def walked() -> FrozenBitMap:
            each = [number_index.in_range(self.held, *bounds) for bounds in ranges]
            return FrozenBitMap(BitMap.intersection(*each) if len(each) > 1 else each[0])
        key = (self.project_id, self.at.epoch, self.at.stamp, "ranges", ranges)
        return self.store.term(key, walked)

    def combined(self, parts: dict[str, BitMap], leave_out: str | None = None) -> BitMap:
        narrowing = sorted((keys for name, keys in parts.items() if name != leave_out), key=len)
        if not narrowing:
            return self.everything
        return BitMap.intersection(*narrowing) if len(narrowing) > 1 else narrowing[0]

    def matches(self, wanted: Filter) -> BitMap:
        return self.combined(self.parts(wanted))

    def count(self, wanted: Filter) -> int:
        """len(matches(wanted)), without building the last intersection."""
        narrowing = sorted(self.parts(wanted).values(), key=len)
        if len(narrowing) < 2:
            return len(narrowing[0] if narrowing else self.everything)
        rest = BitMap.intersection(*narrowing[:-1]) if len(narrowing) > 2 else narrowing[0]
        return rest.intersection_cardinality(narrowing[-1])

    def facets(self, wanted: Filter, sums: tuple[str, ...] = ()) -> dict:
        """Disjunctive counts: each field's counts apply every filter but that field's (tags:
        tag_counts); with `sums`, beside each count the numbers asked over what it counts."""
        parts = self.parts(wanted, every_facet=True)
        matched = self.combined(parts)

        def base(field: str) -> BitMap:
            """What the field's counts apply: the matches, unless the field filters them."""
            return self.combined(parts, field) if field in parts else matched

        summed = self.facet_sums(wanted, sums, matched, base) if sums else None

        def counted(kind: int, field: str) -> list[dict]:
            within = base(field)
            values = [(value, within.intersection_cardinality(self.held.bitmap(kind, value)))
                      for value in self.held.values(kind)]
            values.sort(key=lambda item: (-item[1], item[0]))
            if summed is None:
                return [{"value": value, "count": count} for value, count in values]
            return [{"value": value, "count": count, "sums": summed[kind].get(value) or
                     number_index.sums(self.held, sums, within & self.held.bitmap(kind, value))}
                    for value, count in values]

        tag_base = base("tags")
        tags = self.tag_counts(wanted, tag_base)
        tags.sort(key=lambda item: (-item[1], item[0]))
        numbers_base = base("numbers")
        answer = {
            "totalRecords": len(matched),
            "untagged": tag_base.intersection_cardinality(self.held.no_tag()),
            "languages": counted(kinds.LANGUAGE, "languages"),
            "countries": counted(kinds.COUNTRY, "countries"),
            "tags": [{"id": tag_id, "count": count} for tag_id, count in tags],
            "metricCounts": {name: numbers_base.intersection_cardinality(
                number_index.known(self.held, name)) for name in NAMES},
        }
        suggested_base = base("suggested")
        counts = [(tag_id, suggested_base.intersection_cardinality(
            self.suggested(tag_id, wanted.min_confidence)))
            for tag_id in self.suggested_tags(wanted.min_confidence)]
        counts.sort(key=lambda item: (-item[1], item[0]))
        answer["suggested"] = [{"id": tag_id, "count": count} for tag_id, count in counts]
        if summed is not None:
            answer["sums"], answer["untaggedSums"] = summed["sums"], summed["untaggedSums"]
            bases = None
            for item in answer["tags"]:
                item["sums"] = summed[kinds.TAG].get(item["id"])
                if item["sums"] is None:
                    bases = bases or self.tag_bases(wanted, tag_base)
                    item["sums"] = number_index.sums(self.held, sums, self.tag_counted(
                        wanted, bases, item["id"]))
        return answer

    def facet_sums(self, wanted: Filter, sums: tuple[str, ...], matched: BitMap,
                   base: Callable[[str], BitMap]) -> dict:
        """The numbers asked over what each facet counts: the matches ("sums"), the untagged
        ("untaggedSums"), each language and country by value and each tag by id (their
        kinds). Kept for the filter until the project's next write (the view's pages ask the
        same), a copy each time."""
        key = (self.project_id, self.at.epoch, self.at.stamp, self.at.texts_stamp, "sums",
               wanted, sums, tuple(self.project_tags))
        return dict(self.store.term(key, lambda: self._facet_sums(wanted, sums, matched, base)))

    def _facet_sums(self, wanted: Filter, sums: tuple[str, ...], matched: BitMap,
                    base: Callable[[str], BitMap]) -> dict:
        summer = number_sums.summing(self.held, sums)
        tag_base = base("tags")
        bases = self.tag_bases(wanted, tag_base)
        by_tag = summer.by(kinds.TAG, bases[0])
        tagged = {}
        for tag_id in self.project_tags:
            found = by_tag.get(str(tag_id)) if tag_id not in wanted.excluded else None
            tagged[tag_id] = found or summer.of(self.tag_counted(wanted, bases, tag_id))
        return {"sums": summer.of(matched), "untaggedSums": summer.untagged(tag_base),
                kinds.LANGUAGE: summer.by(kinds.LANGUAGE, base("languages")),
                kinds.COUNTRY: summer.by(kinds.COUNTRY, base("countries")), kinds.TAG: tagged}

    def tag_counts(self, wanted: Filter, others: BitMap) -> list[tuple[int, int]]:
        """(tag, count) of each tag of the project: how many queries the view would show
        with the tag chosen. `others`: the queries every filter but the tag filters lets
        through. With "all of", choosing a tag adds it to the chosen ones, so the count is
        of the view's queries; with "any of" (or none) it is the tag in place of the chosen
        ones. Exclusions apply to every count but an excluded tag's own, which is how many
        queries of the view without that exclusion carry it (what the exclusion hides)."""
        within, shown = self.tag_bases(wanted, others)
        counts = []
        for tag_id in self.project_tags:
            if tag_id not in wanted.excluded:
                counts.append((tag_id, within.intersection_cardinality(self.tag(tag_id))))
            else:
                counts.append((tag_id, len(self._lifted(wanted, shown, tag_id))))
        return counts

    def tag_counted(self, wanted: Filter, bases: tuple[BitMap, BitMap], tag_id: int) -> BitMap:
        """The queries a tag's count (tag_counts) counts; `bases`: tag_bases."""
        within, shown = bases
        if tag_id not in wanted.excluded:
            return within & self.tag(tag_id)
        return self._lifted(wanted, shown, tag_id)

    def tag_bases(self, wanted: Filter, others: BitMap) -> tuple[BitMap, BitMap]:
        """What a tag's count is taken within: (for a tag not excluded, for an excluded one)."""
        chosen = others
        if wanted.match_all and wanted.required:
            chosen = BitMap.intersection(others, *(self.tagged(ids) for ids in wanted.required))
        if not wanted.excluded:
            return chosen, others
        return (chosen - self.tagged(wanted.excluded),
                self._view_but_exclusions(wanted, others))

    def _lifted(self, wanted: Filter, shown: BitMap, tag_id: int) -> BitMap:
        """The view's queries that carry an excluded tag and no other excluded one."""
        lifted = shown & self.tag(tag_id)
        for other in wanted.excluded:
            if other != tag_id:
                lifted -= self.tag(other)
        return lifted

    def _view_but_exclusions(self, wanted: Filter, others: BitMap) -> BitMap:
        """The view's queries before its exclusions: `others` with the chosen tags (any of or
        all of) and untagged applied."""
        shown = others & self.held.no_tag() if wanted.untagged else others
        for ids in wanted.required:
            shown = shown & self.tagged(ids)
        return shown
