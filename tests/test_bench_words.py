"""bench/bench_words.py runs end to end at a small size: every view's line, with figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_words_benchmark_prints_every_view(tmp_path):
    database = f"sqlite:///{tmp_path / 'words.sqlite3'}"
    result = subprocess.run(
        [sys.executable, "bench/bench_words.py", "--queries", "400", "--runs", "2",
         "--database-url", database],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for view in ("untagged", "whole project", "language de", "untagged + text 'schu'"):
        line = next(line for line in result.stdout.splitlines() if line.startswith(view + " "))
        figures = line[26:].split()[:6]  # first, written p50 and p95, repeated, list p50, p95
        assert all(float(figure) > 0 for figure in figures), line
        assert re.search(r"  [\d,]+: ", line), line  # the matches, and the first words
    assert "target: words p95 <= 100 ms" in result.stdout
