"""Colour contrast by WCAG 2: relative luminance, contrast ratio, and black or white text,
whichever reads better on a #rrggbb background. The dashboard's tag chips and the service's
palette for new tags use the same rule."""

from __future__ import annotations

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
