"""Colour contrast by WCAG 2: relative luminance, contrast ratio, and black or white text,
whichever reads better on a #rrggbb background. The dashboard's tag chips and the service's
palette for new tags use the same rule; so does a tag's colour field in both UIs
(weblib/templates/weblib/colour_field.html), with what it shows worked out here."""

from __future__ import annotations

import re

BLACK = "#000000"
WHITE = "#ffffff"
AA_NORMAL_TEXT = 4.5  # WCAG AA, normal text


def _channel(value: int) -> float:
    srgb = value / 255
    return srgb / 12.92 if srgb <= 0.04045 else ((srgb + 0.055) / 1.055) ** 2.4


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    red, green, blue = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast_ratio(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def text_color(background: str) -> str:
    """Black or white, whichever contrasts more with `background`; on a #rrggbb background
    the better of the two never falls below 4.5:1 (the worst case, a mid grey, gives about
    4.58:1)."""
    return max((BLACK, WHITE), key=lambda candidate: contrast_ratio(background, candidate))


def readable(background: str) -> bool:
    """Whether black or white text reaches 4.5:1 on `background` (WCAG AA, normal text)."""
    return contrast_ratio(background, text_color(background)) >= AA_NORMAL_TEXT


HEX_COLOUR = re.compile(r"#[0-9a-f]{6}")


def colour_code(value: object) -> str | None:
    """The colour as #rrggbb in lower case (the # may be left out), or None when it is not
    one."""
    if not isinstance(value, str):
        return None
    value = value.strip().lower()
    if len(value) == 6 and HEX_COLOUR.fullmatch("#" + value):
        value = "#" + value
    return value if HEX_COLOUR.fullmatch(value) else None


def colour_field(typed: object) -> dict:
    """What a tag's colour field shows: the code as typed, the colour it names (or None) for
    the picker and the preview, and whether text on it reads well."""
    valid = colour_code(typed)
    return {"code": typed if isinstance(typed, str) else "", "valid": valid,
            "readable": readable(valid) if valid else True}
