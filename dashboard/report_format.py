"""How the report writes its figures: on the page as the queries page writes them (figures.py:
the person's locale, CTR a percentage, CPC in the project's currency), plainly in the CSV file
(digits and a dot, as a spreadsheet of any locale reads them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from babel import Locale
from babel.numbers import format_decimal

from .figures import LABELS, count_text, number_text, person_locale

__all__ = ["Formatter", "person_locale", "plain", "share_label", "slug"]

# A row's position is an average of many: said so.
REPORT_LABELS = {**LABELS, "position": "Average position", "queries": "Queries"}
# How a row's figure of each number is made (said under the table).
HOW = {"ctr": "CTR as clicks ÷ impressions",
       "position": "average position weighted by impressions",
       "cpc": "CPC weighted by volume",
       "difficulty": "difficulty weighted by volume"}
SLUG = re.compile(r"[^A-Za-z0-9]+")
# A row's position and difficulty are averages: each column to the same decimals, so that
# its figures line up ("50" stood under "37.5", "10.0" under "2.67").
AVERAGES = {"position": "#,##0.00", "difficulty": "#,##0.0"}


def label(name: str) -> str:
    return REPORT_LABELS.get(name, name)


def share_label(by: str) -> str:
    """'Share of clicks'."""
    return f"Share of {label(by).lower()}"


def how_words(numbers) -> str:
    """'CTR as clicks ÷ impressions; average position weighted by impressions.' for the
    weighted numbers shown, or ''."""
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
        return count_text(value, self.locale)

    def figure(self, name: str, value: int | float | None) -> str:
        """A row's figure of a number; '—' when unknown."""
        if value is None:
            return "—"
        if name in AVERAGES:
            return format_decimal(value, AVERAGES[name], locale=self.locale)
        return number_text(name, value, self.currency, self.locale)

    def share(self, ratio: float | None) -> str:
        """A share as a CTR is written: a percentage with one decimal; '—' when unknown."""
        return "—" if ratio is None else number_text("ctr", ratio, locale=self.locale)
