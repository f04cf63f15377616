"""The cell of tag names (weblib/tag_lists.py): every list of names a tag may have is read back
exactly from the cell it is written as, whatever separators the reader splits at, also once
guarded against formulas and unguarded; cells without quotes read as they always did; and a
cell of the longest line an import reads splits in time linear in its length."""

from __future__ import annotations

import random
import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from weblib.spreadsheet_cells import guard_cell, unguard_cell
from weblib.tag_lists import join_tag_names, separators_in, split_tag_names
from weblib.tag_names import tag_name_problem
from weblib.text_rules import has_forbidden_character

READERS = [(";",), (";", ","), (";", "|"), (";", ",", "|"), (";", " / ")]
# What a reader or the guard treats apart, and letters.
ALPHABET = ';,|"\' =+-@/ab\u00a0\u3000é'


def is_tag_name(name: str) -> bool:
    """What the API keeps as a tag's name (service/bodies/validation.py): trimmed, no control
    characters, no bidi controls, something visible."""
    return (name == name.strip() and bool(name) and not has_forbidden_character(name)
            and tag_name_problem(name) is None)


names = st.text(st.one_of(st.sampled_from(ALPHABET), st.characters()), min_size=1,
                max_size=12).filter(is_tag_name)


@settings(max_examples=400, deadline=None)
@given(st.lists(names, max_size=6))
@example(["price; cheap", '"quoted"', '"', "a,b", "x | y", "=1;@2", "'"])
@example(['";"', '" , "', '"a', 'b"', '""'])
def test_every_list_of_names_reads_back_exactly_whatever_the_reader_splits_at(listed):
    cell = join_tag_names(listed)
    for separators in READERS[:4]:  # the export quotes what these split at
        assert split_tag_names(cell, separators) == listed, separators
        assert split_tag_names(unguard_cell(guard_cell(cell)), separators) == listed
    # The import's own shape, written from another tool's file: split at ";" only.
    own_shape = join_tag_names(listed, (";",), ";")
    assert split_tag_names(unguard_cell(guard_cell(own_shape))) == listed


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(ALPHABET.replace('"', "")), max_size=30))
def test_a_cell_without_quotes_reads_as_it_always_did(cell):
    for separators in READERS:
        pieces = [cell]
        for separator in separators:
            pieces = [part for piece in pieces for part in piece.split(separator)]
        assert split_tag_names(cell, separators) == [p.strip() for p in pieces if p.strip()]


def test_a_separator_inside_a_quoted_name_is_not_guessed_as_one():
    assert separators_in(join_tag_names(["red, green"]), [";", ",", "|"]) == []
    assert separators_in(join_tag_names(["red, green", "a|b"]), [";", ",", "|"]) == [";"]
    assert separators_in("red, green", [";", ",", "|"]) == [","]


def test_a_cell_of_the_longest_line_splits_in_linear_time():
    length = 65_536  # MAX_LINE of service/imports/imports.py
    rnd = random.Random(7)
    cells = ['";' * (length // 2), '"a;' * (length // 3), '"' + ';""' * (length // 3),
             '"' + "a;" * (length // 2), "".join(rnd.choice('";, a') for _ in range(length))]
    for cell in cells:
        started = time.perf_counter()
        split_tag_names(cell, (";", ",", "|"))
        assert time.perf_counter() - started < 1.0  # about 50 ms; quadratic would be minutes
