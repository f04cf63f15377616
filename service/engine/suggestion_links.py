"""A suggestion exists only for a query lacking its tag: every write of links goes through
the Writer (service/engine/writer.py), whose `finish` calls `links_written` here, so a link
made by any writer (set-tags, tags-edit, a rule, a merge, an import, an accepted suggestion)
takes its suggestion away in the same transaction, from the rows and from the bitmaps of kind
`suggested`. A link made by accepting a suggestion keeps its confidence; taken away again (an
Undo, a tag removed by hand), it gives the suggestion back (`given_back`). It also counts the
links written (`projects.links_written`): what tells the suggestions' job to learn again."""

from __future__ import annotations

from pyroaring import BitMap
from sqlalchemy import Float, Integer, bindparam, delete, exists, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from ..store.models import Tag
from . import kinds, pieces
from .keys import keys_condition
from .tables import query_suggestions, suggestion_models, suggestion_rejections

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


def given_back(connection: Connection, project_id: str, links: list[tuple[int, int, float]],
               changes: pieces.Changes) -> None:
    """Accepted suggestions whose links were taken away (an Undo, a tag removed by hand)
    come back at the confidence they were accepted at, as before the accept: not where the
    link stands again (written back in the same write), the query's suggestion was rejected
    since, the project has no model any more, or the tag is gone. In the suggested bitmap
    when at or above the model's default confidence."""
    default = connection.execute(select(suggestion_models.c.default_confidence).where(
        suggestion_models.c.project_id == project_id)).scalar()
    if default is None:
        return
    linked = {(key, int(value)) for (kind, value), keys in changes.added.items()
              if kind == kinds.TAG for key in keys}
    back: dict[int, BitMap] = {}
    for pk, tag_id, confidence in links:
        if (pk, tag_id) in linked:
            continue
        inserted = connection.execute(_given_back(connection, project_id, pk, tag_id,
                                                  confidence)).first()
        if inserted is not None and confidence >= default:
            back.setdefault(tag_id, BitMap()).add(pk)
    for tag_id, keys in back.items():
        changes.add(kinds.SUGGESTED, str(tag_id), keys)


def _given_back(connection: Connection, project_id: str, pk: int, tag_id: int,
                confidence: float):
    """The statement that gives one suggestion back, unless it was rejected since or its tag
    is gone (none stands: its link did until now)."""
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    rejections = suggestion_rejections.c
    return dialect.insert(query_suggestions).from_select(
        ["query_pk", "tag_id", "project_id", "confidence"],
        select(literal(pk, Integer), literal(tag_id, Integer),
               literal(project_id, query_suggestions.c.project_id.type),
               literal(confidence, Float)).where(
            exists().where(Tag.id == tag_id),
            ~exists().where(rejections.query_pk == pk, rejections.tag_id == tag_id))
    ).on_conflict_do_nothing().returning(query_suggestions.c.query_pk)


def taken_away(connection: Connection, project_id: str, tag_id: int, keys: BitMap,
               changes: pieces.Changes) -> None:
    """The queries' suggestions of the tag go (linked, or rejected)."""
    table = query_suggestions.c
    connection.execute(delete(query_suggestions).where(
        table.project_id == project_id, table.tag_id == tag_id,
        keys_condition(On(connection), table.query_pk, list(keys))))
    changes.remove(kinds.SUGGESTED, str(tag_id), keys)
