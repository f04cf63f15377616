"""How a query's text is folded and cut for the text filter: the one rule that writes (the
index of words and short strings) and reads (the filter's term, the check of a candidate)
both use.

A text matches a term when the term, folded, is a substring of the text, folded. Folding is
Unicode's simple case folding, one character to one ("Ä" → "ä", "Σ" and "ς" → "σ", "ẞ" →
"ß"; "ß" itself stays, so "ß" finds "größe" and not "chaussures"): a character whose full
folding is one character takes it, any other its lower case when that is one character, and
else stays as it is ("İ").
"""

from __future__ import annotations

from array import array

import numpy as np
from pyroaring import BitMap

# Terms of at most this many characters (once folded) are counted from the bitmaps of the
# strings of that length; longer ones from the words.
SHORT = 2


class _Folds(dict):
    """Each character's fold, worked out the first time it is met."""

    def __missing__(self, code: int) -> int:
        character = chr(code)
        folded = character.casefold()
        if len(folded) != 1:
            folded = character.lower()
        if len(folded) != 1:
            folded = character
        self[code] = ord(folded)
        return self[code]


_FOLDS = _Folds()


def fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    return text.translate(_FOLDS)


def words(folded: str) -> list[str]:
    """The words of a folded text: what lies between its spaces (a word the text repeats comes
    again: a bitmap keeps its key once). A term without a space lies within one word of every
    text that contains it."""
    return [word for word in folded.split(" ") if word]


def short_strings(keys: list[int], folded: list[str]) -> dict[str, BitMap]:
    """For each string of 1 to SHORT characters in the folded texts, the keys of the texts
    that hold it. With numpy, all texts at once: each position's character (and the pair it
    starts) coded as a number beside its text's key, sorted by string, cut into runs; a
    string's run is its bitmap (which keeps a key once). Python's sets, a text at a time, took
    five times as long (200,000 texts: 7.4 s).
    """
    if not keys:
        return {}
    # NUL ends each text: no text holds one (weblib.text_rules).
    points = np.frombuffer(("\0".join(folded) + "\0").encode("utf-32-le"), dtype=np.uint32)
    text_keys = np.repeat(np.asarray(keys, dtype=np.uint32),
                          np.fromiter(map(len, folded), dtype=np.int64, count=len(folded)) + 1)
    # The characters met, numbered 0 (NUL), 1, 2, … in code point order, without a sort.
    present = np.zeros(int(points.max()) + 1, dtype=bool)
    present[points] = True
    alphabet = np.flatnonzero(present)
    dense = (np.cumsum(present) - 1)[points]
    size = len(alphabet)
    # A character is its number; a pair, size + first × size + second. In 16 bits when they
    # fit (most batches: their sort is then a radix sort), else 32, else 64.
    kind = next(kind for kind in (np.uint16, np.uint32, np.uint64)
                if size * (size + 1) < np.iinfo(kind).max)
    dense = dense.astype(kind)
    inside = dense != 0
    pairs = inside[:-1] & inside[1:]
    codes = np.concatenate([dense[inside], (size + dense[:-1] * size + dense[1:])[pairs]])
    owners = np.concatenate([text_keys[inside], text_keys[:-1][pairs]])
    order = np.argsort(codes, kind="stable")
    codes, owners = codes[order], owners[order]
    starts = np.flatnonzero(np.diff(codes, prepend=codes[:1] + 1)).tolist()
    characters = [chr(point) for point in alphabet.tolist()]
    found = {}
    for start, end in zip(starts, [*starts[1:], len(owners)], strict=True):
        code = int(codes[start])
        text = characters[code] if code < size else (
            characters[(code - size) // size] + characters[(code - size) % size])
        found[text] = BitMap(array("I", owners[start:end].tobytes()))
    return found


def matches(folded_term: str, text: str) -> bool:
    """Whether `text` (as stored) contains the folded term: the check of a candidate."""
    return folded_term in fold(text)
