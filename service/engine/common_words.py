"""The words and two-word phrases most of a view's queries share (queries/words).

Candidates come from an evenly spread sample of the view's queries (SAMPLED of them, all of a
smaller view): each text folded (engine/folding.py), cut at its spaces, each word stripped of
the punctuation around it; words of one or two characters and the stop words of the view's
languages (stop_words/<language>.txt) are left out. A phrase is two such words side by side
in a text, one space between them. The candidates met most in the
sample are then counted exactly over the whole view: a word's or phrase's count is the number
of the view's queries whose text contains it, as the text filter finds it (engine/counting.py,
Counter.text), so that a filter by it shows that many queries. Those bitmaps are kept per
process while the project's texts stay as they are.
"""

from __future__ import annotations

import string
from collections import Counter as Tally
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pyroaring import BitMap
from sqlalchemy import select

from . import folding, kinds
from .counting import Counter, Filter
from .keys import keys_condition
from .tables import Query

# The view's queries whose texts give the candidates.
SAMPLED = 2000
# Words shorter than this are left out: as a text filter, "xl" is in every "axle".
SHORTEST = 3
# What is stripped from either end of a word: ASCII's punctuation and symbols, and the
# quotes, dashes and marks of other scripts.
PUNCTUATION = string.punctuation + "–—‘’‚“”„«»‹›¿¡…·•°€£¥§¶"
# Candidates counted exactly, beyond the number asked for: more find the true first ones
# more often, each costs an intersection (and, the first time, the term's bitmap).
EXTRA_WORDS = 20
EXTRA_PHRASES = 10
# The share of a view's size by which it may have changed and keep its candidates.
RESAMPLED_PAST = 0.02
# A phrase met fewer times than this in a sample of SAMPLED is not counted (unless the view
# is the sample).
PHRASE_SEEN = 2
_STOP_WORDS = resources.files(__package__) / "stop_words"


@dataclass(frozen=True)
class Common:
    text: str
    count: int


@cache
def stop_words(language: str) -> frozenset[str]:
    """The stop words of a language code ("de", "pt-BR": "pt"), folded; none when the
    repository keeps no list for it."""
    name = language.split("-")[0].lower()
    if not name.isalpha():
        return frozenset()
    found = _STOP_WORDS / f"{name}.txt"
    if not found.is_file():
        return frozenset()
    return frozenset(folding.fold(line.strip()) for line in found.read_text("utf-8").splitlines()
                     if line.strip())


def sample(keys: BitMap) -> BitMap:
    """At most SAMPLED of the keys, evenly spread over them (all of them when fewer)."""
    return keys[::-(-len(keys) // SAMPLED)] if len(keys) > SAMPLED else keys


def view_languages(counter: Counter, matched: BitMap) -> list[str]:
    return [value for value in counter.held.values(kinds.LANGUAGE)
            if matched.intersection_cardinality(counter.held.bitmap(kinds.LANGUAGE, value))]


def candidates(texts: list[str], stopped: frozenset[str]) -> tuple[Tally, Tally]:
    """(words, phrases): how many of the texts hold each."""
    words: list[str] = []
    phrases: list[str] = []
    # Folded at once (NUL is in no text: weblib.text_rules).
    for folded in folding.fold("\0".join(texts)).split("\0"):
        bare = [word.strip(PUNCTUATION) for word in folded.split(" ")]
        kept = [word if len(word) >= SHORTEST and word not in stopped else "" for word in bare]
        words += set(kept)
        # As the text holds them: "shoes, bags" has no phrase "shoes bags".
        phrases += {phrase for first, second in zip(kept, kept[1:], strict=False)
                    if first and second and (phrase := f"{first} {second}") in folded}
    counted = Tally(words)
    del counted[""]
    return counted, Tally(phrases)


def common_words(counter: Counter, wanted: Filter, limit: int
                 ) -> tuple[int, tuple[Common, ...], tuple[Common, ...]]:
    """(the view's size, words, phrases): the `limit` words and phrases that most of the
    view's queries contain, most first (then by text), with exact counts. Kept until the
    project's next write (a panel opened again asks the same)."""
    at = counter.at
    key = (counter.project_id, at.epoch, at.stamp, at.texts_stamp, "words", wanted, limit,
           SAMPLED)
    return counter.store.term(key, lambda: _common_words(counter, wanted, limit))


def _common_words(counter: Counter, wanted: Filter, limit: int
                  ) -> tuple[int, tuple[Common, ...], tuple[Common, ...]]:
    matched = counter.matches(wanted)
    if not matched:
        return 0, (), ()
    word_list, phrase_list = _candidates_of(counter, wanted, matched, limit)
    return (len(matched), _counted(counter, matched, word_list, limit),
            _counted(counter, matched, phrase_list, limit))


def _candidates_of(counter: Counter, wanted: Filter, matched: BitMap, limit: int
                   ) -> tuple[list[str], list[str]]:
    """The words and phrases to count: those met most in the sample. For a view larger than
    the sample, kept while the project's texts stay as they are and the view's size within
    RESAMPLED_PAST of what it was (after a few queries were tagged, the view's candidates are
    the same; their counts are made anew)."""
    at = counter.at
    key = (counter.project_id, at.epoch, at.texts_stamp, "word candidates", wanted, limit,
           SAMPLED)
    size = len(matched)
    kept = counter.store.remembered(key)
    if kept is not None and size > SAMPLED and abs(kept[0] - size) <= size * RESAMPLED_PAST:
        return kept[1], kept[2]
    keys = sample(matched)
    rows = counter.session.execute(select(Query.query).where(
        keys_condition(counter.session, Query.pk, list(keys)))).scalars().all()
    stopped = frozenset().union(*(stop_words(language)
                                  for language in view_languages(counter, matched)))
    words, phrases = candidates(rows, stopped)
    everything = len(keys) == size
    word_list = [word for word, _seen in words.most_common(limit + EXTRA_WORDS)]
    phrase_list = [phrase for phrase, seen in phrases.most_common(limit + EXTRA_PHRASES)
                   if everything or seen >= PHRASE_SEEN]
    counter.store.remember(key, (size, word_list, phrase_list))
    return word_list, phrase_list


def _counted(counter: Counter, matched: BitMap, texts: list[str], limit: int
             ) -> tuple[Common, ...]:
    counted = [Common(text, matched.intersection_cardinality(counter.text(text)))
               for text in texts]
    counted.sort(key=lambda item: (-item.count, item.text))
    return tuple(item for item in counted[:limit] if item.count)
