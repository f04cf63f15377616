"""Scoring many queries against a model: for each, the tags it does not carry and was not
refused, at or above a confidence, best first. Sparse products in batches, so a million
queries are scored in bounded memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .features import texts_of
from .model import Model

BATCH = 50_000


@dataclass(frozen=True, eq=False)
class Pairs:
    """(query id, tag id) pairs as two arrays of the same length."""

    query_ids: np.ndarray
    tag_ids: np.ndarray

    @classmethod
    def of(cls, pairs: Sequence[tuple[int, int]]) -> Pairs:
        array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return cls(array[:, 0].copy(), array[:, 1].copy())

    @classmethod
    def none(cls) -> Pairs:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class Suggestions:
    """Suggested (query, tag, confidence), grouped by query in the order scored, each query's
    best first."""

    query_ids: np.ndarray
    tag_ids: np.ndarray
    confidence: np.ndarray

    def __len__(self) -> int:
        return len(self.query_ids)

    @classmethod
    def none(cls) -> Suggestions:
        return _empty()

    def by_query(self) -> dict[int, list[tuple[int, float]]]:
        grouped: dict[int, list[tuple[int, float]]] = {}
        for query, tag, confidence in zip(
            self.query_ids.tolist(), self.tag_ids.tolist(), self.confidence.tolist(),
            strict=True,
        ):
            grouped.setdefault(query, []).append((tag, confidence))
        return grouped

    def of_tag(self, tag_id: int) -> np.ndarray:
        """The query ids suggested this tag, as the engine's bitmaps want them."""
        return np.unique(self.query_ids[self.tag_ids == tag_id])


def suggest(
    model: Model,
    query_ids: Sequence[int] | np.ndarray,
    texts: Sequence[str],
    *,
    carried: Pairs | None = None,
    rejected: Pairs | None = None,
    min_confidence: float | None = None,
    batch: int = BATCH,
) -> Suggestions:
    """Suggestions for the queries, at or above min_confidence (the model's default if None)."""
    ids = np.asarray(query_ids, dtype=np.int64)
    if len(ids) != len(texts):
        raise ValueError("One query id for each text.")
    threshold = model.default_confidence if min_confidence is None else min_confidence
    if not model.ready or len(ids) == 0:
        return _empty()
    excluded = np.concatenate(
        [_keys(model, pairs) for pairs in (carried, rejected) if pairs is not None] or [_NO_KEYS]
    )
    excluded.sort()
    parts = []
    for start in range(0, len(ids), batch):
        parts.append(_batch(model, ids[start:start + batch], texts[start:start + batch],
                            threshold, excluded))
    return Suggestions(*(np.concatenate(column) for column in zip(*parts, strict=True)))


_NO_KEYS = np.zeros(0, dtype=np.int64)


def _batch(model, ids, texts, threshold, excluded):
    confidence = model.confidence(model.scores(texts_of(texts, model.shape)))
    rows, tags = np.nonzero(confidence >= threshold)
    values = confidence[rows, tags]
    if len(excluded):
        keep = ~_member(ids[rows] * len(model.tag_ids) + tags, excluded)
        rows, tags, values = rows[keep], tags[keep], values[keep]
    order = np.lexsort((-values, rows))
    return ids[rows[order]], model.tag_ids[tags[order]], values[order]


def _keys(model: Model, pairs: Pairs) -> np.ndarray:
    """Pairs as keys query id x tags + tag position, for the model's tags only."""
    place = np.searchsorted(model.tag_ids, pairs.tag_ids)
    place[place == len(model.tag_ids)] = 0
    known = model.tag_ids[place] == pairs.tag_ids
    return pairs.query_ids[known] * len(model.tag_ids) + place[known]


def _member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    place = np.searchsorted(sorted_keys, keys)
    place[place == len(sorted_keys)] = 0
    return sorted_keys[place] == keys


def _empty() -> Suggestions:
    return Suggestions(_NO_KEYS, _NO_KEYS, np.zeros(0, dtype=np.float32))
