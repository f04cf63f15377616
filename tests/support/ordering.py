"""The test files in the order that keeps every xdist worker busy to the end: the longest first.

xdist's `--dist loadfile` hands out whole files, one at a time, in the order it is given
(`--no-loadscope-reorder`; its own order is by the number of tests, which put a file of one
30-second test last, with the other worker idle meanwhile). Each run's controller records
how long each file took, summed over its tests' set-up, call and tear-down, in pytest's cache;
the next run starts with the longest files, so the last ones handed out are short. A file the
record does not know yet is counted at the average time of a test, times its tests. A
checkout with no record of its own (a fresh clone, CI) starts from tests/file_seconds.json,
the record committed with the tests: `uv run python -m tests.support.ordering` writes it from
this checkout's record after a run. The order of the tests inside a file is never changed.
The record is kept for each set of optional suites switched on, since they change what a
file costs.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

KEY = "tagdesk/seconds-per-file"
DEFAULT_SECONDS_PER_TEST = 0.3
ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "tests" / "file_seconds.json"


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def record_key(suites: list[str]) -> str:
    return f"{KEY}/{'+'.join(sorted(suites)) or 'plain'}"


def committed_seconds(key: str) -> dict[str, float]:
    """Seconds per file for these optional suites, as committed (empty when none are)."""
    try:
        return json.loads(COMMITTED.read_text(encoding="utf-8")).get(key, {})
    except FileNotFoundError:
        return {}


def longest_files_first(items: list, seconds: dict[str, float]) -> list:
    """The items, whole files at a time, longest (as recorded, else estimated) first."""
    by_file: dict[str, list] = defaultdict(list)
    for item in items:
        by_file[file_of(item.nodeid)].append(item)
    known = [seconds[name] / len(tests) for name, tests in by_file.items() if name in seconds]
    per_test = sum(known) / len(known) if known else DEFAULT_SECONDS_PER_TEST

    def cost(name: str) -> float:
        return seconds.get(name, per_test * len(by_file[name]))

    order = sorted(by_file, key=cost, reverse=True)  # stable: ties keep collection order
    return [item for name in order for item in by_file[name]]


class Durations:
    """Seconds per file of this run, from the reports the controller receives."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def add(self, report) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def merged_into(self, recorded: dict[str, float]) -> dict[str, float]:
        return {**recorded, **{name: round(value, 2) for name, value in self.seconds.items()}}


def write_committed() -> None:
    """tests/file_seconds.json from this checkout's records in .pytest_cache, whole seconds;
    files that are gone (a record keeps every file it ever saw) are left out. The committed
    records of the sets of suites this checkout has not run stay as they were."""
    folder = ROOT / ".pytest_cache" / "v" / KEY
    records = json.loads(COMMITTED.read_text(encoding="utf-8")) if COMMITTED.exists() else {}
    records.update({f"{KEY}/{path.name}": {name: round(seconds) for name, seconds
                                          in sorted(json.loads(path.read_text()).items())
                                          if (ROOT / name).exists()}
                    for path in sorted(folder.iterdir())})
    COMMITTED.write_text(json.dumps(dict(sorted(records.items())), indent=1) + "\n",
                         encoding="utf-8")


if __name__ == "__main__":
    write_committed()
