"""Migration 0046: the weighted numbers' products are no longer kept as bit slices — upgrade
takes their pieces away and leaves every other piece; downgrade makes them again from the
queries' numbers, exactly (values past 64 bits included), chunk by chunk."""

from __future__ import annotations

import pytest
from pyroaring import BitMap
from sqlalchemy import text

from tests.service.migrating import P1, P2, engine_of_its_own, migrate, migrated_with_rows

ROWS = [(f"query {index}", "en", "US") for index in range(30)]
PRODUCTS = (("position", "impressions"), ("cpc", "volume"), ("difficulty", "volume"))


def numbers_of(pk: int) -> dict[str, int | None]:
    """Some numbers known, some not, one product past 64 bits."""
    return {"position": None if pk % 5 == 0 else 1_000_000 + pk * 7_654_321,
            "impressions": None if pk % 7 == 0 else pk * 1_003,
            "cpc": pk * 250_000 if pk % 4 else None,
            "volume": 2**40 + pk if pk == 9 else pk * 90,
            "difficulty": 2**33 if pk == 9 else pk * 3_000_000}


def expected_products(projects: dict[int, str]) -> dict[tuple[str, str], BitMap]:
    found: dict[tuple[str, str], BitMap] = {}
    for pk, project in projects.items():
        numbers = numbers_of(pk)
        for name, weight in PRODUCTS:
            if numbers[name] is None or numbers[weight] is None:
                continue
            product = f"{name}*{weight}"
            found.setdefault((project, product), BitMap()).add(pk)
            value = numbers[name] * numbers[weight]
            for bit in range(value.bit_length()):
                if value >> bit & 1:
                    found.setdefault((project, f"{product}:{bit}"), BitMap()).add(pk)
    return found


def stored_pieces(connection) -> dict[tuple[str, str], BitMap]:
    found: dict[tuple[str, str], BitMap] = {}
    for project, value, keys in connection.execute(text(
            "SELECT project_id, value, keys FROM engine_pieces WHERE kind = 6")):
        found.setdefault((str(project), value), BitMap()).update(BitMap.deserialize(keys))
    return found


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_products_go_with_upgrade_and_come_back_with_downgrade(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_products_") as engine:
        migrated_with_rows(engine, "0045", ROWS)
        with engine.begin() as connection:
            projects = {pk: str(project) for pk, project in connection.execute(text(
                "SELECT pk, project_id FROM queries"))}
            for pk in projects:
                connection.execute(text(
                    "UPDATE queries SET position = :position, impressions = :impressions, "
                    "cpc = :cpc, volume = :volume, difficulty = :difficulty WHERE pk = :pk"),
                    {**numbers_of(pk), "pk": pk})
            pieces = {**expected_products(projects), (P1, "volume"): BitMap([2, 3]),
                      (P2, "volume:0"): BitMap([3])}
            for (project, value), keys in pieces.items():
                connection.execute(text(
                    "INSERT INTO engine_pieces (project_id, kind, value, chunk, stamp, size, keys) "
                    "VALUES (:project, 6, :value, 0, 1, :size, :keys)"),
                    {"project": project, "value": value, "size": len(keys),
                     "keys": keys.serialize()})
        migrate(engine, "0046")
        with engine.connect() as connection:
            assert stored_pieces(connection) == {(P1, "volume"): BitMap([2, 3]),
                                                 (P2, "volume:0"): BitMap([3])}
        migrate(engine, "0045", down=True)
        with engine.connect() as connection:
            assert stored_pieces(connection) == pieces
