"""Human names for language and country codes, from Babel's CLDR data ("German (de)").

The API stores codes as given (languages lower-case, countries upper-case) and promises nothing
about them, so every function here accepts any string and falls back to the code itself.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale, UnknownLocaleError

UI_LOCALE = Locale("en")

# Codes Babel knows that are not countries one would filter search queries by.
_NOT_COUNTRIES = {"AC", "CP", "CQ", "DG", "EA", "EU", "EZ", "IC", "QO", "TA", "UN", "XA",
                  "XB", "ZZ"}


@lru_cache(maxsize=4096)
def language_name(code: str) -> str:
    """'de' -> 'German'; 'pt-BR' -> 'Portuguese (Brazil)'; unknown -> the code."""
    name = UI_LOCALE.languages.get(code) or UI_LOCALE.languages.get(code.lower())
    if name:
        return name
    if "-" in code or "_" in code:
        try:
            return Locale.parse(code.replace("-", "_")).get_display_name(UI_LOCALE) or code
        except (UnknownLocaleError, ValueError, TypeError):
            return code
    return code


@lru_cache(maxsize=4096)
def country_name(code: str) -> str:
    """'DE' -> 'Germany'; unknown -> the code."""
    return UI_LOCALE.territories.get(code.upper()) or code


@lru_cache(maxsize=4096)
def language_label(code: str) -> str:
    """'German (de)' — the name people know and the code the data holds."""
    name = language_name(code)
    return code if name == code else f"{name} ({code})"


@lru_cache(maxsize=4096)
def country_label(code: str) -> str:
    """'Germany (DE)'."""
    name = country_name(code)
    return code if name == code else f"{name} ({code})"


def _sorted_options(pairs) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(pairs, key=lambda pair: (pair[1].casefold(), pair[0])))


@lru_cache(maxsize=1)
def all_languages() -> tuple[tuple[str, str], ...]:
    """(code, label) for every ISO 639-1 language, sorted by name."""
    return _sorted_options(
        (code, language_label(code)) for code in UI_LOCALE.languages
        if len(code) == 2 and code.isascii() and code.isalpha() and code.islower()
    )


@lru_cache(maxsize=1)
def all_countries() -> tuple[tuple[str, str], ...]:
    """(code, label) for every ISO 3166-1 country or territory, sorted by name."""
    return _sorted_options(
        (code, country_label(code)) for code in UI_LOCALE.territories
        if len(code) == 2 and code.isascii() and code.isalpha() and code.isupper()
        and code not in _NOT_COUNTRIES
    )


def joined(parts: list[str], word: str = "and") -> str:
    """'a', 'a and b', 'a, b and c' (`word`: "and" or "or")."""
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + f" {word} " + parts[-1]
