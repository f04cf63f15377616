"""How many texts hold each string of 1 to n characters (the short-term counters of
`text_gram_counts`), counted with numpy arrays: each text's strings, coded as integers beside
the text's index, are sorted once, so that a string a text holds twice is counted once and
each string's texts are a run to sum. Python's sets and Counter, a text at a time, took about
2.5 times longer (50,000 texts: 0.65 → 0.26 s) and held the interpreter's lock throughout,
beside the server's inserts.

The characters of a call are numbered 1, 2, … (0 is the end of a text), and a string of n
characters is the n numbers side by side, each in as many bits as the largest needs. A call
whose texts hold too many distinct characters for that (more than 4,095 with strings of up to
four), or a character no text may hold (NUL, a lone surrogate), is counted the plain way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from operator import add

import numpy as np

# Texts counted in one call: each one's index takes this many bits of a string's key. Larger
# calls sorted more slowly per string (16 bits: 0.69 s for 50,000 texts; 13–15 bits: 0.26).
TEXT_BITS = 13
TEXT_MASK = (1 << TEXT_BITS) - 1
AT_ONCE = TEXT_MASK
KEY_BITS = 63


def grams(folded: str, longest: int) -> set[str]:
    """The distinct strings of 1 to `longest` characters of a folded text."""
    found = set(folded)
    pieces = folded
    for n in range(1, longest):
        pieces = list(map(add, pieces, folded[n:]))  # the strings of n + 1 characters
        found.update(pieces)
    return found


def counted(texts: Mapping[str, int], longest: int) -> Counter[str]:
    """For each string of 1 to `longest` characters: how many of the texts hold it, a text
    counting as many times as `texts` says (the rows that share it)."""
    found: Counter[str] = Counter()
    for part in counted_in_parts(texts, longest):
        found.update(part)
    return found


def counted_in_parts(texts: Mapping[str, int], longest: int) -> Iterator[Counter[str]]:
    """As `counted`, AT_ONCE texts at a time: one count a call, for a caller that stops or
    writes between them."""
    distinct = list(texts)
    weights = np.fromiter(texts.values(), dtype=np.int64, count=len(distinct))
    for start in range(0, len(distinct), AT_ONCE):
        part = distinct[start:start + AT_ONCE]
        arrays = _counted(part, weights[start:start + AT_ONCE], longest)
        if arrays is None:
            arrays = Counter()
            for text in part:
                for gram in grams(text, longest):
                    arrays[gram] += texts[text]
        yield arrays


def _counted(texts: Sequence[str], weights: np.ndarray, longest: int) -> Counter[str] | None:
    try:
        points = np.frombuffer(("\0".join(texts) + "\0").encode("utf-32-le"), dtype=np.uint32)
    except UnicodeEncodeError:  # a lone surrogate
        return None
    ends = points == 0
    if np.count_nonzero(ends) != len(texts):  # a NUL inside a text
        return None
    characters, numbers = np.unique(points, return_inverse=True)
    bits = (len(characters) - 1).bit_length()
    if longest * bits + TEXT_BITS > KEY_BITS:
        return None
    numbers = numbers.astype(np.int64)
    text_at = np.cumsum(ends) - ends  # the index of the text each position belongs to
    decode = _decoder([chr(point) for point in characters.tolist()], bits)
    found: Counter[str] = Counter()
    code, inside = numbers, ~ends
    for n in range(1, longest + 1):
        if n > 1:  # the strings of n characters: one more number on the right of each
            code = (code[:-1] << bits) | numbers[n - 1:]
            inside = inside[:-1] & ~ends[n - 1:]
        keys = (code[inside] << TEXT_BITS) | text_at[:len(code)][inside]
        if not len(keys):
            continue
        keys.sort()
        keys = keys[_firsts(keys)]  # a string once per text
        strings = keys >> TEXT_BITS
        starts = np.flatnonzero(_firsts(strings))
        totals = np.add.reduceat(weights[keys & TEXT_MASK], starts)
        for string, total in zip(strings[starts].tolist(), totals.tolist(), strict=True):
            found[decode(string, n)] = total
    return found


def _firsts(values: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array starts."""
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return first


def _decoder(characters: list[str], bits: int):
    mask = (1 << bits) - 1

    def decode(code: int, n: int) -> str:
        return "".join(characters[(code >> (bits * (n - 1 - i))) & mask] for i in range(n))

    return decode
