"""Queries with numbers (clicks, volume, …), added as an import adds them: through the
service's admin layer, each value in its stored form (service.engine.numbers)."""

from __future__ import annotations

from service.engine.numbers import BY_NAME
from service.org import admin


def add_numbered_queries(world, rows, project_id=None) -> int:
    """rows: (query, language, country, [tag names], {number name: value} or None)."""
    def stored(numbers):
        if not numbers:
            return None
        return {name: BY_NAME[name].stored(value) for name, value in numbers.items()}

    normalized = [(*admin.normalize_query(q, lang, country), [world.tags[n] for n in names],
                   None, stored(numbers))
                  for q, lang, country, names, numbers in rows]
    return world.run(lambda s: admin.insert_queries(s, project_id or world.project_id,
                                                    normalized))
