"""The kinds of bitmap (service/engine/kinds.py): their stored numbers never change, and a
write indexes its rows by every kind declared, whatever it is."""

from __future__ import annotations

from collections import defaultdict

import pytest
from pyroaring import BitMap

from service.engine import kinds
from service.engine.pieces import Changes
from service.engine.rows import QueryRow
from service.engine.writer import rows_changes
from tests.service.counters import KINDS, simple_fold

ROWS = [QueryRow(3, "Größe Schuhe", "de", "DE"), QueryRow(9, "schuhe", "en", "DE"),
        QueryRow(12, "ΣΟΦΙΑ σοφίας", "el", "GR")]


def added(rows: list[QueryRow]) -> dict[tuple[int, str], BitMap]:
    changes = Changes()
    rows_changes(rows, changes)
    return {key: BitMap(keys) for key, keys in changes.added.items()}


def test_each_kind_keeps_the_number_its_pieces_are_stored_under():
    """The numbers the exactness checks read `engine_pieces` by (tests/service/counters.py)."""
    assert {kind.name: number for number, kind in kinds.KINDS.items()} == KINDS
    assert (kinds.ALL, kinds.WORD, kinds.SHORT, kinds.LANGUAGE, kinds.COUNTRY,
            kinds.TAG) == (0, 1, 2, 3, 4, 5)


def test_processes_hold_all_queries_codes_and_tags_and_read_texts_per_term():
    assert kinds.HELD_KINDS == (kinds.ALL, kinds.LANGUAGE, kinds.COUNTRY, kinds.TAG, kinds.NUMBER,
                                 kinds.SUGGESTED)


def test_rows_give_every_kind_made_from_rows_and_no_tag():
    """As a plain reading of the rows gives them: the text folded, cut at spaces into words
    and into its strings of one and two characters."""
    expected: dict[tuple[int, str], BitMap] = defaultdict(BitMap)
    for row in ROWS:
        folded = simple_fold(row.text)
        expected[KINDS["all"], ""].add(row.key)
        for word in folded.split(" "):
            expected[KINDS["word"], word].add(row.key)
        for n in (1, 2):
            for start in range(len(folded) - n + 1):
                expected[KINDS["short"], folded[start:start + n]].add(row.key)
        expected[KINDS["language"], row.language].add(row.key)
        expected[KINDS["country"], row.country].add(row.key)
    assert added(ROWS) == expected
    assert (kinds.WORD, "σοφίασ") in expected  # a final sigma folded as any other


def test_a_kind_declared_is_indexed_from_every_write_of_rows(monkeypatch):
    """A new kind is one declaration: the writer loops over the kinds made from rows."""
    def by_length(batch: kinds.Batch) -> dict[str, list[int]]:
        found = defaultdict(list)
        for key, text in zip(batch.keys, batch.fields["text"], strict=True):
            found["long" if len(text) > 6 else "short"].append(key)
        return found

    longer = kinds.Kind(6, "longer", held=False, of_rows=by_length)
    monkeypatch.setattr(kinds, "FROM_ROWS", (*kinds.FROM_ROWS, longer))
    found = added(ROWS)
    assert found[6, "long"] == BitMap([3, 12])
    assert found[6, "short"] == BitMap([9])


def test_a_stored_number_or_name_is_never_declared_twice():
    before = dict(kinds.KINDS)
    for number, name in ((kinds.LANGUAGE, "volume"), (7, "language")):
        with pytest.raises(ValueError, match="declared twice"):
            kinds.declare(number, name, held=False, of_rows=None)
    assert before == kinds.KINDS
