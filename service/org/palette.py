"""The colours the service gives a new tag when the caller names none.

Every colour of the palette carries readable text: white or black on it reaches at least
4.5:1 (WCAG AA for normal text), by the same rule the dashboard uses for its chips
(`weblib.colors`). A new tag takes the palette colour the project's tags use least (the
first such colour on a tie), so that a project's tags stay easy to tell apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from weblib.colors import contrast_ratio, readable, text_color

__all__ = ["PALETTE", "contrast_ratio", "pick", "readable", "text_color"]

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


def pick(in_use: Mapping[str, int]) -> str:
    """The palette colour the project's tags use least (`in_use`: how many tags have each
    lower-case colour); on a tie, the first in the palette."""
    return min(PALETTE, key=lambda color: in_use.get(color, 0))

