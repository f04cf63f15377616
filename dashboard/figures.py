"""Numbers as the person reads them: in the locale their browser asks for (Accept-Language,
through Babel's CLDR data: "5,000" in English, "5.000" in German), each number of a query in
its own form (CTR a percentage, CPC in the project's currency, position with one decimal).

The pages' own words stay English; only the numbers follow the person's locale.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency, format_decimal, format_percent
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
    """One number of a query, or a figure of many, as shown: '4.5', '7.25' (position), '3.2%' (CTR),
    'US$1.20' or '€1.20' (CPC in the project's currency; without one, a plain number),
    '5,000' (counts); '' when unknown."""
    if value is None:
        return ""
    locale = locale or person_locale()
    if name == "ctr":
        return format_percent(value, _percent_pattern(locale), locale=locale)
    if name == "cpc" and currency:
        return format_currency(value, currency, locale=locale)
    return format_decimal(value, PATTERNS.get(name), locale=locale)


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
