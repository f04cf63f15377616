"""The benchmarks run end to end at small sizes. The service benchmark seeds each database,
measures every view over HTTP, prints the table of p95 by size and draws the plot
(docs/benchmarks.md cites what it prints at 100k, 1M and 10M). The browser benchmark times
every kind of change in Chromium and traces one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_service_benchmark_measures_each_size_and_plots_them(tmp_path):
    plot = tmp_path / "p95.svg"
    result = subprocess.run(
        [sys.executable, "bench/bench_service.py", "--sizes", "300,600", "--runs", "1",
         "--smallest-mib", "0",
         "--sqlite-folder", str(tmp_path), "--plot", str(plot)],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    output = result.stdout

    for size in ("300", "600"):
        assert re.search(rf"seed-demo --queries {size}: [\d.]+ s, peak memory \d+ MiB", output)
        assert f"project: {size} queries" in output
    assert output.count("database on disk:") == 2
    assert "ix_queries_updated" in output  # each index's size
    assert re.search(r"service memory: \d+ → \d+ → \d+ → \d+ MiB", output)

    table = output[output.index("p95 ms by size"):]
    rows = {line[:34].strip(): line[34:].split() for line in table.splitlines()[1:]
            if line.strip() and not line.startswith("plot:")}
    for view in ("first page, no filter", "text + codes + tag", "first request, 4 letters",
                 "first request, text + codes + tag",
                 "deep page (by text, page 100)", "set-tags, 1,000 items"):
        assert len(rows[view]) == 2 and all(float(value) > 0 for value in rows[view]), view

    drawing = plot.read_text()
    assert drawing.startswith("<?xml") and "<svg" in drawing
    assert "text + codes + tag" in drawing



def test_the_numbers_benchmark_checks_each_answer_and_prints_every_part(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench/bench_numbers.py", "--queries", "600", "--runs", "1",
         "--warm-up", "0", "--database-url", f"sqlite:///{tmp_path / 'numbers.sqlite3'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    output = result.stdout

    # Every filter at page 1 and the deep page, each sorted by every number both ways (its
    # order checked) beside the default order.
    summary = output[output.index("sorted pages, summary"):output.index("sorted by a number")]
    rows = [line for line in summary.splitlines() if re.match(r"\| \S.* \| (1|200) \|", line)]
    assert len(rows) == 12
    assert re.search(r"sorted by a number, p95 ≤ 50 ms: \d+ of 168 pages", output)
    facets = output[output.index("facets with sums"):output.index("with sums p95 ≤")]
    # filter | matches | facets p50 / p95 | with sums p50 / p95 | ratio | computed | CPU
    assert len(re.findall(r"^\| .+ \| [\d,]+ \| [\d.]+ / [\d.]+ \| [\d.]+ / [\d.]+ \| [\d.]+ \| "
                          r"[\d.]+ \| [\d.]+ / [\d.]+ \|$", facets, re.M)) == 6
    # The service's per-tag sums are those Datasette's SQL (and pandas, when installed) give.
    assert "Datasette's facet counts agree with the service's" in output
    assert re.search(r"per-tag counts and clicks equal across [23]\)", output)
    assert "DIFFER" not in output
    assert re.search(r"per million queries: bitmaps [\d.]+ MiB, with the arrays [\d.]+ MiB", output)


@pytest.mark.browser
def test_the_browser_benchmark_times_every_kind_of_change_and_traces_one(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench/bench_browser.py", "--queries", "600", "--changes", "2",
         "--warmup", "1", "--loads", "1", "--trace", "language"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    output = result.stdout
    # Nothing is measured while the project's first learning shares the processor.
    assert re.search(r"^suggestions '(ready|too few tags)' after [\d.]+ s: measured from here",
                     output, re.M)
    # Each kind's measured changes alone are counted (its warm-up change is not); every kind
    # of change is made.
    for kind, count in (("language", 2), ("country", 2), ("tag", 2), ("text", 2),
                        ("next page", 2), ("sort", 2), ("all changes", 20)):
        assert re.search(rf"^{kind} +{count} +[\d.]+ +[\d.]+", output, re.M), kind
    assert re.search(r"^whole page loads \(1: ", output, re.M)
    assert re.search(r"page load p95 ≤ 300 ms: [\d.]+ ms", output)

    traced = output[output.index("where a change's time goes"):]
    phases = re.findall(r"^  (\w+ -> \w+) +wall +([\d.]+)", traced, re.M)
    assert [phase for phase, _ in phases] == [
        "change -> request", "request -> beforeSwap", "beforeSwap -> afterSwap",
        "afterSwap -> settled", "settled -> painted"]
    assert all(float(wall) > 0 for _, wall in phases)
    assert re.search(r"settled -> painted .*(Layout|Paint)", traced)
