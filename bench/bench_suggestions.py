"""How right suggested tags are, how many queries they reach, and how fast they learn and
score (service/suggestions/, docs/benchmarks.md).

Quality: public, human-labelled sets of short texts, each shuffled with a fixed seed; 20 % of
its texts are taken as tagged, the model learns from them, and the other 80 % are scored. At
the model's default confidence: the share of suggestions right and the share of the other
texts given one; then the curve at fixed confidences, beside a baseline of TF-IDF on words
with one-vs-rest logistic regression (its default confidence chosen the same way).
The settings were tuned on the dev set only; the held-out sets were measured once after.

- dev: emoji names in English with their Unicode group (npm emojibase-data, CLDR names)
- held-out: chatterbot-corpus's English lines with their topic (PyPI chatterbot-corpus)
- held-out: emoji names in German, French, Spanish, Japanese and Korean, with their group
- held-out: chatterbot-corpus lines in Italian, Portuguese, Spanish and Ukrainian

The data come from the registries when this runs (never when the service runs):

    uv run --with chatterbot-corpus python bench/bench_suggestions.py --quality
    flock /tmp/team/bench.lock uv run python bench/bench_suggestions.py --speed 1000000
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.suggestions.learning import Settings, TaggedQuery, learn  # noqa: E402
from service.suggestions.measuring import lowest_confidence_right  # noqa: E402
from service.suggestions.scoring import suggest  # noqa: E402

SEED = 49
TAGGED_SHARE = 0.2
CURVE = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98]
EMOJIBASE = "emojibase-data@17.0.0"

Labelled = list[tuple[str, str, str]]  # text, language, label


def emoji_names(languages: list[str]) -> Labelled:
    """CLDR's short names of emoji, labelled by their Unicode group (flags and components
    left out: their names say their group)."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["npm", "pack", EMOJIBASE, "--pack-destination", folder],
                       check=True, capture_output=True)
        archive = next(Path(folder).glob("*.tgz"))
        with tarfile.open(archive) as tar:
            groups = {g["order"]: g["key"] for g in json.load(
                tar.extractfile("package/en/messages.json"))["groups"]}
            rows = []
            for language in languages:
                for emoji in json.load(tar.extractfile(f"package/{language}/data.json")):
                    group = groups.get(emoji.get("group"))
                    if group and group not in ("flags", "component") and emoji.get("label"):
                        rows.append((emoji["label"], language, group))
    return rows


def chatterbot_lines(languages: list[str]) -> Labelled:
    """Every line of chatterbot-corpus's conversations, labelled by its topic file."""
    from importlib.resources import files

    import yaml

    rows, seen = [], set()
    for language in languages:
        for path in sorted((files("chatterbot_corpus") / "data" / language).iterdir()):
            if not path.name.endswith(".yml"):
                continue
            document = yaml.safe_load(io.StringIO(path.read_text(encoding="utf-8")))
            topic = path.name.removesuffix(".yml")
            for conversation in document.get("conversations") or []:
                for line in conversation:
                    text = str(line).strip()
                    if text and (text, topic) not in seen and len(text) <= 200:
                        seen.add((text, topic))
                        rows.append((text, language, topic))
    return rows


def split(rows: Labelled):
    """Texts grouped (a text may carry several labels), shuffled, 20 % of them tagged."""
    labels: dict[tuple[str, str], set[str]] = defaultdict(set)
    for text, language, label in rows:
        labels[(text, language)].add(label)
    items = sorted(labels.items())
    random.Random(SEED).shuffle(items)
    names = {name: i for i, name in enumerate(sorted({lab for _, labs in items for lab in labs}))}
    queries = [(i, text, language, tuple(sorted(names[x] for x in labs)))
               for i, ((text, language), labs) in enumerate(items)]
    cut = int(len(queries) * TAGGED_SHARE)
    return queries[:cut], queries[cut:]


def ours(tagged, rest):
    model = learn([TaggedQuery(*query) for query in tagged])
    found = suggest(model, [q[0] for q in rest], [q[1] for q in rest], min_confidence=0.0)
    return model.default_confidence, found.query_ids, found.tag_ids, found.confidence


def baseline(tagged, rest):
    """TF-IDF on words, one logistic regression a label; its default confidence is chosen
    as ours is: the lowest right 97 % of the time on a held-back fifth of the tagged."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer

    def fit(part):
        labels = MultiLabelBinarizer().fit([q[3] for q in part])
        vectorizer = TfidfVectorizer().fit([q[1] for q in part])
        classifier = OneVsRestClassifier(LogisticRegression(max_iter=1000)).fit(
            vectorizer.transform([q[1] for q in part]), labels.transform([q[3] for q in part]))
        return lambda texts: (classifier.predict_proba(vectorizer.transform(texts)),
                              labels.classes_)

    cut = int(len(tagged) * 0.8)
    predict = fit(tagged[:cut])
    held = tagged[cut:]
    probability, classes = predict([q[1] for q in held])
    right = np.array([[c in q[3] for c in classes] for q in held])
    floor = probability.ravel() >= Settings().lowest_default
    default = lowest_confidence_right(probability.ravel()[floor], right.ravel()[floor],
                                      0.97).confidence
    probability, classes = fit(tagged)([q[1] for q in rest])
    rows, columns = np.nonzero(probability >= 0.0)
    return (default, np.array([rest[r][0] for r in rows]), classes[columns],
            probability[rows, columns])


def report(name, tagged, rest, outcome):
    default, query_ids, tag_ids, confidence = outcome
    truth = {q[0]: set(q[3]) for q in rest}
    right = np.array([t in truth[q] for q, t in zip(query_ids.tolist(), tag_ids.tolist(),
                                                     strict=True)], dtype=bool)

    def at(threshold):
        chosen = confidence >= threshold
        share = right[chosen].mean() * 100 if chosen.any() else float("nan")
        return share, len(np.unique(query_ids[chosen])) / len(rest) * 100

    share, given = at(default)
    print(f"  {name:<9} default {default:.3f}: right {share:5.1f} %, given {given:5.1f} %  "
          + "  ".join(f"{t:.2f}: {s:5.1f}/{g:5.1f}" for t, (s, g) in
                      ((t, at(t)) for t in CURVE)))


def quality(sets) -> None:
    print(f"Quality, {TAGGED_SHARE:.0%} of each set tagged; 'c: right/given' in % at confidence c")
    for role, name, rows in sets:
        tagged, rest = split(rows)
        labels = {lab for q in tagged for lab in q[3]}
        print(f"{role} {name}: {len(tagged) + len(rest)} texts, {len(labels)} labels, "
              f"{len({q[2] for q in tagged})} languages; {len(tagged)} tagged")
        start = time.perf_counter()
        report("ours", tagged, rest, ours(tagged, rest))
        report("baseline", tagged, rest, baseline(tagged, rest))
        print(f"  ({time.perf_counter() - start:.1f} s)")


def generated(count: int, tags: int, seed: int):
    """Queries of a theme's words among common ones, one theme a query."""
    rng = np.random.default_rng(seed)
    themes = [[f"{chr(97 + t % 26)}{t}word{i}" for i in range(40)] for t in range(tags)]
    common = [f"common{i}" for i in range(3000)]
    theme_of = rng.integers(0, tags, count)
    texts = []
    for theme in theme_of.tolist():
        words = [themes[theme][i] for i in rng.integers(0, 40, 2)]
        words += [common[i] for i in rng.integers(0, 3000, rng.integers(1, 4))]
        texts.append(" ".join(words))
    return texts, theme_of


def speed(count: int, tags: int) -> None:
    texts, theme_of = generated(count, tags, SEED)
    tagged_count = int(count * TAGGED_SHARE)
    queries = [TaggedQuery(i, texts[i], "en", (int(theme_of[i]),)) for i in range(tagged_count)]
    start = time.perf_counter()
    model = learn(queries, settings=Settings())
    learned = time.perf_counter() - start
    carried = np.arange(tagged_count, dtype=np.int64)
    from service.suggestions.scoring import Pairs

    start = time.perf_counter()
    found = suggest(model, np.arange(count), texts,
                    carried=Pairs(carried, theme_of[:tagged_count].astype(np.int64)))
    scored = time.perf_counter() - start
    untagged = found.query_ids >= tagged_count
    right = (theme_of[found.query_ids[untagged]] == found.tag_ids[untagged]).mean()
    given = len(np.unique(found.query_ids[untagged])) / (count - tagged_count)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"speed: {count:,} queries, {tagged_count:,} tagged, {tags} tags")
    print(f"  learn {learned:.1f} s (held back {model.held_back:,}, "
          f"{model.held_back_right:.1%} right at {model.default_confidence:.3f})")
    print(f"  score {scored:.1f} s: {len(found):,} suggestions, {right:.1%} right, "
          f"{given:.1%} of untagged given one")
    print(f"  total {learned + scored:.1f} s, peak memory {peak:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--dev-only", action="store_true", help="only the set tuned on")
    parser.add_argument("--speed", type=int, metavar="QUERIES")
    parser.add_argument("--tags", type=int, default=50)
    arguments = parser.parse_args()
    if arguments.quality:
        sets = [("dev", "emoji names (en)", emoji_names(["en"]))]
        if not arguments.dev_only:
            sets += [
                ("held-out", "chatterbot (en)", chatterbot_lines(["english"])),
                ("held-out", "emoji names (de fr es ja ko)",
                 emoji_names(["de", "fr", "es", "ja", "ko"])),
                ("held-out", "chatterbot (it pt es uk)",
                 chatterbot_lines(["italian", "portuguese", "spanish", "ukrainian"])),
            ]
        quality(sets)
    if arguments.speed:
        speed(arguments.speed, arguments.tags)


if __name__ == "__main__":
    main()
