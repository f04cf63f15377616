"""Numbers as the person reads them: in the locale their browser asks for (Accept-Language,
through Babel's CLDR data: "5,000" in English, "5.000" in German), each number of a query in
its own form (CTR a percentage, CPC in the project's currency, position with one decimal).

The pages' own words stay English; only the numbers follow the person's locale.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.numbers import (
    NumberPattern,
    format_decimal,
    format_percent,
    get_decimal_symbol,
    get_group_symbol,
    parse_pattern,
)
from flask import has_request_context, request

from queryapi import NUMBER_NAMES

DEFAULT_LOCALE = Locale("en")
# How each number is called, in the API's order.
LABELS = {"clicks": "Clicks", "impressions": "Impressions", "ctr": "CTR",
          "position": "Position", "volume": "Volume", "cpc": "CPC",
          "difficulty": "Difficulty"}
assert tuple(LABELS) == NUMBER_NAMES
# Each number's pattern (CLDR's); the counts use the locale's own.
PATTERNS = {"position": "#,##0.0#", "difficulty": "#,##0.#", "cpc": "#,##0.00"}


@lru_cache(maxsize=256)
def _locale_of(header: str) -> Locale:
    """The first locale of an Accept-Language header that Babel knows."""
    for tag, _quality in _ranked(header):
        try:
            return Locale.parse(tag.replace("-", "_"))
        except (UnknownLocaleError, ValueError, TypeError):
            continue
    return DEFAULT_LOCALE


def _ranked(header: str) -> list[tuple[str, float]]:
    ranked = []
    for part in header.split(",")[:20]:
        tag, _, parameters = part.strip().partition(";")
        quality = 1.0
        if parameters.strip().startswith("q="):
            try:
                quality = float(parameters.strip()[2:])
            except ValueError:
                quality = 0.0
        if tag and tag != "*" and quality > 0:
            ranked.append((tag, quality))
    return sorted(ranked, key=lambda pair: -pair[1])


def person_locale() -> Locale:
    """The locale of the person's browser (English outside a request, or for none known)."""
    if not has_request_context():
        return DEFAULT_LOCALE
    return _locale_of(request.headers.get("Accept-Language", "")[:500])


def count_text(number: int, locale: Locale | None = None) -> str:
    """'5,067' in the person's locale."""
    return format_decimal(number, locale=locale or person_locale())


def number_text(name: str, value: int | float | None, currency: str | None = None,
                locale: Locale | None = None) -> str:
    """One number of a query, or a figure of many, as shown: '4.5', '7.25' (position),
    '3.2%' (CTR), 'US$1.20' or '€1.20' (CPC in the project's currency; without one, a plain
    number), '5,000' (counts); '' when unknown."""
    if value is None:
        return ""
    locale = locale or person_locale()
    group = _group_of_three(locale)
    if group is not None and isinstance(value, int) and name not in PATTERNS \
            and name != "ctr":
        # A whole number in groups of three, as Babel writes it, without its per-call cost
        # (a page of 200 rows has 800 such cells).
        return f"{value:,}".replace(",", group)
    if name == "cpc" and currency:
        return _pattern(locale, name, True).apply(value, locale, currency=currency)
    return _pattern(locale, name, False).apply(value, locale)


@lru_cache(maxsize=256)
def _pattern(locale: Locale, name: str, with_currency: bool) -> NumberPattern:
    """Each number's pattern in a locale, parsed once."""
    if with_currency:
        return locale.currency_formats["standard"]
    if name == "ctr":
        return parse_pattern(_percent_pattern(locale))
    return parse_pattern(PATTERNS[name]) if name in PATTERNS else locale.decimal_formats[None]


@lru_cache(maxsize=64)
def _group_of_three(locale: Locale) -> str | None:
    """The locale's group separator where it groups whole numbers by three (None where it
    does not, as Indian English's 1,00,000)."""
    pattern = locale.decimal_formats[None]
    if pattern.grouping != (3, 3) or get_decimal_symbol(locale) == "," and \
            get_group_symbol(locale) == ",":
        return None
    return get_group_symbol(locale)


@lru_cache(maxsize=64)
def _percent_pattern(locale: Locale) -> str:
    """The locale's percentage with one decimal ('#,##0.0%', German '#,##0.0\u00a0%')."""
    return locale.percent_formats[None].pattern.replace("#,##0", "#,##0.0", 1)


def bound_text(name: str, value: int | float, locale: Locale | None = None) -> str:
    """A range's bound as said in a filter: as given, no decimals added ('3', '4.5', CTR
    '5%')."""
    locale = locale or person_locale()
    if name == "ctr":
        return format_percent(value, "#,##0.###%", locale=locale)
    return format_decimal(value, "#,##0.######", locale=locale)


def share_percent(part: int | float, whole: int | float) -> int:
    """Whole percent, rounded down except that any part keeps it above 0 (as the progress
    counts it)."""
    if not whole or part <= 0:
        return 0
    return max(int(part * 100 // whole), 1)
