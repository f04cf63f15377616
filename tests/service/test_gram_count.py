"""The short strings' counts (service/gram_count.py) are those of the plain definition: for
each string of 1 to n characters, how many rows' texts hold it, a text once however often it
holds the string — whichever way a call is counted (arrays, or the plain way when its texts
cannot be coded)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service import gram_count


def plain(texts: dict[str, int], longest: int) -> Counter[str]:
    found: Counter[str] = Counter()
    for text, rows in texts.items():
        for string in {text[i:i + n] for n in range(1, longest + 1)
                       for i in range(len(text) - n + 1)}:
            found[string] += rows
    return +found


@pytest.fixture
def ways(monkeypatch):
    """Which way each call of many texts was counted."""
    seen = []
    real = gram_count._counted

    def counted(texts, weights, longest):
        found = real(texts, weights, longest)
        seen.append("plain" if found is None else "arrays")
        return found

    monkeypatch.setattr(gram_count, "_counted", counted)
    return seen


def test_a_string_counts_once_a_text_and_once_a_row(ways):
    texts = {"aaaa": 1, "abab": 3, "b": 2, "": 1, "schuhe schuhe": 1}
    found = gram_count.counted(texts, 2)
    assert found == plain(texts, 2)
    assert found["a"] == 4 and found["ab"] == 3 and found["ba"] == 3 and found["aa"] == 1
    assert found["b"] == 5 and found["sc"] == 1
    assert ways == ["arrays"]


def test_texts_of_many_scripts_and_characters_outside_the_first_plane(ways):
    texts = Counter(["snow ☃ boots 🥾", "🥾🥾🥾", "ΣΟΦΙΑ σοφίας", "straße ẞ", "кофе москва",
                     "東京 ラーメン", "a\u0301b", "ǆemal"])
    assert gram_count.counted(texts, 4) == plain(texts, 4)
    assert gram_count.counted(texts, 4)["🥾🥾"] == 1
    assert ways == ["arrays", "arrays"]


def test_calls_of_a_few_texts_add_up(ways, monkeypatch):
    monkeypatch.setattr(gram_count, "AT_ONCE", 3)
    texts = {f"text {i} {'ab' * (i % 4)}": 1 + i % 3 for i in range(10)}
    assert gram_count.counted(texts, 4) == plain(texts, 4)
    assert ways == ["arrays"] * 4


def test_texts_that_cannot_be_coded_are_counted_the_plain_way(ways):
    # More distinct characters than fit four to a key beside the text's index.
    many = {"".join(chr(0x4E00 + i + j) for j in range(5)): 1 for i in range(0, 5000, 5)}
    nul = {"a\0b": 2, "ab": 1}
    surrogate = {"a\ud800b": 1, "b": 1}
    for texts in (many, nul, surrogate):
        assert gram_count.counted(texts, 4) == plain(texts, 4)
    assert ways == ["plain", "plain", "plain"]


def test_the_largest_call_that_can_be_coded(ways):
    """4,095 distinct characters take 12 bits each: four of them and a text's index fill 61
    bits; one more character would not fit, and the call is counted the plain way."""
    fits = {"".join(chr(0x4E00 + i + j) for j in range(5)): 1 for i in range(0, 4095, 5)}
    assert len(set("".join(fits))) == 4095
    assert gram_count.counted(fits, 4) == plain(fits, 4)
    one_more = {**fits, "\U00020000": 1}
    assert gram_count.counted(one_more, 4) == plain(one_more, 4)
    assert ways == ["arrays", "plain"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\0"),
                               max_size=12),
                       st.integers(min_value=1, max_value=4), max_size=20),
       st.integers(min_value=1, max_value=4))
def test_any_texts_as_the_plain_definition(texts, longest):
    assert gram_count.counted(texts, longest) == plain(texts, longest)
