"""bulk_load.bigint_rows: a PostgreSQL statement's integer rows read into an array, as a bulk
load reads back its new queries' numbers — every value exact (up to 63 bits and negative
ones), every row, none; a null or a column of another type refused, never misread."""

from __future__ import annotations

import numpy as np
import pytest
from psycopg.errors import DataError
from sqlalchemy import create_engine

from service.engine.bulk_load import bigint_rows

LARGE = 2**62 + 12_345  # past what a float holds exactly


@pytest.fixture
def connection(postgres_database):
    engine = create_engine(postgres_database, pool_size=1)
    with engine.connect() as connection:
        yield connection
    engine.dispose()


def test_every_row_and_value_comes_back_exact(connection):
    statement = ("SELECT g, g * 7 - 3, "
                 "CASE WHEN mod(g, 5) = 0 THEN -1 ELSE g::bigint * 1000003 END, "
                 f"{LARGE} - g FROM generate_series(1, 70000) g ORDER BY g")
    rows = connection.exec_driver_sql(statement).all()
    table = bigint_rows(connection, statement, 4)
    assert table.dtype == np.int64
    assert table.shape == (70_000, 4)
    assert table.tolist() == [list(row) for row in rows]


def test_no_row_is_an_empty_array(connection):
    table = bigint_rows(connection, "SELECT 1, 2 WHERE false", 2)
    assert table.shape == (0, 2)


def test_integers_of_every_width_are_read_as_bigints(connection):
    table = bigint_rows(connection, "SELECT 7::smallint, 2147483647::integer, -5::bigint", 3)
    assert table.tolist() == [[7, 2_147_483_647, -5]]


def test_a_null_is_refused_not_read_as_a_number(connection):
    with pytest.raises(ValueError, match="not of the integers asked for"):
        bigint_rows(connection, "SELECT 1, NULL::bigint", 2)


def test_a_column_that_is_no_integer_is_refused(connection):
    with pytest.raises(DataError, match="invalid input syntax"):
        bigint_rows(connection, "SELECT 1, 'one'", 2)
