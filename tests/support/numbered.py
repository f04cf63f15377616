"""Queries with numbers (clicks, volume, …), added as an import adds them: through the
service's admin layer, each value in its stored form (service.engine.numbers)."""

from __future__ import annotations

from service.engine.numbers import BY_NAME
from service.org import admin


def _stored(numbers):
    if not numbers:
        return None
    return {name: BY_NAME[name].stored(value) for name, value in numbers.items()}


def numbered_rows(rows, tags: dict[str, int]) -> list:
    """rows: (query, language, country, [tag names], {number name: value} or None), as the
    engine inserts them."""
    return [(*admin.normalize_query(q, lang, country), [tags[n] for n in names], None,
             _stored(numbers)) for q, lang, country, names, numbers in rows]


def add_numbered_queries(world, rows, project_id=None) -> int:
    normalized = numbered_rows(rows, world.tags)
    return world.run(lambda s: admin.insert_queries(s, project_id or world.project_id,
                                                    normalized))


def numbered_org(live_dashboard, project: str, rows):
    """A browser test's organization (tests/support/e2e.make_org) whose project `project`
    holds `rows` with their numbers."""
    from service.store.db import session_scope
    from tests.support.e2e import make_org

    made = make_org(live_dashboard, project, {project: []})
    with session_scope(live_dashboard.service_app) as session:
        admin.insert_queries(session, made.projects[project],
                             numbered_rows(rows, made.tags[project]))
    return made
