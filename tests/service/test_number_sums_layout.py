"""number_sums.layout and positions: arrays indexed by key where a project's keys lie close
together, by place among them where they are spread wide; a key the layout lacks (a query
added while a read sums) is left out either way, never read as another key's value."""

from __future__ import annotations

import numpy as np
from pyroaring import BitMap

from service.engine import number_sums
from service.engine.number_sums import Layout, positions


class Held:
    """A project's held bitmaps as layout reads them: all its keys."""

    def __init__(self, keys):
        self.keys = BitMap(keys)


def layout_of(keys, monkeypatch) -> Layout:
    monkeypatch.setattr(number_sums, "all_keys", lambda held: held.keys)
    return number_sums.layout(Held(keys))


def test_close_keys_are_indexed_by_key(monkeypatch):
    at = layout_of(range(100, 200), monkeypatch)
    assert (at.offset, at.span, at.by_place) == (100, 100, False)
    assert positions(BitMap([100, 150, 199, 250]), at).tolist() == [0, 50, 99]


def test_keys_spread_wide_are_indexed_by_place(monkeypatch):
    keys = [7, 1_000, 500_000, 2_000_000, 9_000_000]
    at = layout_of(keys, monkeypatch)
    assert (at.span, at.count, at.by_place) == (5, 5, True)
    # 12 and 600,000: inside the keys' range, not among them; 9,500,000: past them.
    assert positions(BitMap([7, 12, 500_000, 600_000, 9_000_000, 9_500_000]),
                     at).tolist() == [0, 2, 4]
    assert positions(BitMap(keys), at).tolist() == [0, 1, 2, 3, 4]
    assert positions(BitMap(), at).dtype == np.intp


def test_a_layout_by_place_never_equals_one_by_key():
    assert Layout(0, 5, 5) != Layout(0, 5, 5, True, np.arange(5, dtype=np.uint32))
