"""The suggestions benchmark runs end to end at a small size: it learns from a fifth of the
generated queries, scores them all and prints the figures docs/benchmarks.md cites."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_suggestions_benchmark_learns_scores_and_prints_its_figures():
    result = subprocess.run(
        [sys.executable, "bench/bench_suggestions.py", "--speed", "5000", "--tags", "8"],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    output = result.stdout
    assert "speed: 5,000 queries, 1,000 tagged, 8 tags" in output
    learned = re.search(r"learn [\d.]+ s \(held back ([\d,]+), ([\d.]+)% right at ([\d.]+)\)",
                        output)
    assert learned and int(learned[1].replace(",", "")) == 1000
    assert float(learned[2]) >= 97.0 and 0.5 <= float(learned[3]) <= 1.0
    scored = re.search(r"score [\d.]+ s: ([\d,]+) suggestions, ([\d.]+)% right, "
                       r"([\d.]+)% of untagged given one", output)
    assert scored and float(scored[2]) >= 97.0 and float(scored[3]) >= 85.0
    assert re.search(r"total [\d.]+ s, peak memory \d+ MiB", output)
