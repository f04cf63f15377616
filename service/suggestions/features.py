"""Short multilingual texts as hashed sparse features: the character n-grams of each word
(with its edges, as scikit-learn's char_wb) and the words and two-word phrases.

A batch of texts is kept as which distinct words each text holds: character n-grams are
worked out once per distinct word, and scoring multiplies them with the model per word, not
per text; a million short queries share far fewer distinct words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32

WORD_OR_SEPARATOR = re.compile(r"\w+|\x1f")
# An odd 32-bit constant (the golden ratio's): mixes a word pair's hashes into one.
PAIR_MIX = np.uint64(0x9E3779B1)
# Joins texts into one string to find their words at once; \w never matches it (nor is it
# NUL, which numpy drops from the end of strings).
SEPARATOR = "\x1f"


@dataclass(frozen=True)
class FeatureShape:
    """How texts become columns; saved with a model so scoring builds the same ones."""

    char_bits: int = 19
    word_bits: int = 18
    char_min: int = 3
    char_max: int = 5

    @property
    def width(self) -> int:
        # Character n-grams first, then words, then word pairs: three disjoint ranges.
        return (1 << self.char_bits) + 2 * (1 << self.word_bits)


@dataclass(frozen=True, eq=False)
class Texts:
    """A batch of texts: each text's distinct-word counts (holds, texts x words), each
    distinct word's character n-grams (grams, words x width) and each text's word and
    word-pair columns (words_and_pairs, texts x width), all as counts."""

    holds: sparse.csr_matrix
    grams: sparse.csr_matrix
    words_and_pairs: sparse.csr_matrix

    def __len__(self) -> int:
        return self.holds.shape[0]

    def rows(self, chosen: np.ndarray) -> Texts:
        return Texts(self.holds[chosen], self.grams, self.words_and_pairs[chosen])

    def document_frequency(self) -> np.ndarray:
        """For each of the width's columns, how many texts have it."""
        # Character n-grams and words take columns apart: counted apart, never added up.
        grams = (self.holds @ self.grams).tocsr()
        grams.sum_duplicates()
        words = self.words_and_pairs
        return np.bincount(np.concatenate((grams.indices, words.indices)),
                           minlength=self.grams.shape[1])


def texts_of(texts: Sequence[str], shape: FeatureShape) -> Texts:
    joined = SEPARATOR.join(texts)
    if joined.count(SEPARATOR) != max(len(texts) - 1, 0):
        joined = SEPARATOR.join(text.replace(SEPARATOR, " ") for text in texts)
    # One pass of the pattern over all texts, separators kept to tell where each ends:
    # several times faster than a pass per text.
    found = np.array(WORD_OR_SEPARATOR.findall(joined.lower()) if texts else [], dtype=object)
    is_separator = found == SEPARATOR
    ends = np.append(np.flatnonzero(is_separator), len(found)) if texts else np.zeros(0, int)
    lengths = np.diff(np.concatenate(([-1], ends))) - 1
    flat = found[~is_separator].tolist()
    place = {word: i for i, word in enumerate(dict.fromkeys(flat))}
    distinct = list(place)
    tokens = np.fromiter(map(place.__getitem__, flat), dtype=np.int64, count=len(flat))
    token_rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    holds = sparse.csr_matrix(
        (np.ones(len(tokens), dtype=np.float32), tokens,
         np.concatenate(([0], np.cumsum(lengths)))),
        shape=(len(texts), len(distinct)),
    )
    holds.sum_duplicates()
    words = _word_columns(distinct, tokens, token_rows, len(texts), shape)
    return Texts(holds, _char_grams(distinct, shape), words)


def _char_grams(distinct: list[str], shape: FeatureShape) -> sparse.csr_matrix:
    if not distinct:  # the hasher cannot read an empty batch
        return sparse.csr_matrix((0, shape.width), dtype=np.float32)
    hasher = HashingVectorizer(
        analyzer="char_wb",
        ngram_range=(shape.char_min, shape.char_max),
        n_features=1 << shape.char_bits,
        alternate_sign=False,
        norm=None,
        binary=True,
        lowercase=False,
        dtype=np.float32,
    )
    grams = hasher.transform(distinct).tocsr()
    grams.resize((len(distinct), shape.width))
    return grams


def _word_columns(
    distinct: list[str],
    tokens: np.ndarray,
    token_rows: np.ndarray,
    rows: int,
    shape: FeatureShape,
) -> sparse.csr_matrix:
    word_hash = np.fromiter(
        (murmurhash3_32(word, seed=0, positive=True) for word in distinct),
        dtype=np.uint64,
        count=len(distinct),
    )
    mask = np.uint64((1 << shape.word_bits) - 1)
    token_hash = word_hash[tokens] if len(tokens) else np.zeros(0, dtype=np.uint64)
    single = (token_hash & mask).astype(np.int64) + (1 << shape.char_bits)
    follows = token_rows[1:] == token_rows[:-1]
    pairs = ((token_hash[:-1] * PAIR_MIX + token_hash[1:]) & mask).astype(np.int64)[follows]
    columns = np.concatenate((single, pairs + (1 << shape.char_bits) + (1 << shape.word_bits)))
    row_of = np.concatenate((token_rows, token_rows[:-1][follows]))
    matrix = sparse.csr_matrix(
        (np.ones(len(columns), dtype=np.float32), (row_of, columns)),
        shape=(rows, shape.width),
    )
    matrix.sum_duplicates()
    return matrix
