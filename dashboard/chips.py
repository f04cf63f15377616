"""Tag chips: the tag's colour as background, black or white text with WCAG AA contrast.

A colour reaches a style attribute only after matching #RRGGBB exactly; anything else (the
production service might send "red", "#fff" or worse) gives a neutral chip instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

HEX_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
BLACK = "#000000"
WHITE = "#ffffff"
AA_NORMAL_TEXT = 4.5


def _channel(value: int) -> float:
    srgb = value / 255
    return srgb / 12.92 if srgb <= 0.04045 else ((srgb + 0.055) / 1.055) ** 2.4


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of a #RRGGBB colour."""
    red, green, blue = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * _channel(red) + 0.7152 * _channel(green) + 0.0722 * _channel(blue)


def contrast_ratio(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def valid_color(value: object) -> str | None:
    """The colour in lower case if it is exactly #RRGGBB, else None."""
    if isinstance(value, str) and HEX_COLOR.fullmatch(value):
        return value.lower()
    return None


@dataclass(frozen=True)
class ChipStyle:
    background: str | None  # None: a neutral chip styled by the stylesheet alone
    text: str | None

    @property
    def style(self) -> str:
        """The style attribute's value, or "" for a neutral chip."""
        if self.background is None:
            return ""
        return f"background-color:{self.background};color:{self.text}"


NEUTRAL = ChipStyle(None, None)


def chip_style(color: object) -> ChipStyle:
    """Black or white text, whichever contrasts more; with #RRGGBB input both cannot fall
    below 4.5:1 at once (the worst case, a mid grey, still gives about 4.58:1)."""
    background = valid_color(color)
    if background is None:
        return NEUTRAL
    return _style_for(background)


@lru_cache(maxsize=4096)
def _style_for(background: str) -> ChipStyle:
    text = max((BLACK, WHITE), key=lambda candidate: contrast_ratio(background, candidate))
    return ChipStyle(background, text)
