"""How the report writes its figures: in the person's locale on the page (Babel: thousands
separators, decimal marks, percentages, the project's currency for CPC), plainly in the CSV
file (digits and a dot, as a spreadsheet of any locale reads them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency, format_decimal, format_percent
from flask import request

__all__ = ["Formatter", "person_locale", "plain", "share_label", "slug"]

LABELS = {"clicks": "Clicks", "impressions": "Impressions", "ctr": "CTR",
          "position": "Average position", "volume": "Volume", "cpc": "CPC",
          "difficulty": "Difficulty", "queries": "Queries"}
# How a row's figure of each number is made (said under the table).
HOW = {"position": "average position weighted by impressions",
       "ctr": "CTR as clicks ÷ impressions",
       "cpc": "CPC weighted by volume",
       "difficulty": "difficulty weighted by volume"}
DECIMALS = {"position": "#,##0.0", "cpc": "#,##0.00", "difficulty": "#,##0.#"}
LAST_ZERO = re.compile(r"0(?=[^0]*$)")
SLUG = re.compile(r"[^A-Za-z0-9]+")


FALLBACK = Locale("en")


def person_locale() -> Locale:
    """The first locale of the browser's Accept-Language that Babel knows, else English."""
    for tag, _quality in request.accept_languages:
        try:
            return Locale.parse(tag.replace("-", "_"))
        except (ValueError, TypeError, UnknownLocaleError):
            continue
    return FALLBACK


def label(name: str) -> str:
    return LABELS.get(name, name)


def share_label(by: str) -> str:
    """'Share of clicks'."""
    return f"Share of {label(by).lower()}"


def how_words(numbers) -> str:
    """'Average position weighted by impressions; CPC weighted by volume.' for the weighted
    numbers shown, or ''."""
    words = "; ".join(HOW[name] for name in numbers if name in HOW)
    return words[:1].upper() + words[1:] + "." if words else ""


def plain(value: int | float | None) -> str:
    """A figure for the CSV file: digits and a dot, no grouping; '' when unknown."""
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def slug(name: str) -> str:
    return SLUG.sub("-", name).strip("-").lower()[:60] or "project"


@dataclass(frozen=True)
class Formatter:
    """Figures as the person reads them."""

    locale: Locale
    currency: str | None  # the project's, for CPC

    def count(self, value: int) -> str:
        return format_decimal(value, locale=self.locale)

    def figure(self, name: str, value: int | float | None) -> str:
        """A row's figure of a number; '—' when unknown."""
        if value is None:
            return "—"
        if name == "ctr":
            return format_percent(value, self._percent("0.0#"), locale=self.locale)
        if name == "cpc" and self.currency:
            return format_currency(value, self.currency, locale=self.locale)
        return format_decimal(value, DECIMALS.get(name), locale=self.locale)

    def share(self, ratio: float | None) -> str:
        return "—" if ratio is None else format_percent(ratio, self._percent("0.0"),
                                                        locale=self.locale)

    def _percent(self, digits: str) -> str:
        """The locale's percent pattern ("#,##0\u00a0%") with these digits ("0.0")."""
        return LAST_ZERO.sub(digits, self.locale.percent_formats[None].pattern, count=1)
