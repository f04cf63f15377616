"""A learned model as plain numpy arrays: what scoring needs, and what the status line says.

Saved with np.savez and read back with allow_pickle=False, so loading a model never runs
code from the file."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import BinaryIO

import numpy as np
from scipy import sparse

from .features import FeatureShape, hashed_features

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

    def vectors(self, texts: list[str]) -> sparse.csr_matrix:
        """Rows of texts over the model's columns, idf-weighted, unit length."""
        return self.weigh(hashed_features(texts, self.shape))

    def weigh(self, found: sparse.csr_matrix) -> sparse.csr_matrix:
        """Hashed features (of hashed_features) over the model's columns, idf-weighted, unit
        length; features never seen when learning count in the length only."""
        rows = np.repeat(np.arange(found.shape[0]), np.diff(found.indptr))
        place = np.searchsorted(self.columns, found.indices)
        place[place == len(self.columns)] = 0
        seen = (
            self.columns[place] == found.indices
            if len(self.columns)
            else np.zeros(len(place), dtype=bool)
        )
        weight = np.where(seen, self.idf[place] if len(self.idf) else 0.0, self.unseen_idf)
        norms = np.sqrt(np.bincount(rows, weight * weight, minlength=found.shape[0]))
        norms[norms == 0] = 1.0
        data = (weight / norms[rows])[seen].astype(np.float32)
        return sparse.csr_matrix(
            (data, (rows[seen], place[seen])), shape=(found.shape[0], len(self.columns))
        )

    def scores(self, vectors: sparse.csr_matrix) -> np.ndarray:
        """Raw scores, rows x tags."""
        return np.asarray(vectors @ self.weights) + self.bias

    def confidence(self, scores: np.ndarray) -> np.ndarray:
        a, b = self.calibration
        return (1.0 / (1.0 + np.exp(-(a * scores + b)))).astype(np.float32)

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
