"""How often suggestions are right: the share right at each confidence, the lowest
confidence at which a target share is reached, and a calibration of raw scores into
confidences (Platt's sigmoid), all from suggestions whose truth is known."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

# Enough pairs to place a sigmoid of two parameters; more only costs time.
CALIBRATION_SAMPLE = 400_000


@dataclass(frozen=True)
class Choice:
    confidence: float  # math.inf when no confidence reaches the target
    right: float  # share right at that confidence (0.0 when none)
    given: int  # suggestions at or above it


def lowest_confidence_right(confidence: np.ndarray, right: np.ndarray, target: float) -> Choice:
    """The lowest confidence c such that, of all suggestions at or above c, at least target
    are right."""
    order = np.argsort(-confidence, kind="stable")
    values = confidence[order]
    hits = np.cumsum(right[order])
    count = np.arange(1, len(values) + 1)
    # A confidence takes all its ties: only the last of each run of equal values counts.
    last_of_tie = np.append(values[1:] != values[:-1], True) if len(values) else values
    good = np.nonzero((hits >= target * count) & last_of_tie)[0]
    if len(good) == 0:
        return Choice(math.inf, 0.0, 0)
    end = good[-1]
    return Choice(float(values[end]), float(hits[end] / count[end]), int(count[end]))


def share_right_and_given(
    confidence: np.ndarray, right: np.ndarray, rows: np.ndarray, total_rows: int,
    thresholds: list[float],
) -> list[tuple[float, float, float]]:
    """(threshold, share of suggestions right, share of rows given at least one) for each."""
    curve = []
    for threshold in thresholds:
        chosen = confidence >= threshold
        given = len(np.unique(rows[chosen])) / total_rows if total_rows else 0.0
        share = float(right[chosen].mean()) if chosen.any() else float("nan")
        curve.append((threshold, share, given))
    return curve


def platt(scores: np.ndarray, right: np.ndarray, seed: int) -> tuple[float, float]:
    """a, b of confidence = sigmoid(a * score + b), fitted to whether suggestions were right."""
    if len(np.unique(right)) < 2:
        return 1.0, 0.0
    if len(scores) > CALIBRATION_SAMPLE:
        pick = np.random.default_rng(seed).choice(len(scores), CALIBRATION_SAMPLE, replace=False)
        scores, right = scores[pick], right[pick]
    fit = LogisticRegression(C=1e4).fit(scores.reshape(-1, 1), right)
    return float(fit.coef_[0, 0]), float(fit.intercept_[0])
