"""Learning a project's suggestions model from the queries its people tagged.

Each tag with enough queries is learned one-vs-rest: the queries carrying it are positive,
every other tagged query negative, and a query whose suggestion of it was rejected is a
negative with more weight. Part of the tagged queries is held back (chosen by a hash of
their id, so the same ones each time) to measure how often suggestions are right and to
choose the default confidence; then the model is learned again from all of them.

A project with many tagged queries learns from a sample of them (`sample`): every query of a
tag with few, a share of a tag's when it has more, so that what learning holds stays bounded
whatever the project's size."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from pyroaring import BitMap
from scipy import sparse
from sklearn.linear_model import SGDClassifier
from sklearn.utils import murmurhash3_32

from .features import FeatureShape, texts_of
from .measuring import Choice, lowest_confidence_right, platt
from .model import Model


@dataclass(frozen=True)
class TaggedQuery:
    """A query as learning sees it; one with no tags counts only for its rejections."""

    query_id: int
    text: str
    language: str | None
    tag_ids: tuple[int, ...]


@dataclass(frozen=True)
class Settings:
    min_queries: int = 10  # a tag needs this many queries before it is suggested
    hold_back: float = 0.2  # share of tagged queries held back to measure, when many
    cross_validate_below: int = 20_000  # fewer tagged: each held back once, in folds rounds
    folds: int = 5
    target_right: float = 0.97  # the default confidence is the lowest reaching this
    lowest_default: float = 0.5  # never below: a suggestion more likely wrong than right
    seed: int = 49
    shape: FeatureShape = FeatureShape()
    alpha: float = 3e-4  # SGD's L2 regularization (chosen on the bench's dev set)
    epochs: int = 6
    rejected_weight: float = 3.0
    negatives_per_positive: int = 4  # a tag learns from at most this many others a query
    min_negatives: int = 5_000
    threads: int = 2
    most_learned_from: int = 100_000  # tagged queries learned from, about, whatever the size
    least_per_tag: int = 1_000  # a tag keeps this many in the sample however many tags
    scored_at_once: int = 50_000  # queries read and scored at a time


# An odd 64-bit constant (the golden ratio's): a query's key times it, as a share of 2**64,
# is spread evenly over [0, 1) for keys in any order or range.
SPREAD = np.uint64(0x9E3779B97F4A7C15)


def sample(by_tag: dict[int, BitMap], settings: Settings = Settings()) -> BitMap:
    """The tagged queries learned from, given each tag's queries: all of them for a tag with
    up to its share of `most_learned_from` (never under `least_per_tag`), else that many of
    them, chosen by their key (the same ones each time while the tag has the same queries).
    A query chosen for one tag is learned with all of its tags."""
    share = max(settings.most_learned_from // max(1, len(by_tag)), settings.least_per_tag)
    chosen = BitMap()
    for keys in by_tag.values():
        if len(keys) <= share:
            chosen |= keys
            continue
        found = np.frombuffer(keys.to_array(), dtype=np.uint32)
        spread = (found.astype(np.uint64) * SPREAD) >> np.uint64(11)  # 53 bits: a float's
        chosen |= BitMap(found[spread < np.uint64(share / len(keys) * 2.0**53)])
    return chosen


def learn(
    queries: Iterable[TaggedQuery],
    rejected: Sequence[tuple[int, int]] = (),
    settings: Settings = Settings(),
) -> Model:
    """A model from tagged queries and rejected (query id, tag id) suggestions; a rejected
    query teaches only when it is among queries (with its tags, perhaps none)."""
    # In order of id: the same queries in any order learn the same model.
    by_id = {query.query_id: query for query in sorted(queries, key=lambda q: q.query_id)}
    counts = Counter(tag for query in by_id.values() for tag in set(query.tag_ids))
    tag_ids = np.array(sorted(t for t, n in counts.items() if n >= settings.min_queries),
                       dtype=np.int64)
    too_few = {t: n for t, n in sorted(counts.items()) if n < settings.min_queries}
    tagged = [query for query in by_id.values() if query.tag_ids]
    refused = _refusals(rejected, by_id, set(tag_ids.tolist()))
    if len(tag_ids) == 0:
        return _untrained(settings, len(tagged), too_few)
    refused_only = sorted({q for q, _ in refused} - {query.query_id for query in tagged})
    rows = tagged + [by_id[q] for q in refused_only]
    row_of = {query.query_id: row for row, query in enumerate(rows)}
    found = texts_of([query.text for query in rows], settings.shape)
    truth = _truth(tagged, len(rows), tag_ids)
    refusals = [(row_of[q], int(np.searchsorted(tag_ids, t))) for q, t in refused]
    folds = np.array([_fold(q.query_id, len(tagged), settings) for q in tagged] +
                     [-1] * len(refused_only))
    scores, is_right, asked = [], [], []
    for fold in range(max(folds.max() + 1, 0)):
        held = folds == fold
        if not held.any() or held[: len(tagged)].all():
            continue
        measured = _fit(found, truth, ~held, len(tagged), refusals, tag_ids, settings)
        scores.append(measured.scores(found.rows(held)))
        is_right.append(truth[held].toarray().astype(bool))
        # A rejected suggestion is never made again: it is not counted either way.
        asked.append(np.ones_like(is_right[-1]))
        held_rank = np.cumsum(held) - 1
        for row, tag in refusals:
            if held[row]:
                asked[-1][held_rank[row], tag] = False
    if scores and len(tagged) >= settings.cross_validate_below:
        final = measured  # learned from most of many: learning again would double the time
    else:
        final = _fit(found, truth, np.ones(len(rows), dtype=bool), len(tagged), refusals,
                     tag_ids, settings)
    if scores:
        calibration, choice = _measure(final, np.concatenate(scores),
                                       np.concatenate(is_right), np.concatenate(asked), settings)
        held_count = sum(len(part) for part in scores)
    else:
        calibration, choice, held_count = (1.0, 0.0), Choice(float("inf"), 0.0, 0), 0
    return dataclasses.replace(
        final,
        calibration=calibration,
        tag_query_counts=np.array([counts[t] for t in tag_ids.tolist()], dtype=np.int64),
        learned_from=len(tagged),
        held_back=held_count,
        held_back_right=choice.right,
        default_confidence=choice.confidence,
        too_few=too_few,
    )


def _refusals(rejected, by_id, known_tags) -> list[tuple[int, int]]:
    """Rejected pairs that teach something: a known query, a learned tag it does not carry."""
    pairs = set()
    for query_id, tag_id in rejected:
        query = by_id.get(query_id)
        if query is not None and tag_id in known_tags and tag_id not in query.tag_ids:
            pairs.add((query_id, tag_id))
    return sorted(pairs)


def _truth(tagged: list[TaggedQuery], rows: int, tag_ids: np.ndarray) -> sparse.csr_matrix:
    pairs = [(row, tag) for row, query in enumerate(tagged) for tag in set(query.tag_ids)]
    row_index, tags = np.array(pairs, dtype=np.int64).reshape(-1, 2).T
    place = np.minimum(np.searchsorted(tag_ids, tags), len(tag_ids) - 1)
    learned = tag_ids[place] == tags
    return sparse.csr_matrix(
        (np.ones(int(learned.sum()), dtype=np.int8), (row_index[learned], place[learned])),
        shape=(rows, len(tag_ids)),
    )


def _fold(query_id: int, tagged: int, settings: Settings) -> int:
    """Which round holds the query back: few tagged, each in one of several rounds (more
    held back to measure on); many, one round holds back a share, -1 for the others."""
    place = murmurhash3_32(str(query_id), seed=settings.seed, positive=True) % 10_000
    if tagged < settings.cross_validate_below:
        return place % settings.folds
    return 0 if place < settings.hold_back * 10_000 else -1


def _measure(model, scores, is_right, asked, settings) -> tuple[tuple[float, float], Choice]:
    """The calibration of scores into confidences, and the default confidence."""
    calibration = platt(scores[asked], is_right[asked], settings.seed)
    confidence = dataclasses.replace(model, calibration=calibration).confidence(scores)[asked]
    right = is_right[asked]
    floor = confidence >= settings.lowest_default
    return calibration, lowest_confidence_right(confidence[floor], right[floor],
                                                settings.target_right)


def _fit(found, truth, learning_rows, tagged_count, refusals, tag_ids, settings) -> Model:
    """Columns, idf and one classifier per tag from the rows marked learning_rows."""
    document_frequency = found.rows(learning_rows).document_frequency()
    columns = np.nonzero(document_frequency)[0].astype(np.int64)
    documents = int(learning_rows.sum())
    idf = (np.log((1 + documents) / (1 + document_frequency[columns])) + 1).astype(np.float32)
    frame = Model(
        shape=settings.shape, columns=columns, idf=idf,
        unseen_idf=float(np.log(1 + documents) + 1),
        weights=np.zeros((len(columns), len(tag_ids)), dtype=np.float32),
        bias=np.zeros(len(tag_ids), dtype=np.float32), calibration=(1.0, 0.0),
        tag_ids=tag_ids, tag_query_counts=np.zeros(len(tag_ids), dtype=np.int64),
        learned_from=0, held_back=0, held_back_right=0.0, default_confidence=float("inf"),
    )
    vectors = frame.weigh(found)
    base = np.nonzero(learning_rows[:tagged_count])[0]
    refused_rows: dict[int, list[int]] = {}
    for row, tag in refusals:
        if learning_rows[row]:
            refused_rows.setdefault(tag, []).append(row)
    labels = truth.tocsc()
    # float64 once: SGD would convert a float32 matrix again for every tag.
    vectors = vectors.astype(np.float64)

    def learn_tag(tag: int) -> None:
        positive = labels[:, tag].toarray().ravel().astype(bool)
        refused_here = np.array(sorted(refused_rows.get(tag, [])), dtype=np.int64)
        plain = base[~positive[base] & ~np.isin(base, refused_here)]
        positives = base[positive[base]]
        # Many negatives teach little more than a few times the positives, at a cost.
        cap = max(settings.negatives_per_positive * len(positives), settings.min_negatives)
        rate = 1.0
        if len(plain) > cap:
            rng = np.random.default_rng([settings.seed, tag])
            rate = cap / len(plain)
            plain = np.sort(rng.choice(plain, cap, replace=False))
        rows = np.concatenate((positives, plain, refused_here))
        if len(positives) == 0 or len(rows) == len(positives):
            frame.bias[tag] = -10.0 if len(positives) == 0 else 10.0
            return
        y = positive[rows]
        weight = np.ones(len(rows))
        weight[len(positives) + len(plain):] = settings.rejected_weight
        classifier = SGDClassifier(
            loss="log_loss", alpha=settings.alpha, max_iter=settings.epochs, tol=None,
            random_state=settings.seed,
        ).fit(vectors[rows], y, sample_weight=weight)
        frame.weights[:, tag] = classifier.coef_[0]
        # Back to the odds among all negatives, not the sample of them.
        frame.bias[tag] = classifier.intercept_[0] + np.log(rate)

    # SGD runs without the GIL: threads learn tags side by side.
    with ThreadPoolExecutor(max_workers=settings.threads) as pool:
        list(pool.map(learn_tag, range(len(tag_ids))))
    return frame


def _untrained(settings: Settings, tagged: int, too_few: dict[int, int]) -> Model:
    nothing = np.zeros(0, dtype=np.int64)
    return Model(
        shape=settings.shape, columns=nothing, idf=np.zeros(0, dtype=np.float32),
        unseen_idf=1.0, weights=np.zeros((0, 0), dtype=np.float32),
        bias=np.zeros(0, dtype=np.float32), calibration=(1.0, 0.0), tag_ids=nothing,
        tag_query_counts=nothing, learned_from=tagged, held_back=0, held_back_right=0.0,
        default_confidence=float("inf"), too_few=too_few,
    )
