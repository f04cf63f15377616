"""The colours the service gives a new tag when the caller names none.

Every colour of the palette carries readable text: white or black on it reaches at least
4.5:1 (WCAG AA for normal text), by the same rule the dashboard uses for its chips — the
service imports nothing of the dashboard, so the rule is written here again. A new tag takes
the palette colour the project's tags use least (the first such colour on a tie), so that a
project's tags stay easy to tell apart.
"""

from __future__ import annotations

from collections.abc import Mapping

BLACK = "#000000"
WHITE = "#ffffff"
AA_NORMAL_TEXT = 4.5

# Six strong colours (white text) and six light ones (black text), alternating.
PALETTE = (
    "#0052cc",  # blue
    "#fbca04",  # yellow
    "#b60205",  # red
    "#c2e0c6",  # light green
    "#5a32a3",  # purple
    "#f9d0c4",  # peach
    "#116329",  # green
    "#c5def5",  # light blue
    "#953800",  # rust
    "#d4c5f9",  # lavender
    "#006b75",  # teal
    "#fef2c0",  # cream
)


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
    """Black or white, whichever contrasts more with `background`."""
    return max((BLACK, WHITE), key=lambda candidate: contrast_ratio(background, candidate))


def readable(background: str) -> bool:
    return contrast_ratio(background, text_color(background)) >= AA_NORMAL_TEXT


def pick(in_use: Mapping[str, int]) -> str:
    """The palette colour the project's tags use least (`in_use`: how many tags have each
    lower-case colour); on a tie, the first in the palette."""
    return min(PALETTE, key=lambda color: in_use.get(color, 0))

