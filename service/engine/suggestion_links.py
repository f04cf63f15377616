"""A suggestion exists only for a query lacking its tag: every write of links goes through
the Writer (service/engine/writer.py), whose `finish` calls `links_written` here, so a link
made by any writer (set-tags, tags-edit, a rule, a merge, an import, an accepted suggestion)
takes its suggestion away in the same transaction, from the rows and from the bitmaps of kind
`suggested`. It also counts the links written since the model was learned: what tells the
suggestions' job to learn again."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import delete, update
from sqlalchemy.engine import Connection

from . import kinds, pieces
from .keys import keys_condition
from .tables import query_suggestions, suggestion_models


class On:
    """What keys_condition asks of a session, answered by a connection."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def get_bind(self) -> Connection:
        return self._connection


def links_written(connection: Connection, project_id: str, changes: pieces.Changes) -> None:
    """In the Writer's transaction, before its pieces are written."""
    made = {value: keys for (kind, value), keys in changes.added.items()
            if kind == kinds.TAG and keys}
    written = sum(map(len, made.values())) + sum(
        len(keys) for (kind, _value), keys in changes.removed.items() if kind == kinds.TAG)
    if not written:
        return
    learned = connection.execute(
        update(suggestion_models).where(suggestion_models.c.project_id == project_id)
        .values(links_changed=suggestion_models.c.links_changed + written)).rowcount
    if not learned:  # never learned: no suggestion to take away
        return
    for tag, keys in made.items():
        taken_away(connection, project_id, int(tag), keys, changes)


def taken_away(connection: Connection, project_id: str, tag_id: int, keys: BitMap,
               changes: pieces.Changes) -> None:
    """The queries' suggestions of the tag go (linked, or rejected)."""
    table = query_suggestions.c
    connection.execute(delete(query_suggestions).where(
        table.project_id == project_id, table.tag_id == tag_id,
        keys_condition(On(connection), table.query_pk, list(keys))))
    changes.remove(kinds.SUGGESTED, str(tag_id), keys)
