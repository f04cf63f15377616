"""Demo data for Tagdesk: realistic multilingual search queries and how staff would tag them.

Pure standard library, no database, deterministic for a given seed and fast (a million queries
in about five seconds of CPU). `generate_queries` streams distinct (query, language, country)
triples built combinatorially from per-language shop vocabularies: products with grammatical
gender, agreeing adjectives and audiences, shoe and clothing sizes (children's sizes for
children), prices in the country's currency, how-to and support questions, navigational and
local searches, and regional words ("trainers" in GB, "chamarra" in MX, "grösse" in CH).
The vocabularies are data files in demo_words/, shipped inside the package; this module is
the generator.
Uniqueness is tracked per (language, country) as 64-bit digests, not strings; query shapes whose
combinations run out for a pair are retired, and the rare leftover collision gets a year or a
catalogue number, never a counter. `assign_tags` tags queries unevenly, the way real tagging
work looks.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from importlib import resources
from zlib import adler32 as _adler32
from zlib import crc32 as _crc32

from ..engine.numbers import MICRO

__all__ = ["PROJECTS", "TAGS", "assign_tags", "generate_queries"]

PROJECTS: list[str] = ["Online shop search", "Help centre", "Brand campaigns"]

# Most-used tags first: projects that only take the first few tags still get a useful set.
# Colours are far apart in CIELAB (pairwise ΔE76 > 34) and mix light and dark chips.
TAGS: list[tuple[str, str]] = [
    ("product", "#312e81"),
    ("transactional", "#15803d"),
    ("informational", "#a5f3fc"),
    ("navigational", "#2563eb"),
    ("brand", "#7c3aed"),
    ("question", "#fde047"),
    ("high intent", "#dc2626"),
    ("needs review", "#fb923c"),
    ("long tail", "#d9f99d"),
    ("price", "#064e3b"),
    ("sale", "#be185d"),
    ("seasonal", "#92400e"),
    ("local", "#6ee7b7"),
    ("support", "#f5d0fe"),
    ("shipping", "#fed7aa"),
    ("returns", "#0891b2"),
    ("competitor", "#111827"),
    ("gift", "#e879f9"),
    ("mobile", "#60a5fa"),
    ("new", "#65a30d"),
]

# --- vocabularies ---------------------------------------------------------------------------
# The word lists are data: demo_words/common.json (language and country weights, currencies and
# amounts, brands, model names, years, tag words for every language) and one file a language
# (demo_words/en.json ...). demo_words/README.md describes the notation of their entries.

_WORDS = resources.files(__package__) / "demo_words"
# What a language file may hold: grammar settings, then lists of entries.
_VOCABULARY_KEYS = frozenset({
    "genders", "articles", "pre_ratio", "audience_before_ratio", "best", "products",
    "adjectives", "colours", "audiences", "audiences_before", "shoe_sizes", "clothing_sizes",
    "extras", "prices", "purposes", "questions", "fixed", "country_phrase", "support",
    "navigation", "local", "gifts", "recipients", "versus", "model_suffixes", "references",
    "cities", "tag_words",
})


def _load(name: str) -> dict:
    """One file of demo_words/, read from inside the package (any working directory)."""
    return json.loads((_WORDS / f"{name}.json").read_text(encoding="utf-8"))


def _vocabulary(language: str) -> dict:
    data = _load(language)
    unknown = set(data) - _VOCABULARY_KEYS
    if unknown:
        raise ValueError(f"demo_words/{language}.json: unknown keys {sorted(unknown)}")
    return data


_COMMON = _load("common")
_LANGUAGE_WEIGHTS: dict[str, int] = _COMMON["language_weights"]
_COUNTRY_WEIGHTS: dict[str, dict[str, int]] = _COMMON["country_weights"]
_CURRENCY: dict[str, str] = _COMMON["currency"]
# Amounts people put in price searches, by currency (already written the local way).
_AMOUNTS: dict[str, list[str]] = _COMMON["amounts"]
# Fictional brands: the demo organization's own and its competitors'.
_OWN_BRANDS: tuple[str, ...] = tuple(_COMMON["own_brands"])
_COMPETITOR_BRANDS: tuple[str, ...] = tuple(_COMMON["competitor_brands"])
_BRANDS = _OWN_BRANDS + _COMPETITOR_BRANDS
_MODEL_LINES: tuple[str, ...] = tuple(_COMMON["model_lines"])
_MODEL_NUMBERS: tuple[str, ...] = tuple(_COMMON["model_numbers"])
_YEARS: tuple[str, ...] = tuple(_COMMON["years"])
_LANGUAGES: dict[str, dict] = {language: _vocabulary(language) for language in _LANGUAGE_WEIGHTS}

# --- building the per-(language, country) tables ------------------------------------------------

_SLOT = re.compile(r"\{(\w+)\}")
_SLOTS = {"p", "ap", "ps", "b", "b2", "c", "cn", "r", "n", "y", "pr", "k"}
_KINDS = "SCWABG"


def _entries(items: list[str], country: str) -> list[str]:
    """The entries that apply to `country` ("trainers|p|S@GB,IE": GB and IE only), without
    their "@..." marker."""
    out = []
    for entry in items:
        if "@" in entry:
            entry, _, where = entry.rpartition("@")
            if country not in where.split(","):
                continue
        out.append(entry)
    return out


def _forms(spec: str, size: int) -> tuple[str, ...]:
    """Forms by gender: one form is invariable; 2 of 4 are singular/plural; 3 of 4 are m/f/n=p."""
    parts = spec.split("/")
    if len(parts) == 1:
        return (parts[0],) * size
    if len(parts) == size:
        return tuple(parts)
    if size == 4 and len(parts) == 2:
        return (parts[0], parts[0], parts[1], parts[1])
    if size == 4 and len(parts) == 3:
        return (parts[0], parts[1], parts[2], parts[2])
    raise ValueError(f"cannot spread {spec!r} over {size} genders")


def _adjective(language: str, spec: str, size: int) -> tuple[tuple[str, ...] | None, tuple]:
    """(forms before the noun or None, forms after the noun). German adjectives are stems:
    "günstig" gives günstiger/günstige/günstiges before the noun and stays "günstig" after it,
    "!" marks an invariable one. Dutch ones are "inflected/base" (goedkope jas, goedkoop
    badpak). Other languages list their forms by gender (see _forms); French, Spanish, Italian
    and Portuguese put them after the noun."""
    if language == "de":
        if spec.startswith("!"):
            return (spec[1:],) * size, (spec[1:],) * size
        return (spec + "er", spec + "e", spec + "es", spec + "e"), (spec,) * size
    if language == "nl":
        parts = spec.split("/")
        inflected, base = (parts[0], parts[-1])
        return (inflected, base, inflected), (base,) * size
    forms = _forms(spec, size)
    if language in ("fr", "es", "it", "pt"):
        return None, forms
    return forms, forms


def _article_phrase(language: str, text: str, gender: int, articles: list[str]) -> str:
    if language == "en":
        if gender == 1:
            return text
        return ("an " if text[0] in "aeiou" else "a ") + text
    if language == "it":
        if gender >= 2:
            return text
        vowel = text[0] in "aeiouh"
        if gender == 1:
            return ("un'" if vowel else "una ") + text
        impure = (text[0] in "zxy" or text[:2] in ("gn", "ps")
                  or (text[0] == "s" and text[1:2] not in ("a", "e", "i", "o", "u")))
        return ("uno " if impure else "un ") + text
    article = articles[gender] if articles else ""
    return f"{article} {text}" if article else text


class _Context:
    """Everything one (language, country) pair draws from, with regional words resolved."""

    __slots__ = ("adjectives", "amounts", "audiences", "audiences_bare", "audiences_bare_w",
                 "audiences_before", "audiences_before_w", "audiences_w",
                 "audience_before_ratio", "best", "cities", "clothing_sizes", "colours",
                 "country", "country_phrase", "extras", "fixed", "gifts", "language", "local",
                 "model_suffixes", "navigation", "pre_ratio", "prices", "products",
                 "products_audience", "products_sized", "purposes", "questions", "recipients",
                 "references", "shoe_sizes", "support", "versus")

    def sizes_for(self, kind: str, kid: bool) -> list[str]:
        return (self.shoe_sizes if kind == "S" else self.clothing_sizes)[kid]


class _Entries:
    """A language's word lists for one country (entries marked for other countries left out;
    de-CH writes "ss" for "ß"), and its templates split at their slots."""

    def __init__(self, language: str, country: str, data: dict):
        self.language, self.country, self.data = language, country, data
        self.swiss = (language, country) == ("de", "CH")

    def fix(self, text: str) -> str:
        return text.replace("ß", "ss") if self.swiss else text

    def __call__(self, key: str) -> list[str]:
        return [self.fix(e) for e in _entries(self.data.get(key, []), self.country)]

    def templates(self, key: str) -> list[tuple[str, ...]]:
        out = []
        for entry in self(key):
            parts = tuple(_SLOT.split(entry))
            unknown = set(parts[1::2]) - _SLOTS
            if unknown:
                raise ValueError(f"{self.language}: unknown slot {unknown} in {entry!r}")
            out.append(parts)
        return out


def _build(language: str, country: str, data: dict) -> _Context:
    entries = _Entries(language, country, data)
    c = _Context()
    c.language, c.country = language, country
    c.pre_ratio = data["pre_ratio"]
    _add_products(c, entries)
    _add_descriptions(c, entries)
    _add_audiences(c, entries)
    _add_sizes(c, entries)
    _add_phrases(c, entries)
    _check(c)
    return c


def _add_products(c: _Context, entries: _Entries) -> None:
    genders, articles = entries.data["genders"], entries.data["articles"]
    products = []
    for entry in entries("products"):
        text, gender, kind = entry.split("|")
        g = genders.index(gender)
        products.append((text, g, kind, _article_phrase(c.language, text, g, articles)))
    c.products = products
    c.products_audience = [p for p in products if p[2] != "G"]
    c.products_sized = [p for p in products if p[2] in "SCW"]


def _add_descriptions(c: _Context, entries: _Entries) -> None:
    """Adjectives, purposes and colours. Adjectives and purposes may be limited to kinds of
    product ("wide|S": shoes only)."""
    size = len(entries.data["genders"])
    adjectives = [(_adjective(c.language, spec, size), kinds or _KINDS)
                  for spec, _, kinds in (e.partition("|") for e in entries("adjectives"))]
    c.adjectives = {kind: [a for a, kinds in adjectives if kind in kinds] for kind in _KINDS}
    purposes = [(text, kinds or _KINDS)
                for text, _, kinds in (e.partition("|") for e in entries("purposes"))]
    c.purposes = {kind: [t for t, kinds in purposes if kind in kinds] for kind in _KINDS}
    c.colours = [_adjective(c.language, e, size) for e in entries("colours")]
    c.best = _forms(entries.data["best"], size)


def _add_audiences(c: _Context, entries: _Entries) -> None:
    """Flags: w women or girls, m men or boys, k children, u anyone. Women's clothes only take
    w audiences; children get children's sizes."""
    size = len(entries.data["genders"])
    audiences = [(_forms(spec, size), flag) for spec, flag in
                 (e.split("|") for e in entries("audiences"))]
    c.audiences = audiences
    c.audiences_w = [a for a in audiences if "w" in a[1]]
    # Single-word audiences, for phrases that go on with a preposition ("... for flat feet").
    c.audiences_bare = [a for a in audiences if " " not in a[0][0]]
    c.audiences_bare_w = [a for a in c.audiences_w if " " not in a[0][0]]
    c.audiences_before = [tuple(e.split("|")) for e in entries("audiences_before")]
    c.audiences_before_w = [a for a in c.audiences_before if "w" in a[1]]
    c.audience_before_ratio = entries.data.get("audience_before_ratio", 0.0)


def _add_sizes(c: _Context, entries: _Entries) -> None:
    """Sizes by "for a child?": sizes marked "|k" are children's sizes."""
    for name in ("shoe_sizes", "clothing_sizes"):
        marked = [e.partition("|") for e in entries(name)]
        sizes = ([t for t, _, mark in marked if not mark], [t for t, _, mark in marked if mark])
        if not sizes[0] or not sizes[1]:
            raise ValueError(f"{c.language}-{c.country}: {name} need adult and children's "
                             "sizes")
        setattr(c, name, sizes)


def _add_phrases(c: _Context, entries: _Entries) -> None:
    """The words around a product (extras, support, recipients, versus, model suffixes), the
    templates of whole queries, amounts, the country's phrase and cities."""
    c.extras = entries("extras")
    c.support, c.recipients = entries("support"), entries("recipients")
    c.versus, c.model_suffixes = entries("versus"), entries("model_suffixes")
    c.prices, c.questions, c.fixed = (entries.templates("prices"),
                                      entries.templates("questions"), entries.templates("fixed"))
    c.navigation, c.local, c.gifts = (entries.templates("navigation"),
                                      entries.templates("local"), entries.templates("gifts"))
    c.references = entries.templates("references")
    c.amounts = list(_AMOUNTS[_CURRENCY[c.country]])
    phrase = entries.data.get("country_phrase", {}).get(c.country)
    c.country_phrase = entries.fix(phrase) if phrase else None
    c.cities = [entries.fix(city) for city in entries.data["cities"].get(c.country, [])]


def _check(c: _Context) -> None:
    """Every list a query may draw from has something in it."""
    where = f"{c.language}-{c.country}"
    for name in ("products", "colours", "audiences", "audiences_w", "audiences_bare",
                 "audiences_bare_w", "shoe_sizes", "clothing_sizes", "extras", "support",
                 "recipients", "versus", "model_suffixes", "prices", "questions", "fixed",
                 "navigation", "local", "gifts", "references", "cities"):
        if not getattr(c, name):
            raise ValueError(f"{where}: no {name}")
    for kind in _KINDS:
        if not c.adjectives[kind] or not c.purposes[kind]:
            raise ValueError(f"{where}: no adjectives or purposes for {kind}")
    used = {slot for key in ("prices", "questions", "fixed", "navigation", "local", "gifts")
            for parts in getattr(c, key) for slot in parts[1::2]}
    if "cn" in used and not c.country_phrase:
        raise ValueError(f"{where}: templates use {{cn}} but no country phrase")


_CONTEXTS: list[_Context] = [_build(language, country, _LANGUAGES[language])
                             for language, countries in _COUNTRY_WEIGHTS.items()
                             for country in countries]

# One slot per 1/10,000 of traffic: drawing a pair is a single index.
_PAIR_TABLE: tuple[int, ...] = tuple(
    index
    for index, c in enumerate(_CONTEXTS)
    for _ in range(_LANGUAGE_WEIGHTS[c.language] * _COUNTRY_WEIGHTS[c.language][c.country])
)

# --- query shapes ---------------------------------------------------------------------------

_Random = Callable[[], float]


def _pick(seq, r: _Random):
    return seq[int(r() * len(seq))]


def _fill(c: _Context, parts: tuple[str, ...], r: _Random) -> str:
    out = [parts[0]]
    brand = ""
    for i in range(1, len(parts), 2):
        slot = parts[i]
        if slot == "p":
            value = _pick(c.products, r)[0]
        elif slot == "ap":
            value = _pick(c.products, r)[3]
        elif slot == "ps":
            value = _pick(c.products_sized, r)[0]
        elif slot == "b":
            value = brand = _pick(_BRANDS, r)
        elif slot == "b2":
            value = _pick(_BRANDS, r)
            while value == brand:
                value = _pick(_BRANDS, r)
        elif slot == "c":
            value = _pick(c.cities, r)
        elif slot == "cn":
            value = c.country_phrase
        elif slot == "r":
            value = _pick(c.recipients, r)
        elif slot == "n":
            value = _pick(c.amounts, r)
        elif slot == "y":
            value = _pick(_YEARS, r)
        elif slot == "pr":
            value = _fill(c, _pick(c.prices, r), r)
        else:  # "k": a catalogue number
            value = str(100000 + int(r() * 900000))
        out.append(value)
        out.append(parts[i + 1])
    return "".join(out)


def _phrase(c: _Context, r: _Random, product: tuple, audience: bool = False,
            adjective: bool = False, colour: bool = False, bare: bool = False,
            size: bool = False) -> list[str]:
    """Words for a product with optional agreeing adjective, colour, audience (`bare`: a
    single-word one, because a prepositional phrase follows) and size (a child's size when the
    audience is children)."""
    text, g, kind, _ = product
    before: list[str] = []
    after: list[str] = []
    for wanted, choices in ((adjective, c.adjectives[kind]), (colour, c.colours)):
        if wanted:
            pre, post = choices[int(r() * len(choices))]
            if pre is not None and r() < c.pre_ratio:
                before.append(pre[g])
            else:
                after.append(post[g])
    words = before + [text]
    kid = False
    if audience and kind != "G":
        if c.audiences_before and r() < c.audience_before_ratio:
            word, flag = _pick(c.audiences_before_w if kind == "W" else c.audiences_before, r)
            words.insert(0, word)
        else:
            if bare:
                forms, flag = _pick(c.audiences_bare_w if kind == "W" else c.audiences_bare, r)
            else:
                forms, flag = _pick(c.audiences_w if kind == "W" else c.audiences, r)
            if after and r() < 0.5:
                after.insert(0, forms[g])
            else:
                after.append(forms[g])
        kid = "k" in flag
    if size:
        after.append(_pick(c.sizes_for(kind, kid), r))
    return words + after


def _head(c: _Context, r: _Random) -> str:
    return _pick(c.products, r)[0]


def _with_audience(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products_audience, r), audience=True))


def _with_adjective(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products, r), audience=r() < 0.6, adjective=True))


def _with_colour(c: _Context, r: _Random) -> str:
    return " ".join(_phrase(c, r, _pick(c.products_audience, r), audience=r() < 0.7,
                            colour=True))


def _with_size(c: _Context, r: _Random) -> str:
    product = _pick(c.products_sized, r)
    words = _phrase(c, r, product, audience=r() < 0.8, adjective=r() < 0.2, colour=r() < 0.2,
                    size=True)
    return " ".join(words)


def _with_extra(c: _Context, r: _Random) -> str:
    words = _phrase(c, r, _pick(c.products, r), audience=r() < 0.5, adjective=r() < 0.15)
    words.append(_pick(c.extras, r))
    return " ".join(words)


def _with_price(c: _Context, r: _Random) -> str:
    words = _phrase(c, r, _pick(c.products, r), audience=r() < 0.4, adjective=r() < 0.3)
    words.append(_fill(c, _pick(c.prices, r), r))
    return " ".join(words)


def _with_purpose(c: _Context, r: _Random) -> str:
    product = _pick(c.products, r)
    words = _phrase(c, r, product, audience=r() < 0.4, adjective=r() < 0.25, bare=True)
    purpose = _pick(c.purposes[product[2]], r)
    if purpose.rsplit(" ", 1)[-1] in product[0]:  # not "botas de caminhada para caminhada"
        purpose = _pick(c.purposes[product[2]], r)
    words.append(purpose)
    return " ".join(words)


def _best(c: _Context, r: _Random) -> str:
    product = _pick(c.products, r)
    words = [c.best[product[1]], product[0]]
    x = r()
    if x < 0.35:
        words.append(_pick(_YEARS, r))
    elif x < 0.65:
        words.append(_pick(c.purposes[product[2]], r))
    elif x < 0.85 and product[2] != "G":
        forms, _flag = _pick(c.audiences_w if product[2] == "W" else c.audiences, r)
        words.append(forms[product[1]])
    return " ".join(words)


def _brand_product(c: _Context, r: _Random) -> str:
    words = [_pick(_BRANDS, r)] + _phrase(c, r, _pick(c.products, r), audience=r() < 0.5,
                                          colour=r() < 0.15)
    if r() < 0.25:
        words.append(_pick(c.extras, r))
    return " ".join(words)


def _model(c: _Context, r: _Random) -> str:
    words = [_pick(_BRANDS, r), _pick(_MODEL_LINES, r), _pick(_MODEL_NUMBERS, r)]
    if r() < 0.5:
        words.append(_pick(c.model_suffixes, r))
    return " ".join(words)


def _navigational(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.navigation, r), r)


def _question(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.questions, r), r)


def _support(c: _Context, r: _Random) -> str:
    x = r()
    if x < 0.4:
        return _fill(c, _pick(c.fixed, r), r)
    if x < 0.8:
        return _pick(c.support, r)
    return _pick(_BRANDS, r) + " " + _pick(c.support, r)


def _long_tail(c: _Context, r: _Random) -> str:
    product = _pick(c.products_sized, r)
    short = product[0].count(" ") < 2  # "chaussures de randonnée" leaves less room
    purpose = short and r() < 0.2
    words = _phrase(c, r, product, audience=True, adjective=r() < 0.7,
                    colour=r() < (0.6 if short else 0.3), bare=purpose, size=True)
    if purpose:
        words.append(_pick(c.purposes[product[2]], r))
    elif len(words) <= 6 and r() < 0.25:
        words.append(_pick(c.extras, r))
    return " ".join(words)


def _local(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.local, r), r)


def _compare(c: _Context, r: _Random) -> str:
    if r() < 0.5:
        first = _pick(_BRANDS, r)
        second = _pick(_BRANDS, r)
        while second == first:
            second = _pick(_BRANDS, r)
        text = f"{first} {_pick(c.versus, r)} {second}"
        return text + " " + _pick(c.products, r)[0] if r() < 0.4 else text
    first = _pick(c.products_sized, r)  # shoes against shoes, jackets against jackets
    for _ in range(20):
        second = _pick(c.products_sized, r)
        if second[2] == first[2] and second[0] != first[0]:
            return f"{first[0]} {_pick(c.versus, r)} {second[0]}"
    return f"{first[0]} {_pick(c.versus, r)} {_pick(_BRANDS, r)} {first[0]}"


def _gift(c: _Context, r: _Random) -> str:
    return _fill(c, _pick(c.gifts, r), r)


_SHAPE_WEIGHTS: tuple[tuple[Callable[[_Context, _Random], str], int], ...] = (
    (_head, 4), (_with_audience, 8), (_with_adjective, 9), (_with_colour, 6), (_with_size, 8),
    (_with_extra, 8), (_with_price, 4), (_with_purpose, 7), (_best, 4), (_brand_product, 7),
    (_model, 4), (_navigational, 5), (_question, 8), (_support, 4), (_long_tail, 8),
    (_local, 3), (_compare, 2), (_gift, 3),
)
_SHAPE_FUNCTIONS = tuple(shape for shape, _weight in _SHAPE_WEIGHTS)
_SHAPE_TABLE = tuple(number for number, (_shape, weight) in enumerate(_SHAPE_WEIGHTS)
                     for _ in range(weight))
_LONG_TAIL_SHAPE = _SHAPE_FUNCTIONS.index(_long_tail)

_ATTEMPTS = 8
# A shape whose recent draws were mostly taken already (its combinations are used up for a
# language and country) is dropped for that pair, so later items don't retry it in vain.
_MISS_DECAY = 0.97
_MISS_LIMIT = 0.75


def _disambiguated(c: _Context, r: _Random, seen: set[int]) -> tuple[str, int]:
    """A long-tail query made unique with a year or a catalogue number (never a bare counter)."""
    base = _long_tail(c, r)
    while True:
        if r() < 0.3:
            text = f"{base} {_pick(_YEARS, r)}"
        else:
            text = f"{base} {_fill(c, _pick(c.references, r), r)}"
        digest = _key(text)
        if digest not in seen:
            return text, digest


def _key(text: str) -> int:
    """A stable 64-bit digest of a text (CRC-32 and Adler-32): deterministic across processes,
    unlike hash(), and far smaller than keeping the strings. A clash between two different
    texts would only make the generator skip one of them, never repeat one."""
    data = text.encode()
    return _crc32(data) << 32 | _adler32(data)


def generate_queries(n: int, seed: int = 0) -> Iterator[tuple[str, str, str]]:
    """Yield n distinct (query, language, country) triples that read like real search queries in
    their own language."""
    if n < 0:
        raise ValueError("n must not be negative")
    return _generate(n, seed)


def _generate(n: int, seed: int) -> Iterator[tuple[str, str, str]]:
    r = random.Random(seed).random
    contexts, pairs, functions = _CONTEXTS, _PAIR_TABLE, _SHAPE_FUNCTIONS
    seen: list[set[int]] = [set() for _ in contexts]
    tables = [_SHAPE_TABLE for _ in contexts]
    misses = [[0.0] * len(functions) for _ in contexts]
    pair_count = len(pairs)
    crc32, adler32, decay, limit = _crc32, _adler32, _MISS_DECAY, _MISS_LIMIT
    for _ in range(n):
        index = pairs[int(r() * pair_count)]
        c = contexts[index]
        taken = seen[index]
        table = tables[index]
        miss = misses[index]
        for _attempt in range(_ATTEMPTS):
            number = table[int(r() * len(table))]
            text = functions[number](c, r)
            data = text.encode()
            digest = crc32(data) << 32 | adler32(data)  # _key(text), inlined: this is hot
            if digest not in taken:
                miss[number] *= decay
                break
            rate = miss[number] = miss[number] * decay + (1.0 - decay)
            if rate > limit and number != _LONG_TAIL_SHAPE:
                tables[index] = table = tuple(x for x in table if x != number)
        else:
            text, digest = _disambiguated(c, r, taken)
        taken.add(digest)
        yield text, c.language, c.country


# --- tagging --------------------------------------------------------------------------------

_TAG = {name: index for index, (name, _colour) in enumerate(TAGS)}

# How often staff pick each tag by hand, beyond what the words suggest: a few tags carry most
# of the work and the rest are rare.
_FILL_WEIGHTS = {
    "product": 40, "transactional": 30, "informational": 14, "navigational": 3,
    "high intent": 4, "needs review": 5, "long tail": 1, "brand": 1, "question": 0.5,
    "price": 1, "sale": 1, "seasonal": 1, "local": 0.5, "support": 0.5, "shipping": 0.3,
    "returns": 0.3, "competitor": 0.3, "gift": 0.3, "mobile": 0.3, "new": 0.3,
}
_FILL_TABLE = tuple(_TAG[name] for name, weight in _FILL_WEIGHTS.items()
                    for _ in range(int(weight * 10)))
# The share of queries that staff have not tagged yet.
_NO_TAG_SHARE = 0.35
# How reliably staff add a tag that a word suggests: always-obvious ones (a brand, a question,
# a return) nearly always, judgement calls (is this "high intent"?) less often.
_FOLLOW_DEFAULT = 0.5
_FOLLOW = {"brand": 0.95, "question": 0.95, "returns": 0.8, "shipping": 0.8, "support": 0.7,
           "navigational": 0.7, "gift": 0.7, "product": 0.4, "competitor": 0.4,
           "high intent": 0.25, "long tail": 0.2, "new": 0.35, "local": 0.45}
_FOLLOW_TABLE = tuple(_FOLLOW.get(name, _FOLLOW_DEFAULT) for name, _colour in TAGS)


def _keyword_tables() -> dict[str, dict[str, tuple[int, ...]]]:
    """Per language, the words that make a tag likely: the "tag_words" of common.json and of the
    language's file, the brands, cities (for "local") and the first word of each product."""
    tables: dict[str, dict[str, tuple[int, ...]]] = {}
    for language in _LANGUAGES:
        table: dict[str, tuple[int, ...]] = {}

        def add(word: str, tag: str, table=table) -> None:
            if _TAG[tag] not in table.get(word, ()):
                table[word] = table.get(word, ()) + (_TAG[tag],)

        for source in (_COMMON["tag_words"], _LANGUAGES[language]["tag_words"]):
            for tag, words in source.items():
                for word in words:
                    add(word, tag)
        for brand in _OWN_BRANDS:
            add(brand, "brand")
        for brand in _COMPETITOR_BRANDS:
            add(brand, "brand")
            add(brand, "competitor")
        for c in _CONTEXTS:
            if c.language == language:
                for city in c.cities:
                    for word in city.split():
                        if len(word) >= 4:
                            add(word, "local")
                for product in c.products:
                    word = product[0].split()[0]
                    if len(word) >= 3 and word not in table:
                        add(word, "product")
        tables[language] = table
    return tables


_KEYWORDS = _keyword_tables()
_FALLBACK_KEYWORDS = _KEYWORDS["en"]
_CURRENCY_SIGNS = frozenset("$£€")
_PRICE, _LONG_TAIL = _TAG["price"], _TAG["long tail"]


def assign_tags(index: int, query: str, language: str, country: str,
                rng: random.Random) -> list[int]:
    """Indices into TAGS for the query at position index: spread unevenly as real tagging is
    (a few tags on many queries, most tags on few; about 35% of queries have no tag; some have
    2-3); where cheap, plausible (a query containing a brand word gets "brand", a question word
    gets "question").

    Only the query's words and `rng` decide; `index` and `country` are accepted so callers can
    pass what they have.
    """
    r = rng.random
    if r() < _NO_TAG_SHARE:
        return []
    keywords = _KEYWORDS.get(language, _FALLBACK_KEYWORDS)
    tags: list[int] = []
    words = query.split()
    for word in words:
        hits = keywords.get(word)
        if hits is None:
            if word[0] in _CURRENCY_SIGNS:
                hits = (_PRICE,)
            else:
                continue
        for tag in hits:
            if tag not in tags and r() < _FOLLOW_TABLE[tag]:
                tags.append(tag)
    if len(words) >= 5 and _LONG_TAIL not in tags and r() < 0.3:
        tags.append(_LONG_TAIL)
    x = r()
    wanted = 1 if x < 0.62 else 2 if x < 0.9 else 3
    while len(tags) < wanted:
        tag = _FILL_TABLE[int(r() * len(_FILL_TABLE))]
        if tag not in tags:
            tags.append(tag)
    return tags[:3]


# --- numbers --------------------------------------------------------------------------------

def query_numbers(query: str, r: random.Random) -> dict[str, int]:
    """A query's numbers as stored (service/engine/numbers.py), as a Search Console and a
    keyword tool would give them: shorter queries are searched more; most have a position
    and clicks, some are unknown to one tool or the other; CTR falls with the position."""
    found: dict[str, int] = {}
    words = query.count(" ") + 1
    volume = 10 ** max(1.0, r.uniform(1.0, 5.2) - 0.35 * (words - 1))
    if r.random() < 0.9:
        found["volume"] = int(float(f"{volume:.2g}"))  # as keyword tools round it
        found["cpc"] = round(min(60.0, r.lognormvariate(0, 0.8)) * 100) * 10_000
        found["difficulty"] = max(0, min(100, round(r.gauss(40, 20)))) * MICRO
    if r.random() < 0.8:
        impressions = max(1, int(volume * r.uniform(0.05, 2.5)))
        position = min(100.0, 1 + r.expovariate(1 / 12))
        clicks = int(impressions * min(0.6, 0.3 / position ** 0.9 * r.uniform(0.5, 1.5)))
        found.update(impressions=impressions, clicks=clicks,
                     ctr=round(clicks / impressions * MICRO),
                     position=round(position * 10) * MICRO // 10)
    return found
