"""The demo data generator: realistic, distinct, deterministic queries and uneven tagging."""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import unicodedata
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from service.demo import demo_data
from service.demo.demo_data import PROJECTS, TAGS, assign_tags, generate_queries

PLAUSIBLE_PAIRS = {
    "en": {"US", "GB", "IE", "AU", "CA"},
    "de": {"DE", "AT", "CH"},
    "fr": {"FR", "BE", "CA", "CH"},
    "es": {"ES", "MX", "AR"},
    "it": {"IT", "CH"},
    "nl": {"NL", "BE"},
    "pl": {"PL"},
    "pt": {"BR", "PT"},
    "sv": {"SE"},
}
QUESTION_STARTS = {"how", "what", "where", "wie", "wo", "welche", "comment", "où", "cómo",
                   "dónde", "come", "dove", "hoe", "waar", "como", "onde", "hur", "var"}


@pytest.fixture(scope="module")
def sample() -> list[tuple[str, str, str]]:
    return list(generate_queries(20_000, seed=3))


# --- PROJECTS and TAGS ----------------------------------------------------------------------


def test_projects_are_three_distinct_names():
    assert len(PROJECTS) == 3
    assert len(set(PROJECTS)) == 3
    assert all(isinstance(p, str) and p.strip() == p and p for p in PROJECTS)


def _lab(colour: str) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_tags_have_distinct_names_and_distinguishable_colours():
    assert 18 <= len(TAGS) <= 22
    names = [name for name, _colour in TAGS]
    colours = [colour for _name, colour in TAGS]
    assert all(isinstance(n, str) and n == n.strip() and n for n in names)
    assert len({n.casefold() for n in names}) == len(names)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in colours), colours
    assert len(set(colours)) == len(colours)
    closest = min(math.dist(_lab(a), _lab(b)) for a, b in itertools.combinations(colours, 2))
    assert closest > 20, f"two tag colours are hard to tell apart (ΔE {closest:.1f})"
    lightness = [_lab(c)[0] for c in colours]
    assert sum(L > 70 for L in lightness) >= 5, "want light chips (dark text)"
    assert sum(L < 45 for L in lightness) >= 5, "want dark chips (light text)"


def test_tags_include_the_usual_staff_vocabulary():
    names = {name for name, _colour in TAGS}
    assert {"brand", "question", "navigational", "transactional", "informational"} <= names


# --- the vocabulary files ------------------------------------------------------------------

WORDS = resources.files("service.demo") / "demo_words"
ENTRY_LISTS = ("products", "adjectives", "colours", "audiences", "audiences_before",
               "shoe_sizes", "clothing_sizes", "extras", "prices", "purposes", "questions",
               "fixed", "support", "navigation", "local", "gifts", "recipients", "versus",
               "model_suffixes", "references")
REQUIRED_LISTS = set(ENTRY_LISTS) - {"audiences_before"}


def _strict_object(pairs: list[tuple[str, object]]) -> dict:
    keys = [key for key, _value in pairs]
    duplicated = {key for key in keys if keys.count(key) > 1}
    assert not duplicated, f"a key given twice (JSON keeps only the last): {duplicated}"
    return dict(pairs)


def _read(name: str) -> dict:
    return json.loads((WORDS / f"{name}.json").read_text(encoding="utf-8"),
                      object_pairs_hook=_strict_object)


def _words(value: object) -> bool:
    """A non-empty list of non-empty strings without surrounding blanks."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(w, str) and w and w == w.strip() for w in value))


def test_common_vocabulary_file_has_the_expected_shape():
    common = _read("common")
    languages = common["language_weights"]
    assert set(languages) == set(PLAUSIBLE_PAIRS)
    assert {name.removesuffix(".json") for name in os.listdir(str(WORDS))
            if name.endswith(".json")} == set(languages) | {"common"}
    assert list(common["country_weights"]) == list(languages)
    for language, countries in common["country_weights"].items():
        assert set(countries) == PLAUSIBLE_PAIRS[language]
        assert all(isinstance(w, int) and w > 0 for w in countries.values())
        for country in countries:
            assert _words(common["amounts"][common["currency"][country]])
    for name in ("own_brands", "competitor_brands", "model_lines", "model_numbers", "years"):
        assert _words(common[name]), name
        assert len(set(common[name])) == len(common[name]), f"{name} repeat an entry"
    # Brands are told apart by name: an own brand must never count as a competitor's.
    assert not set(common["own_brands"]) & set(common["competitor_brands"])
    tag_names = {name for name, _colour in TAGS}
    assert set(common["tag_words"]) <= tag_names
    assert all(_words(words) for words in common["tag_words"].values())


@pytest.mark.parametrize("language", sorted(PLAUSIBLE_PAIRS))
def test_language_vocabulary_file_has_the_expected_shape(language):
    data = _read(language)
    countries = PLAUSIBLE_PAIRS[language]
    assert set(data) <= demo_data._VOCABULARY_KEYS
    genders = data["genders"]
    assert _words(genders) and len(set(genders)) == len(genders), "genders are told by name"
    assert data["articles"] == [] or len(data["articles"]) == len(genders)
    assert isinstance(data["best"], str) and data["best"]
    assert 0 <= data["pre_ratio"] <= 1
    assert 0 <= data.get("audience_before_ratio", 0) <= 1
    for key in REQUIRED_LISTS:
        assert _words(data[key]), f"{language}: {key}"
    assert set(data["cities"]) == countries
    assert all(_words(cities) for cities in data["cities"].values())
    assert set(data.get("country_phrase", {})) <= countries
    assert set(data["tag_words"]) <= {name for name, _colour in TAGS}
    assert all(_words(words) for words in data["tag_words"].values())
    for entry in data["products"]:
        text, gender, kind = entry.partition("@")[0].split("|")
        assert text and gender in genders and kind in demo_data._KINDS, entry
    # Every country's lists are non-empty and draw each entry once (a repeat would only
    # weigh it double), and every "@" marker names a country of the language.
    for key in ENTRY_LISTS:
        for entry in data.get(key, []):
            if "@" in entry:
                assert set(entry.rpartition("@")[2].split(",")) <= countries, entry
        for country in countries:
            entries = demo_data._entries(data.get(key, []), country)
            assert len(set(entries)) == len(entries), f"{language}-{country}: {key} repeats"
            assert entries or key not in REQUIRED_LISTS, f"{language}-{country}: no {key}"


def test_vocabularies_load_from_any_working_directory(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    script = "from service.demo import demo_data as d; print(len(d._CONTEXTS), len(d._KEYWORDS))"
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    pairs = sum(len(countries) for countries in PLAUSIBLE_PAIRS.values())
    assert result.stdout.split() == [str(pairs), str(len(PLAUSIBLE_PAIRS))]


# --- generate_queries -----------------------------------------------------------------------


def test_yields_n_string_triples():
    items = list(generate_queries(1000))
    assert len(items) == 1000
    assert all(isinstance(x, tuple) and len(x) == 3 and all(isinstance(s, str) for s in x)
               for x in items)
    assert list(generate_queries(0)) == []


def test_negative_count_is_rejected():
    with pytest.raises(ValueError):
        generate_queries(-1)


def test_streams_lazily():
    # A huge n costs nothing until items are taken.
    first = list(itertools.islice(generate_queries(10**12, seed=5), 3))
    assert first == list(generate_queries(3, seed=5))


def test_200k_items_are_distinct():
    items = list(generate_queries(200_000, seed=11))
    assert len(items) == 200_000
    assert len(set(items)) == 200_000


def test_distinct_even_when_one_pair_is_worked_hard(monkeypatch):
    # Every item in one (language, country): the small shapes run out and the generator
    # must still find new, plausible texts.
    index = next(i for i, c in enumerate(demo_data._CONTEXTS) if c.language == "sv")
    monkeypatch.setattr(demo_data, "_PAIR_TABLE", (index,))
    items = list(generate_queries(150_000, seed=2))
    assert len(set(items)) == 150_000
    assert {(language, country) for _q, language, country in items} == {("sv", "SE")}


def test_languages_and_countries_are_varied_and_plausible(sample):
    first = sample[:1000]
    assert len({language for _q, language, _c in first}) >= 6
    assert len({country for _q, _l, country in first}) >= 10
    for _query, language, country in sample:
        assert re.fullmatch(r"[a-z]{2}", language)
        assert re.fullmatch(r"[A-Z]{2}", country)
        assert country in PLAUSIBLE_PAIRS[language], (language, country)


def test_early_items_mix_languages():
    first = [language for _q, language, _c in generate_queries(50, seed=0)]
    counts = Counter(first)
    assert len(counts) >= 4
    assert counts.most_common(1)[0][1] <= 30


def test_language_shares_follow_realistic_weights(sample):
    shares = Counter(language for _q, language, _c in sample)
    total = len(sample)
    assert 0.25 < shares["en"] / total < 0.35
    assert 0.16 < shares["de"] / total < 0.24
    assert shares["en"] > shares["de"] > shares["it"] > shares["sv"]


def test_deterministic_for_a_seed_and_different_across_seeds():
    a = list(generate_queries(5000, seed=42))
    assert a == list(generate_queries(5000, seed=42))
    b = list(generate_queries(5000, seed=43))
    assert a != b
    assert len(set(a) & set(b)) < 2500


def test_texts_use_their_languages_letters(sample):
    for language in ("de", "fr", "es", "pl"):
        texts = [q for q, lang, _c in sample if lang == language]
        accented = [q for q in texts if any(ord(ch) > 127 and ch.isalpha() for ch in q)]
        assert len(accented) / len(texts) > 0.15, language
    german = " ".join(q for q, lang, _c in sample if lang == "de")
    assert "ß" in german and "ü" in german
    swiss = [q for q, lang, country in sample if lang == "de" and country == "CH"]
    assert swiss and not any("ß" in q for q in swiss), "Swiss German writes ss"


def test_regional_words_stay_in_their_countries(sample):
    def countries_using(word: str) -> set[str]:
        return {c for q, _l, c in sample if word in q.split()}

    assert countries_using("trainers") <= {"GB", "IE"}
    assert countries_using("chamarra") <= {"MX"}
    assert countries_using("campera") <= {"AR"}
    assert countries_using("tênis") <= {"BR"}


def test_texts_are_clean_and_look_typed(sample):
    for query, _language, _country in sample:
        assert not re.search(r"query \d+", query)
        assert not any(unicodedata.category(ch).startswith("C") for ch in query), query
        assert 1 <= len(query) <= 200
        assert query == query.strip() and "  " not in query
        assert query == query.lower()
        assert "{" not in query and "}" not in query
        assert unicodedata.is_normalized("NFC", query)


def test_shapes_vary(sample):
    words = [len(q.split()) for q, _l, _c in sample]
    assert min(words) == 1
    assert max(words) >= 8
    assert 3 <= statistics.median(words) <= 6
    texts = [q for q, _l, _c in sample]
    assert any(q.split()[0] in QUESTION_STARTS for q in texts)
    assert any(q.endswith(" login") for q in texts)
    assert sum(any(ch.isdigit() for ch in q) for q in texts) / len(texts) > 0.1


# --- assign_tags ----------------------------------------------------------------------------


def _tagged(n: int, seed: int) -> list[tuple[str, list[int]]]:
    rng = random.Random(seed)
    return [(query, assign_tags(index, query, language, country, rng))
            for index, (query, language, country) in enumerate(generate_queries(n, seed))]


def test_tag_distribution_is_uneven_like_real_tagging():
    tagged = _tagged(20_000, seed=9)
    untagged = sum(not tags for _q, tags in tagged) / len(tagged)
    assert 0.25 <= untagged <= 0.45
    counts = Counter(tag for _q, tags in tagged for tag in tags)
    usage = [counts[index] for index in range(len(TAGS))]
    assert max(usage) >= 5 * statistics.median(usage)
    sizes = Counter(len(tags) for _q, tags in tagged)
    assert sizes[2] + sizes[3] > 0.1 * len(tagged)
    assert max(sizes) <= 3


def test_tag_indices_are_valid_and_unique_per_query():
    for _query, tags in _tagged(20_000, seed=4):
        assert all(isinstance(t, int) and 0 <= t < len(TAGS) for t in tags)
        assert len(set(tags)) == len(tags)


def test_tags_follow_the_words_where_obvious():
    names = [name for name, _colour in TAGS]
    brand, question = names.index("brand"), names.index("question")
    brand_words = set(demo_data._BRANDS)
    tagged = _tagged(20_000, seed=6)
    with_brand = [tags for q, tags in tagged if q.split()[0] in brand_words]
    with_question = [tags for q, tags in tagged if q.split()[0] in QUESTION_STARTS]
    assert sum(brand in t for t in with_brand) / len(with_brand) > 0.45
    assert sum(question in t for t in with_question) / len(with_question) > 0.45


def test_tagging_is_deterministic_for_an_rng():
    assert _tagged(2000, seed=1) == _tagged(2000, seed=1)
