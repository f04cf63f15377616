"""Suggested tags learned from tagged queries (service/suggestions): on generated queries of
known themes and on a small multilingual set shaped like the public intent sets, through the
real feature hashing, scikit-learn and the sparse scoring."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from pyroaring import BitMap

from service.suggestions.learning import Settings, TaggedQuery, learn, sample
from service.suggestions.model import Model
from service.suggestions.scoring import Pairs, suggest

THEMES = 6


def themed_queries(count: int, seed: int = 7) -> list[tuple[int, str, int]]:
    """(id, text, theme): two words of the theme's own among common words."""
    rng = random.Random(seed)
    own = {t: [f"{chr(96 + t) * 3}{i}" for i in range(25)] for t in range(1, THEMES + 1)}
    common = [f"word{i}" for i in range(300)]
    rows = []
    for query_id in range(1, count + 1):
        theme = rng.randint(1, THEMES)
        words = rng.sample(own[theme], 2) + rng.sample(common, rng.randint(0, 3))
        rng.shuffle(words)
        rows.append((query_id, " ".join(words), theme))
    return rows


def tagged(rows) -> list[TaggedQuery]:
    return [TaggedQuery(query_id, text, "en", (theme,)) for query_id, text, theme in rows]


@pytest.fixture(scope="module")
def generated():
    rows = themed_queries(3000)
    return rows[:600], rows[600:], learn(tagged(rows[:600]))


def test_on_clean_themes_the_default_confidence_is_right_97_percent(generated):
    known, rest, model = generated
    assert model.ready and model.learned_from == 600 and model.held_back == 600
    assert model.held_back_right >= 0.97
    assert 0.5 <= model.default_confidence <= 1.0
    assert list(model.tag_ids) == list(range(1, THEMES + 1))
    assert sum(model.tag_query_counts) == 600

    found = suggest(model, [r[0] for r in rest], [r[1] for r in rest])
    theme = {query_id: t for query_id, _, t in rest}
    right = [theme[q] == t for q, t in zip(found.query_ids.tolist(), found.tag_ids.tolist(),
                                           strict=True)]
    assert sum(right) / len(right) >= 0.97
    assert len(set(found.query_ids.tolist())) / len(rest) >= 0.85


def test_a_query_is_never_suggested_a_tag_it_carries(generated):
    known, _, model = generated
    ids, texts = [r[0] for r in known], [r[1] for r in known]
    carried = Pairs.of([(query_id, theme) for query_id, _, theme in known])
    found = suggest(model, ids, texts, carried=carried, min_confidence=0.0)
    pairs = set(zip(found.query_ids.tolist(), found.tag_ids.tolist(), strict=True))
    assert pairs, "the other tags are still suggested, at some confidence"
    assert not pairs & {(query_id, theme) for query_id, _, theme in known}
    # Without telling what they carry, the same queries are suggested their own tags.
    again = suggest(model, ids, texts)
    assert set(zip(again.query_ids.tolist(), again.tag_ids.tolist(), strict=True)) & {
        (query_id, theme) for query_id, _, theme in known}


def test_suggestions_are_best_first_and_at_or_above_the_confidence(generated):
    _, rest, model = generated
    found = suggest(model, [r[0] for r in rest], [r[1] for r in rest], min_confidence=0.2)
    assert (found.confidence >= 0.2).all()
    for suggestions in found.by_query().values():
        confidences = [confidence for _, confidence in suggestions]
        assert confidences == sorted(confidences, reverse=True)
    order = {query_id: place for place, (query_id, _, _) in enumerate(rest)}
    assert np.all(np.diff([order[q] for q in found.query_ids.tolist()]) >= 0)
    for tag in model.tag_ids.tolist():
        assert set(found.of_tag(tag).tolist()) == {
            q for q, t in zip(found.query_ids.tolist(), found.tag_ids.tolist(), strict=True)
            if t == tag}


def test_rejected_suggestions_are_never_made_again_after_learning_again():
    rows = themed_queries(2000, seed=11)
    known, rest = rows[:500], rows[500:]
    model = learn(tagged(known))
    ids, texts = [r[0] for r in rest], [r[1] for r in rest]
    first = suggest(model, ids, texts)
    refused = list(zip(first.query_ids[:40].tolist(), first.tag_ids[:40].tolist(), strict=True))
    assert len(refused) == 40

    # The rejected queries come to learning with no tags of their own.
    refused_ids = {q for q, _ in refused}
    with_refused = tagged(known) + [TaggedQuery(q, t, "en", ()) for q, t, _ in rest
                                    if q in refused_ids]
    relearned = learn(with_refused, rejected=refused)
    again = suggest(relearned, ids, texts, rejected=Pairs.of(refused), min_confidence=0.0)
    assert not set(zip(again.query_ids.tolist(), again.tag_ids.tolist(), strict=True)) & set(
        refused)

    # They were learned from too: the model itself trusts those pairs less than before.
    def confidence_of(m):
        scored = suggest(m, ids, texts, min_confidence=0.0)
        table = dict(zip(zip(scored.query_ids.tolist(), scored.tag_ids.tolist(), strict=True),
                         scored.confidence.tolist(), strict=True))
        return np.mean([table[pair] for pair in refused])

    assert confidence_of(relearned) < confidence_of(model)


def test_a_tag_under_ten_queries_is_never_suggested():
    rows = themed_queries(1200, seed=3)
    queries = tagged(rows[:400])
    sparse_tag = [TaggedQuery(5000 + i, f"rare{i} zzz{i % 3} qqq", "en", (77,)) for i in range(9)]
    ten_tag = [TaggedQuery(6000 + i, f"often{i} yyy{i % 3} www", "en", (88,)) for i in range(10)]
    model = learn(queries + sparse_tag + ten_tag)
    assert 77 not in model.tag_ids.tolist() and model.too_few == {77: 9}
    assert 88 in model.tag_ids.tolist()
    texts = ["rare1 zzz1 qqq", "rare4 zzz1 qqq"] + [r[1] for r in rows[400:]]
    found = suggest(model, range(len(texts)), texts, min_confidence=0.0)
    assert 77 not in found.tag_ids.tolist()


def test_with_no_tag_of_ten_queries_there_is_nothing_to_suggest():
    model = learn([TaggedQuery(i, f"query {i}", "en", (1 + i % 2,)) for i in range(12)])
    assert not model.ready and model.too_few == {1: 6, 2: 6} and model.learned_from == 12
    assert len(suggest(model, [1, 2], ["query 1", "query 2"], min_confidence=0.0)) == 0


def test_the_same_queries_in_any_order_learn_the_same_model():
    rows = themed_queries(800, seed=5)
    queries = tagged(rows[:300])
    shuffled = queries[:]
    random.Random(1).shuffle(shuffled)
    one, two = learn(queries), learn(shuffled)
    assert one.default_confidence == two.default_confidence
    assert one.held_back_right == two.held_back_right
    assert np.array_equal(one.weights, two.weights) and np.array_equal(one.columns, two.columns)
    texts = [r[1] for r in rows[300:]]
    a = suggest(one, range(len(texts)), texts, min_confidence=0.0)
    b = suggest(two, range(len(texts)), texts, min_confidence=0.0)
    assert np.array_equal(a.tag_ids, b.tag_ids) and np.array_equal(a.confidence, b.confidence)


def test_a_saved_model_scores_the_same_and_loads_no_code(generated, tmp_path):
    _, rest, model = generated
    saved = io.BytesIO()
    model.save(saved)
    saved.seek(0)
    loaded = Model.load(saved)
    assert (loaded.learned_from, loaded.held_back, loaded.held_back_right,
            loaded.default_confidence) == (model.learned_from, model.held_back,
                                           model.held_back_right, model.default_confidence)
    texts = [r[1] for r in rest[:200]]
    a = suggest(model, range(200), texts, min_confidence=0.0)
    b = suggest(loaded, range(200), texts, min_confidence=0.0)
    assert np.array_equal(a.confidence, b.confidence) and np.array_equal(a.tag_ids, b.tag_ids)

    # A file holding Python objects is refused, not unpickled.
    hostile = tmp_path / "model.npz"
    np.savez(hostile, format=np.array([object()], dtype=object))
    with open(hostile, "rb") as file, pytest.raises(ValueError):
        Model.load(file)


# A few intents as public sets have them (banking, weather, alarms, music), in three
# languages, each query made of a phrasing and a filler: shaped like CLINC150 or MASSIVE.
INTENTS = {
    "balance": {
        "en": ["what is my {x} balance", "how much money is in my {x} account",
               "show the balance of my {x} account", "check {x} balance"],
        "de": ["wie hoch ist mein {x} kontostand", "wie viel geld ist auf meinem {x} konto",
               "zeig den kontostand von {x}", "{x} kontostand prüfen"],
        "es": ["cuál es el saldo de mi cuenta {x}", "cuánto dinero hay en mi cuenta {x}",
               "muestra el saldo de {x}", "consultar saldo {x}"],
    },
    "weather": {
        "en": ["will it rain in {x} tomorrow", "what is the weather in {x}",
               "forecast for {x} this weekend", "is it sunny in {x}"],
        "de": ["wird es morgen in {x} regnen", "wie ist das wetter in {x}",
               "wettervorhersage für {x} am wochenende", "scheint in {x} die sonne"],
        "es": ["va a llover en {x} mañana", "qué tiempo hace en {x}",
               "pronóstico para {x} este fin de semana", "hace sol en {x}"],
    },
    "alarm": {
        "en": ["set an alarm for {x}", "wake me up at {x}", "cancel my {x} alarm",
               "alarm at {x} please"],
        "de": ["stell einen wecker für {x}", "weck mich um {x}", "lösche meinen wecker um {x}",
               "wecker um {x} bitte"],
        "es": ["pon una alarma a las {x}", "despiértame a las {x}", "cancela mi alarma de las {x}",
               "alarma a las {x} por favor"],
    },
    "music": {
        "en": ["play some {x} music", "put on songs by {x}", "play the latest {x} album",
               "i want to hear {x}"],
        "de": ["spiel etwas {x} musik", "spiel lieder von {x}", "spiel das neue album von {x}",
               "ich möchte {x} hören"],
        "es": ["pon música {x}", "reproduce canciones de {x}", "pon el último disco de {x}",
               "quiero escuchar {x}"],
    },
}
FILLERS = {
    "balance": ["checking", "savings", "joint", "business", "main", "student"],
    "weather": ["paris", "berlin", "madrid", "london", "rome", "lisbon"],
    "alarm": ["6 am", "7:30", "noon", "5 pm", "8", "half past six"],
    "music": ["jazz", "rock", "beyonce", "queen", "classical", "shakira"],
}


def intent_queries():
    rows = []
    for intent, by_language in INTENTS.items():
        for language, phrasings in by_language.items():
            for phrasing in phrasings:
                for filler in FILLERS[intent]:
                    rows.append((phrasing.format(x=filler), language, intent))
    random.Random(49).shuffle(rows)
    names = {intent: i for i, intent in enumerate(sorted(INTENTS), start=1)}
    return [(i, text, language, names[intent]) for i, (text, language, intent) in
            enumerate(rows, start=1)]


def test_a_multilingual_intent_set_learned_from_a_fifth_of_it():
    rows = intent_queries()
    cut = len(rows) // 5
    model = learn([TaggedQuery(q, text, language, (tag,)) for q, text, language, tag in
                   rows[:cut]])
    assert model.learned_from == cut and len(model.tag_ids) == 4
    assert model.held_back_right >= 0.97
    rest = rows[cut:]
    found = suggest(model, [r[0] for r in rest], [r[1] for r in rest])
    intent = {r[0]: r[3] for r in rest}
    right = np.mean([intent[q] == t for q, t in zip(found.query_ids.tolist(),
                                                      found.tag_ids.tolist(), strict=True)])
    assert right >= 0.97
    given = len(set(found.query_ids.tolist())) / len(rest)
    assert given >= 0.85
    for language in ("en", "de", "es"):
        of_language = [r[0] for r in rest if r[2] == language]
        assert set(of_language) & set(found.query_ids.tolist()), language


def test_learning_is_told_its_settings():
    rows = themed_queries(400, seed=9)
    strict = learn(tagged(rows), settings=Settings(min_queries=1000))
    assert not strict.ready and sum(strict.too_few.values()) == 400


def test_texts_are_split_into_their_own_words_whatever_they_hold():
    from service.suggestions.features import FeatureShape, texts_of

    batch = texts_of(["", "Hello, world", "x\x1fy", "!!!", "hello HELLO"], FeatureShape())
    holds = batch.holds.toarray()
    assert holds.shape[0] == 5
    assert holds[0].sum() == 0 and holds[3].sum() == 0
    assert holds[1].sum() == 2 and holds[2].sum() == 2
    assert holds[4].max() == 2  # one distinct word, twice
    assert texts_of([], FeatureShape()).holds.shape[0] == 0


def test_a_sample_keeps_every_query_of_a_small_tag_and_a_share_of_a_large_one():
    settings = Settings(most_learned_from=10_000, least_per_tag=1_000)
    rng = np.random.default_rng(49)
    large = BitMap(rng.choice(3_000_000, 400_000, replace=False).astype(np.uint32))
    middle = BitMap(range(5_000_000, 5_003_000))  # under its share: all of it
    small = BitMap(range(7_000_000, 7_000_030, 3))
    by_tag = {1: large, 2: middle, 3: small}
    chosen = sample(by_tag, settings)
    share = settings.most_learned_from // 3
    assert abs(len(chosen & large) - share) <= 0.05 * share
    assert middle <= chosen and small <= chosen
    assert chosen <= large | middle | small
    assert sample(by_tag, settings) == chosen  # the same each time
    # Keys spread over the whole range, not the first ones.
    kept = np.frombuffer((chosen & large).to_array(), dtype=np.uint32)
    assert kept.min() < 100_000 and kept.max() > 2_900_000
    # Many tags: each keeps at least least_per_tag.
    many = {tag: BitMap(range(tag * 100_000, tag * 100_000 + 20_000)) for tag in range(40)}
    chosen = sample(many, settings)
    assert all(len(chosen & keys) >= 0.95 * settings.least_per_tag for keys in many.values())
