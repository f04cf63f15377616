"""Rows named by their keys, in one parameter: the one place where the two databases are
written differently (an array on PostgreSQL, a JSON array on SQLite)."""

from __future__ import annotations

import json

from sqlalchemy import Integer, any_, bindparam, column, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

# The largest id a column of ids holds (a 32-bit integer): a larger one names no row.
MAX_ID = 2**31 - 1


def keys_condition(session: Session, key_column, keys: list[int]):
    if session.get_bind().dialect.name == "postgresql":
        return key_column == any_(bindparam("keys", list(keys), type_=ARRAY(Integer), unique=True))
    listed = select(column("value")).select_from(
        func.json_each(bindparam("keys", json.dumps(list(keys)), unique=True)))
    return key_column.in_(listed.scalar_subquery())
