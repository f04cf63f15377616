"""How well and how fast the language of short search queries is told: the detector imports
use (service/imports/language_detection.py: py3langid limited to the languages, least_probability)
beside lingua's low- and high-accuracy modes, on hand-labelled keyword queries
(bench/data/language_queries.tsv, 42 a language).

For each: per language, the share of its queries told right, told wrong and fallen back (not
told with confidence); then the speed over a file's worth of queries (the labelled ones
repeated), in queries a second.

    uv run python bench/bench_language_detection.py [--rows 200000]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.imports import language_detection  # noqa: E402
from service.imports.import_sources import Choice, Shaping  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "language_queries.tsv"
LINGUA_DISTANCE = 0.1  # lingua's minimum relative distance between the best two languages


def labelled() -> list[tuple[str, str]]:
    rows = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            language, query = line.split("\t", 1)
            rows.append((language, query))
    return rows


def imports(codes):
    return lambda texts: language_detection.detect(texts, codes)


def lingua(codes, low: bool):
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    builder = LanguageDetectorBuilder.from_languages(*(
        Language.from_iso_code_639_1(getattr(IsoCode639_1, code.upper())) for code in codes))
    builder = builder.with_minimum_relative_distance(LINGUA_DISTANCE)
    detector = (builder.with_low_accuracy_mode() if low else builder).build()

    def detect(texts):
        return [found.iso_code_639_1.name.lower() if found else None
                for found in detector.detect_languages_in_parallel_of(list(texts))]
    return detect


def accuracy(name: str, detect, rows: list[tuple[str, str]]) -> None:
    found = detect([query for _language, query in rows])
    tally = defaultdict(lambda: [0, 0, 0])  # right, wrong, fell back
    for (language, _query), told in zip(rows, found, strict=True):
        tally[language][0 if told == language else 2 if told is None else 1] += 1
    print(f"\n{name}")
    print(f"{'language':<9}{'queries':>8}{'right':>8}{'wrong':>8}{'fallback':>9}"
          f"{'right of told':>15}")
    totals = [0, 0, 0]
    for language in sorted(tally):
        right, wrong, fell = tally[language]
        totals = [a + b for a, b in zip(totals, tally[language], strict=True)]
        _line(language, right, wrong, fell)
    _line("all", *totals)


def _line(language: str, right: int, wrong: int, fell: int) -> None:
    count = right + wrong + fell
    told = right + wrong
    print(f"{language:<9}{count:>8}{right / count:>8.1%}{wrong / count:>8.1%}"
          f"{fell / count:>9.1%}{(right / told if told else 0):>15.1%}")


def speed(name: str, detect, rows: list[tuple[str, str]], count: int) -> None:
    queries = [query for _language, query in rows]
    texts = (queries * (count // len(queries) + 1))[:count]
    detect(texts[:1000])  # models loaded
    best, cpu = float("inf"), float("inf")
    for _ in range(3):
        started, used = time.perf_counter(), time.process_time()
        for at in range(0, len(texts), language_detection.BATCH_ROWS):
            detect(texts[at:at + language_detection.BATCH_ROWS])
        best = min(best, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - used)
    # The processor time too: on a machine others share, the wall clock says more of them.
    print(f"{name}: {count / best:,.0f} queries/s ({count:,} in {best:.2f} s, best of 3); "
          f"{count / cpu:,.0f} a second of processor time (all threads)")


def shaping(rows: list[tuple[str, str]], count: int, codes: list[str]) -> None:
    """A Search Console export of `count` rows written in the import's own shape, as an
    import does, with and without each query's language detected."""
    queries = [query for _language, query in rows]
    lines = ["Top queries,Clicks,Impressions,CTR,Position"]
    lines += [f"{queries[n % len(queries)]} {n // len(queries)},1,10,10%,3.2"
              for n in range(count)]
    data = ("\n".join(lines) + "\n").encode()
    for detect in (False, True):
        choice = Choice(language="de", country="DE", detect_language=detect,
                        detect_languages=tuple(codes))
        started, used = time.perf_counter(), time.process_time()
        Shaping(io.BytesIO(data), choice).write(io.StringIO())
        took, cpu = time.perf_counter() - started, time.process_time() - used
        print(f"shaping {count:,} rows, {'with' if detect else 'without'} detection: "
              f"{took:.2f} s ({count / took:,.0f} rows/s; processor time {cpu:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000,
                        help="queries in the speed run")
    args = parser.parse_args()
    rows = labelled()
    codes = sorted({language for language, _query in rows})
    candidates = {
        "py3langid, set_languages, probability ≥ "
        f"{language_detection.least_probability(len(codes)):.2f} (imports)": imports(codes),
        f"lingua, low-accuracy mode, distance {LINGUA_DISTANCE}": lingua(codes, low=True),
        f"lingua, high-accuracy mode, distance {LINGUA_DISTANCE}": lingua(codes, low=False),
    }
    print(f"{len(rows)} hand-labelled queries in {len(codes)} languages: {', '.join(codes)}")
    for name, detect in candidates.items():
        accuracy(name, detect, rows)
    print()
    for name, detect in candidates.items():
        speed(name, detect, rows, args.rows)
    offered = [code for code, _name in language_detection.offered([])]
    speed(f"imports, among the {len(offered)} languages offered", imports(offered), rows,
          args.rows)
    print()
    shaping(rows, args.rows, codes)


if __name__ == "__main__":
    main()
