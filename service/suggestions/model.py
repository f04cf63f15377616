"""A learned model as plain numpy arrays: what scoring needs, and what the status line says.

Saved with np.savez and read back with allow_pickle=False, so loading a model never runs
code from the file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import BinaryIO

import numpy as np
from scipy import sparse
from scipy.special import expit

from .features import FeatureShape, Texts, texts_of

FORMAT = 1


@dataclass(frozen=True, eq=False)
class Model:
    """One project's suggestions model. Columns are the hashed features seen when learning;
    weights has one column per tag of tag_ids."""

    shape: FeatureShape
    columns: np.ndarray  # int64, sorted hashed feature columns
    idf: np.ndarray  # float32, per column
    unseen_idf: float  # weight of a feature never seen when learning (it counts in the norm)
    weights: np.ndarray  # float32, columns x tags
    bias: np.ndarray  # float32, per tag
    calibration: tuple[float, float]  # a, b: confidence = sigmoid(a * score + b)
    tag_ids: np.ndarray  # int64
    tag_query_counts: np.ndarray  # int64, queries carrying each tag when learned
    learned_from: int  # tagged queries
    held_back: int  # tagged queries held back to measure
    held_back_right: float  # share of held-back suggestions right at default_confidence
    default_confidence: float
    too_few: dict[int, int] = field(default_factory=dict)  # tag id -> queries, under minimum

    @property
    def ready(self) -> bool:
        return len(self.tag_ids) > 0

    def vectors(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Rows of texts over the model's columns (see weigh)."""
        return self.weigh(texts_of(texts, self.shape))

    def weigh(self, batch: Texts) -> sparse.csr_matrix:
        """Texts over the model's columns: each feature's count times its idf, divided by
        the text's length (the root of its features' idf squared, features never seen
        when learning counted there only)."""
        grams, gram_squares = self._known(batch.grams)
        words, word_squares = self._known(batch.words_and_pairs)
        matrix = (batch.holds @ grams + words).tocsr()
        lengths = np.sqrt(batch.holds @ gram_squares + word_squares)
        lengths[lengths == 0] = 1.0
        return sparse.csr_matrix(sparse.diags((1.0 / lengths).astype(np.float32)) @ matrix)

    def scores(self, batch: Texts) -> np.ndarray:
        """Raw scores, texts x tags: the same as weigh(batch) @ weights + bias, multiplied
        once per distinct word rather than once per text."""
        grams, gram_squares = self._known(batch.grams)
        words, word_squares = self._known(batch.words_and_pairs)
        per_word = np.asarray(grams @ self.weights)
        raw = batch.holds @ per_word + np.asarray(words @ self.weights)
        lengths = np.sqrt(batch.holds @ gram_squares + word_squares)
        lengths[lengths == 0] = 1.0
        return raw / lengths[:, None] + self.bias

    def _known(self, counts: sparse.csr_matrix) -> tuple[sparse.csr_matrix, np.ndarray]:
        """counts over the model's columns, times idf; and each row's sum of count x idf²
        over all its features."""
        rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
        place = self._place_of_column[counts.indices]
        seen = place >= 0
        idf = np.append(self.idf, np.float32(self.unseen_idf))
        weight = idf[place]  # not seen (-1): the last, unseen_idf
        squares = np.bincount(rows, counts.data * weight * weight, minlength=counts.shape[0])
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows[seen],
                                                            minlength=counts.shape[0]))))
        known = sparse.csr_matrix(((counts.data * weight)[seen].astype(np.float32), place[seen],
                                   indptr), shape=(counts.shape[0], len(self.columns)))
        return known, squares.astype(np.float32)

    @cached_property
    def _place_of_column(self) -> np.ndarray:
        """For each hashed column, its place among the model's columns, or -1."""
        place = np.full(self.shape.width, -1, dtype=np.int32)
        place[self.columns] = np.arange(len(self.columns), dtype=np.int32)
        return place

    def confidence(self, scores: np.ndarray) -> np.ndarray:
        a, b = self.calibration
        # scipy's expit: no overflow far from zero.
        return expit(a * scores + b).astype(np.float32)

    def save(self, file: BinaryIO) -> None:
        too_few = np.array(sorted(self.too_few.items()), dtype=np.int64).reshape(-1, 2)
        np.savez(
            file,
            format=np.int64(FORMAT),
            shape=np.array(list(asdict(self.shape).values()), dtype=np.int64),
            columns=self.columns,
            idf=self.idf,
            unseen_idf=np.float64(self.unseen_idf),
            weights=self.weights,
            bias=self.bias,
            calibration=np.array(self.calibration, dtype=np.float64),
            tag_ids=self.tag_ids,
            tag_query_counts=self.tag_query_counts,
            measured=np.array(
                [self.learned_from, self.held_back, self.held_back_right, self.default_confidence],
                dtype=np.float64,
            ),
            too_few=too_few,
        )

    @classmethod
    def load(cls, file: BinaryIO) -> Model:
        with np.load(file, allow_pickle=False) as saved:
            if int(saved["format"]) != FORMAT:
                raise ValueError(f"A suggestions model of format {int(saved['format'])}, "
                                 f"this version reads format {FORMAT}.")
            learned_from, held_back, right, default = saved["measured"].tolist()
            a, b = saved["calibration"].tolist()
            return cls(
                shape=FeatureShape(*(int(value) for value in saved["shape"])),
                columns=saved["columns"],
                idf=saved["idf"],
                unseen_idf=float(saved["unseen_idf"]),
                weights=saved["weights"],
                bias=saved["bias"],
                calibration=(a, b),
                tag_ids=saved["tag_ids"],
                tag_query_counts=saved["tag_query_counts"],
                learned_from=int(learned_from),
                held_back=int(held_back),
                held_back_right=right,
                default_confidence=default,
                too_few={int(tag): int(count) for tag, count in saved["too_few"]},
            )
