"""The ORDER BY of a listing, checked: every list endpoint's sort (queries, tags) is read here."""

from __future__ import annotations

from dataclasses import dataclass

from .refusals import Invalid


@dataclass(frozen=True)
class Sort:
    """One sort item: a field of the listing and ASC or DESC (either case)."""

    field: str
    direction: str


def order_by(sort: list, fields: dict, default: list, tie_breaker,
             unknown_last: frozenset[str] = frozenset()):
    """The clauses of `sort` (items with .field and .direction), or of `default` when it is
    empty, ending with the tie-breaker; Invalid names each item it cannot take. A field of
    `unknown_last` puts its NULLs after every value, in either direction."""
    clauses, errors = [], []
    for position, item in enumerate(sort or default):
        column = fields.get(item.field)
        direction = item.direction.upper()
        if column is None:
            errors.append(
                f"'sort.{position}.field': '{item.field}' is not a sort field; "
                f"use one of {', '.join(fields)}."
            )
        if direction not in ("ASC", "DESC"):
            errors.append(f"'sort.{position}.direction': use ASC or DESC.")
        if column is not None and direction in ("ASC", "DESC"):
            clause = column.desc() if direction == "DESC" else column.asc()
            clauses.append(clause.nulls_last() if item.field in unknown_last else clause)
    if errors:
        raise Invalid(errors)
    # Sorted by the tie-breaker itself: no second term (SQLite then ignored the covering
    # (project_id, id) index for a page sorted by id and scanned the global id index instead).
    if any(fields.get(item.field) is tie_breaker for item in sort or default):
        return clauses
    return [*clauses, tie_breaker.asc()]
