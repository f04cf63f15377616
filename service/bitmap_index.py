"""PostgreSQL: a bitmap index of each project's queries (migration 0023): the row keys of the
queries that hold each word of their texts, that have each language and country, and that
carry each tag, as roaring bitmaps, so that a text filter is counted exactly without visiting
its matches.

A term without a space lies within one space-separated word of a text that contains it, so
the texts that contain the term are exactly those holding a word that contains it: the union
of those words' bitmaps. Intersected with the bitmaps of the filter's codes and tags, its size
is the count, and when it is small its keys are the page's rows. Counting row by row visits
every candidate the trigram index gives (`running` at ten million queries: 352,832 matches,
438 ms); the bitmaps count them in milliseconds.

The words are cut from `query_texts.folded`, the text lower-cased by the database itself, and
matched with the same LIKE as the row-by-row count (service/search.py), so both agree on every
character. Each bitmap is kept in pieces of 65,536 keys (`chunk` is the key's upper 16 bits, a
roaring bitmap's own unit): a change reads and writes only the pieces its keys fall in.

Words and codes are current while `projects.words_version` equals `texts_version`; a tag's
keys while `tags.keys_version` equals `links_version`. The triggers that move the latter two
move the former two with them when the transaction has said it brings the bitmaps up to date
itself (`follow`). The paths that insert queries (service/bulk_load.py, and service/admin.py
for a few rows) and set-tags (service/tagging.py) say so, and bring them up to date before
they commit. Any other change (a hand-written INSERT or DELETE, say) leaves the bitmaps
behind, and such filters are then counted row by row: never a wrong count.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from pyroaring import BitMap
from sqlalchemy import (
    Integer,
    LargeBinary,
    Text,
    bindparam,
    column,
    delete,
    func,
    select,
    table,
    tuple_,
)
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.engine import Connection
from sqlalchemy.types import TypeEngine

CHUNK_SHIFT = 16
# Pieces written in one statement.
WRITE_BATCH = 5000
# A term must be at least this long to be counted from the words: the trigram index on the
# words needs three characters, and a shorter term matches most words.
SHORTEST_TERM = 3


def usable(term: str) -> bool:
    """Whether the words can count `term`: no space in it, and long enough."""
    return len(term) >= SHORTEST_TERM and " " not in term


def follow(connection: Connection, on: bool = True) -> None:
    """Say that this transaction brings the bitmaps up to date for the queries it inserts and
    the links it adds or removes from now on (`on`), or no longer."""
    connection.exec_driver_sql("SELECT set_config('tagdesk.keys_follow', %(value)s, true)",
                               {"value": "on" if on else "off"})


class _Table:
    """A table of pieces: its key's columns (with their types), `chunk` and `keys`; its
    statements built once, each taking the pieces' columns as arrays."""

    def __init__(self, name: str, key: dict[str, TypeEngine]) -> None:
        self.columns = [*key, "chunk"]
        types = [*key.values(), Integer()]
        self.table = table(name, *(column(c, kind) for c, kind in zip(self.columns, types,
                                                                         strict=True)),
                           column("keys", LargeBinary()))

        def pieces(*extra: tuple[str, TypeEngine]):
            names = [*self.columns, *(name for name, _kind in extra)]
            arrays = [bindparam(f"c{n}", type_=ARRAY(kind))
                      for n, kind in enumerate([*types, *(kind for _name, kind in extra)])]
            return func.unnest(*arrays).table_valued(*names).render_derived(name="n")

        stored, given = self.table.c, pieces()
        same = tuple_(*(stored[c] for c in self.columns)) == tuple_(
            *(given.c[c] for c in self.columns))
        self.read_statement = (select(*(stored[c] for c in self.columns), stored["keys"])
                               .join(given, same).with_for_update(of=self.table))
        self.delete_statement = delete(self.table).where(same)
        written = pieces(("keys", LargeBinary()))
        upsert = insert(self.table).from_select(
            [*self.columns, "keys"], select(*(written.c[c] for c in [*self.columns, "keys"])))
        self.write_statement = upsert.on_conflict_do_update(
            index_elements=self.columns, set_={"keys": upsert.excluded["keys"]})

    @staticmethod
    def _arrays(rows: list[tuple]) -> dict[str, list]:
        return {f"c{n}": list(values) for n, values in enumerate(zip(*rows, strict=True))}

    def change(self, connection: Connection, added: dict[tuple, BitMap],
               removed: dict[tuple, BitMap] | None = None) -> None:
        """Add and remove keys, piece by piece (each piece its key's columns, then the
        chunk): each piece touched is read, changed and written back; one left empty is
        deleted."""
        removed = removed or {}
        touched = sorted(set(added) | set(removed))
        if not touched:
            return
        pieces = {piece: BitMap() for piece in touched}
        for *piece, keys in connection.execute(self.read_statement, self._arrays(touched)):
            pieces[tuple(piece)] = BitMap.deserialize(keys)
        for piece, keys in added.items():
            pieces[piece] |= keys
        for piece, keys in removed.items():
            pieces[piece] -= keys
        kept = [piece for piece in touched if pieces[piece]]
        gone = [piece for piece in touched if not pieces[piece]]
        for start in range(0, len(kept), WRITE_BATCH):
            rows = []
            for piece in kept[start:start + WRITE_BATCH]:
                keys = pieces[piece]
                keys.run_optimize()
                rows.append((*piece, keys.serialize()))
            connection.execute(self.write_statement, self._arrays(rows))
        if gone:
            connection.execute(self.delete_statement, self._arrays(gone))


WORDS = _Table("text_words", {"project_number": Integer(), "word": Text()})
CODES = _Table("code_keys", {"project_number": Integer(), "language": Text(), "country": Text()})
TAGS = _Table("tag_keys", {"tag_id": Integer()})

# The queries just inserted with the row keys `%(keys)s`, and their links.
_INSERTED_QUERIES = ("SELECT t.pk, t.project_number, t.language, t.country, t.folded "
                     "FROM unnest(%(keys)s::integer[]) AS a (pk) JOIN query_texts t ON t.pk = a.pk")
_INSERTED_LINKS = ("SELECT l.tag_id, l.query_pk FROM unnest(%(keys)s::integer[]) AS a (pk) "
                   "JOIN query_tags l ON l.query_pk = a.pk")
# A bulk load's range: what it added, kept by the load itself (service/bulk_load.py).
_LOADED_QUERIES = ("SELECT a.pk, p.number, a.language, a.country, a.folded "
                   "FROM bulk_load_added a, projects p WHERE p.id = %(project)s")
_LOADED_LINKS = "SELECT tag_id, query_pk FROM bulk_load_linked"


def add_loaded(connection: Connection, project_id: str) -> None:
    """Add the queries and links a bulk load's statement just inserted: the load keeps them
    in the temporary tables `bulk_load_added` (with their lower-cased texts) and
    `bulk_load_linked`."""
    _add(connection, _LOADED_QUERIES, _LOADED_LINKS, {"project": project_id})


def add_inserted(connection: Connection, keys: list[int]) -> None:
    """Add the queries just inserted with these row keys, with their links."""
    _add(connection, _INSERTED_QUERIES, _INSERTED_LINKS, {"keys": keys})


def _add(connection: Connection, queries: str, links: str, parameters: dict) -> None:
    """Cut into pieces here, from the rows (pk, project number, language, country, folded
    text) and links (tag id, pk): grouped in SQL (`unnest`, `array_agg`) they took 0.5 s a
    range of 50,000 rows."""
    words, codes, tags = defaultdict(list), defaultdict(list), defaultdict(list)
    with connection.connection.driver_connection.cursor(binary=True) as cursor:
        for pk, number, language, country, folded in cursor.execute(queries, parameters):
            chunk = pk >> CHUNK_SHIFT
            codes[number, language, country, chunk].append(pk)
            # Cut as string_to_array(folded, ' ') cuts (migration 0023): at every space.
            for word in set(folded.split(" ")) - {""}:
                words[number, word, chunk].append(pk)
        for tag_id, pk in cursor.execute(links, parameters):
            tags[tag_id, pk >> CHUNK_SHIFT].append(pk)
    for kept_in, pieces in ((WORDS, words), (CODES, codes), (TAGS, tags)):
        kept_in.change(connection, {piece: BitMap(pks) for piece, pks in pieces.items()})


def change_links(connection: Connection, added: list[tuple[int, int]],
                 removed: list[tuple[int, int]]) -> None:
    """Links (query's row key, tag id) just added and removed."""
    def pieces(links: list[tuple[int, int]]) -> dict[tuple, BitMap]:
        found: dict[tuple, BitMap] = defaultdict(BitMap)
        for query_pk, tag_id in links:
            found[tag_id, query_pk >> CHUNK_SHIFT].add(query_pk)
        return found

    TAGS.change(connection, pieces(added), pieces(removed))


@dataclass(frozen=True)
class Counted:
    texts_version: int
    links_version: int  # the sum of the filter's tags' links versions
    project_total: int
    matches: BitMap | None  # None when the bitmaps are behind


MATCHES = """
    WITH p AS (SELECT number, texts_version, query_count, words_version = texts_version AS current
               FROM projects WHERE id = %(project)s),
    t AS (SELECT id, links_version, keys_version = links_version AS current FROM tags
          WHERE project_id = %(project)s AND id = ANY (%(tags)s::integer[])),
    ok AS (SELECT p.current AND coalesce((SELECT bool_and(current) FROM t), true) AS current
           FROM p)
    SELECT 0, p.texts_version, p.query_count, ok.current,
           (SELECT coalesce(sum(links_version), 0) FROM t)::integer, NULL::bytea FROM p, ok
    UNION ALL
    SELECT 1, NULL, NULL, NULL, NULL, w.keys FROM p JOIN ok ON ok.current
    JOIN text_words w ON w.project_number = p.number AND w.word LIKE lower(%(pattern)s) ESCAPE '/'
    UNION ALL
    SELECT 2, NULL, NULL, NULL, NULL, c.keys FROM p JOIN ok ON ok.current AND %(codes)s
    JOIN code_keys c ON c.project_number = p.number
     AND (%(any_language)s OR c.language = ANY (%(languages)s::text[]))
     AND (%(any_country)s OR c.country = ANY (%(countries)s::text[]))
    UNION ALL
    SELECT 3, k.tag_id, NULL, NULL, NULL, k.keys FROM ok JOIN tag_keys k ON ok.current
     AND k.tag_id = ANY (%(tags)s::integer[])"""


def matches(connection: Connection, project_id: str, pattern: str, languages: Iterable[str],
            countries: Iterable[str], tag_sets: Iterable[Iterable[int]]) -> Counted:
    """The row keys of the project's queries whose text has a word LIKE `pattern` (lower-cased
    here, escape character "/": the row-by-row count's own pattern, service/search.py), with
    one of the languages and of the countries (when given) and one tag of each set, with the
    versions they are of, read in one statement."""
    languages, countries = sorted(languages), sorted(countries)
    tag_sets = [set(ids) for ids in tag_sets]
    # In the binary format: the bitmaps arrive as they are stored, not as hexadecimal text
    # to decode (text + codes + tag at ten million queries, 2.3 MB: 25–30 → 14–19 ms).
    with connection.connection.driver_connection.cursor(binary=True) as cursor:
        rows = cursor.execute(MATCHES, {
            "project": project_id, "pattern": pattern,
            "tags": sorted(set().union(*tag_sets)), "codes": bool(languages or countries),
            "any_language": not languages, "languages": languages,
            "any_country": not countries, "countries": countries}).fetchall()
    words, codes, tags = BitMap(), BitMap(), defaultdict(BitMap)
    for part, value, total, current, links_version, keys in rows:
        if part == 0:
            header = (value, links_version, total, current)
        elif part == 1:
            words |= BitMap.deserialize(keys)
        elif part == 2:
            codes |= BitMap.deserialize(keys)
        else:
            tags[value] |= BitMap.deserialize(keys)
    texts_version, links_version, project_total, current = header
    if not current:
        return Counted(texts_version, links_version, project_total, None)
    found = words
    if languages or countries:
        found &= codes
    for ids in tag_sets:
        found &= BitMap.union(BitMap(), *(tags[tag_id] for tag_id in ids))
    return Counted(texts_version, links_version, project_total, found)
