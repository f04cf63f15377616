"""A suggestion exists only for a query lacking its tag: every write of links goes through
the Writer (service/engine/writer.py), whose `finish` calls `links_written` here, so a link
made by any writer (set-tags, tags-edit, a rule, a merge, an import, an accepted suggestion)
takes its suggestion away in the same transaction, from the rows and from the bitmaps of kind
`suggested`. It also counts the links written (`projects.links_written`): what tells the
suggestions' job to learn again."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import bindparam, delete, select
from sqlalchemy.engine import Connection

from . import kinds, pieces
from .keys import keys_condition
from .tables import query_suggestions

# Whether the project has a suggestion of the tag (most writes meet none: nothing to delete).
SUGGESTED_ANY = select(query_suggestions.c.query_pk).where(
    query_suggestions.c.project_id == bindparam("project_id"),
    query_suggestions.c.tag_id == bindparam("tag_id")).limit(1)


class On:
    """What keys_condition asks of a session, answered by a connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def get_bind(self) -> Connection:
        return self._connection


def links_written(connection: Connection, project_id: str, changes: pieces.Changes) -> int:
    """In the Writer's transaction, with the project's row held, before its pieces are
    written: how many links it made or took away."""
    made = {value: keys for (kind, value), keys in changes.added.items()
            if kind == kinds.TAG and keys}
    for tag, keys in made.items():
        if connection.execute(SUGGESTED_ANY, {"project_id": project_id,
                                              "tag_id": int(tag)}).first() is not None:
            taken_away(connection, project_id, int(tag), keys, changes)
    return sum(map(len, made.values())) + sum(
        len(keys) for (kind, _value), keys in changes.removed.items() if kind == kinds.TAG)


def taken_away(connection: Connection, project_id: str, tag_id: int, keys: BitMap,
               changes: pieces.Changes) -> None:
    """The queries' suggestions of the tag go (linked, or rejected)."""
    table = query_suggestions.c
    connection.execute(delete(query_suggestions).where(
        table.project_id == project_id, table.tag_id == tag_id,
        keys_condition(On(connection), table.query_pk, list(keys))))
    changes.remove(kinds.SUGGESTED, str(tag_id), keys)
