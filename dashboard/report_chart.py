"""The report's chart: one horizontal bar per row, its length the row's share, drawn on the
server as inline SVG (templates/report/_chart.html draws what `bars` measures).

Each bar has its name and share on a line above it, so that the drawing keeps one width
(WIDTH units, scaled by its viewBox to the page) and stays readable on a phone. Lengths are
to the largest share, which spans the width. The table beside it holds the same figures: the
chart is one image to assistive technology (role="img", named by its <title>).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .chips import valid_color
from .report_table import TAG, Report

WIDTH = 400
ROW_HEIGHT = 40
LABEL_BASELINE = 15  # of a row's name and share, from the row's top
BAR_TOP, BAR_HEIGHT = 21, 12
MAX_LABEL = 36  # characters of a name shown in the chart (the table has it whole)
MIN_BAR = 1.5  # a share above 0 stays visible
MAX_BARS = 20  # tags drawn (the table has every one)


@dataclass(frozen=True)
class Bar:
    label: str
    share_text: str
    top: float
    label_y: float
    bar_y: float
    length: float
    color: str | None  # None: the neutral colour of the stylesheet


@dataclass(frozen=True)
class Chart:
    bars: tuple[Bar, ...]
    width: int
    height: int
    bar_height: int
    tags_shown: int  # of the report's tags: the first MAX_BARS at most
    tags_left_out: int  # of the report's tags, beyond MAX_BARS


def _short(name: str) -> str:
    return name if len(name) <= MAX_LABEL else name[:MAX_LABEL - 1].rstrip() + "…"


def chart(report: Report, share_text: Callable[[float | None], str]) -> Chart:
    """A bar for each row the report charts (its first MAX_BARS tags, biggest first, and the
    rows beside them). `share_text` writes a share as the page does."""
    rows = report.charted(MAX_BARS)
    shares = [report.share(row) or 0.0 for row in rows]
    largest = max(shares, default=0.0)
    bars = []
    for index, (row, share) in enumerate(zip(rows, shares, strict=True)):
        top = index * ROW_HEIGHT
        length = WIDTH * share / largest if largest else 0.0
        bars.append(Bar(_short(row.label), share_text(report.share(row)), top,
                        top + LABEL_BASELINE, top + BAR_TOP,
                        round(max(length, MIN_BAR) if share > 0 else 0.0, 2),
                        valid_color(row.tag.color) if row.kind == TAG and row.tag else None))
    return Chart(tuple(bars), WIDTH, max(len(bars), 1) * ROW_HEIGHT, BAR_HEIGHT,
                 min(len(report.tags), MAX_BARS), max(len(report.tags) - MAX_BARS, 0))
