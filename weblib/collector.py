"""Python's garbage collector, set for processes that handle many rows at once."""

import gc

# Objects made before the young generation is collected (Python's default: 700).
YOUNG_OBJECTS = 50_000


def collect_young_less_often() -> None:
    """Collect the young generation after YOUNG_OBJECTS new objects, not 700. Work that reads
    rows by the thousand (a page's walk, an import's batches) let each batch live through
    young collections into the older generations, whose growth started full passes over all
    the process holds: at ten million queries a page filtered by a suggestion took 50 ms, a
    full pass every fourth page 110 (p95), now 26 and 28; importing a million rows with their
    seven numbers took 83.5 s of CPU (one run), now 59.0-78.4 (three). Set once, at a
    process's start: the cost is a few megabytes of garbage held a little longer."""
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
