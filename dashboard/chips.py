"""Tag chips: the tag's colour as background, black or white text with WCAG AA contrast.

A colour reaches a style attribute only after matching #RRGGBB exactly; anything else (the
production service might send "red", "#fff" or worse) gives a neutral chip instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from weblib.colors import AA_NORMAL_TEXT, contrast_ratio, text_color

__all__ = ["AA_NORMAL_TEXT", "NEUTRAL", "ChipStyle", "chip_style", "contrast_ratio",
           "valid_color"]

HEX_COLOR = re.compile(r"#[0-9a-fA-F]{6}")


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
    """Black or white text, whichever contrasts more (`weblib.colors.text_color`)."""
    background = valid_color(color)
    if background is None:
        return NEUTRAL
    return _style_for(background)


@lru_cache(maxsize=4096)
def _style_for(background: str) -> ChipStyle:
    return ChipStyle(background, text_color(background))
