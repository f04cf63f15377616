"""The language of each query of an import, told from its words, for files with no language
column (Search Console, Ahrefs, Keyword Planner exports).

The detector is py3langid (a naive Bayes model of byte n-grams, langid.py's), limited to the
languages the administrator ticked: its model ships in the package, nothing is downloaded,
and it tells short keyword queries apart at more than 20,000 a second
(bench/bench_language_detection.py, docs/decisions.md). A query whose most likely language
among them is not sure enough (`least_probability`) is not told: it gets the language for
every row (`Detection.relabel`), and the tally says how many did (`Tally.sentence`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import islice

from babel import Locale
from py3langid.langid import MODEL_FILE, LanguageIdentifier

# The probability (among the languages ticked) a query's likeliest language needs to count as
# told; under it, the query falls back. Chosen with the bench: at 0.8 among six languages, of
# the hand-labelled queries 83 % are told right, 0.4 % wrong and 16 % fall back (brand names
# and the like).
MIN_CONFIDENCE = 0.8
# Odds of the likeliest language against the others together, weighed by how many they are,
# it needs as well: among fewer languages a probability says less ("iphone 15" is 0.81 French
# among German and French), so two need 0.95, three 0.91, six or more MIN_CONFIDENCE.
MIN_ODDS = 20
UNTOLD = "und"  # py3langid's answer under its min_confidence
BATCH_ROWS = 4096  # queries read, detected and written at once
LONGEST = 1000  # a longer query is rejected by the import: not worth detecting
# Offered on the Columns page besides the project's own languages, by their code.
OFFERED = ("de", "en", "es", "fr", "it", "nl", "pt", "pl", "sv", "da", "no", "fi", "cs",
           "tr", "ru", "ja")


@lru_cache(maxsize=1)
def _model() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE)


@cache
def detectable() -> dict[str, str]:
    """The languages the detector knows that have a two-letter code: code → English name
    ("de" → "German")."""
    names = Locale("en").languages
    return {code: names.get(code, code) for code in _model().labels
            if len(code) == 2 and code in names}


def problems(codes: Sequence[str]) -> list[str]:
    """Why these languages cannot be detected among, in sentences ([] if they can)."""
    unknown = [code for code in codes if code not in detectable()]
    if unknown:
        return [f"The language of a query cannot be detected as {', '.join(unknown)}: "
                "choose among " + ", ".join(sorted(detectable())) + "."]
    if len(set(codes)) < 2:
        return ["Choose two languages or more to detect the language of each query among."]
    return []


def default_codes(in_use: Iterable[str], fallback: str = "") -> tuple[str, ...]:
    """The languages detected among when none are ticked: the project's languages so far
    that the detector knows, and the language for every row."""
    codes = {code.strip().lower() for code in (*in_use, fallback)}
    return tuple(sorted(code for code in codes if code in detectable()))


def offered(in_use: Iterable[str]) -> list[tuple[str, str]]:
    """(code, name) of the languages offered to tick: OFFERED and `in_use`, by name."""
    known = detectable()
    codes = {*OFFERED, *(code for code in in_use if code in known)}
    return sorted(((code, known[code]) for code in codes), key=lambda item: item[1])


def least_probability(count: int) -> float:
    """The probability the likeliest of `count` languages needs for a query to be told: its
    odds against the other languages together at least MIN_ODDS to their number less one,
    and never under MIN_CONFIDENCE."""
    return max(MIN_CONFIDENCE, MIN_ODDS / (MIN_ODDS + count - 1))


@lru_cache(maxsize=2)
def _identifier(codes: tuple[str, ...]) -> LanguageIdentifier:
    """An identifier of its own for these languages (set_languages narrows the one it is
    called on): its model loaded anew, about a second, then kept."""
    identifier = LanguageIdentifier.from_model_file(
        MODEL_FILE, norm_probs=True, min_confidence=least_probability(len(codes)))
    identifier.set_languages(list(codes))
    return identifier


def detect(texts: Sequence[str], codes: Sequence[str]) -> list[str | None]:
    """Each text's language among `codes` (two or more the detector knows), or None where it
    cannot be told with confidence."""
    classify = _identifier(tuple(sorted(set(codes)))).classify
    found = []
    for text in texts:
        language, _probability = classify(text)
        found.append(None if language == UNTOLD else language)
    return found


@dataclass
class Tally:
    """How many queries had their language detected (by language), and how many fell back
    to the language for every row."""

    fallback: str
    detected: Counter[str] = field(default_factory=Counter)
    fell_back: int = 0

    def sentence(self) -> str:
        """"Language detected for 1,204 queries (de 800, fr 404); 12 could not be told and
        have de." ("" when no query was looked at)."""
        told = sum(self.detected.values())
        if not told and not self.fell_back:
            return ""
        each = ", ".join(f"{code} {count:,}" for code, count in self.detected.most_common())
        line = f"Language detected for {told:,} quer{'y' if told == 1 else 'ies'}"
        line += f" ({each})" if each else ""
        return (line + f"; {self.fell_back:,} could not be told and "
                f"{'has' if self.fell_back == 1 else 'have'} {self.fallback}.")


class Detection:
    """The languages of an import's rows, detected among `codes`, the fallback for the rest."""

    def __init__(self, codes: Sequence[str], fallback: str) -> None:
        self.codes = tuple(codes)
        self.tally = Tally(fallback)

    def relabel(self, rows: Iterable[list[str] | None], batch: int = BATCH_ROWS
                ) -> Iterator[list[str] | None]:
        """The rows in the import's own shape (query, language, country, tags), in order, the
        language of each with a query set to the one detected (the fallback kept where none
        is told): detected a batch at a time. None (a blank line) passes as it is."""
        rows = iter(rows)
        while chunk := list(islice(rows, batch)):
            wanted = [row for row in chunk
                      if row is not None and row[0].strip() and len(row[0]) <= LONGEST]
            found = detect([row[0] for row in wanted], self.codes) if wanted else []
            for row, language in zip(wanted, found, strict=True):
                if language is None:
                    self.tally.fell_back += 1
                else:
                    row[1] = language
                    self.tally.detected[language] += 1
            yield from chunk
