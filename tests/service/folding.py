"""Text folded as the long text filters folded it from migration 0013 to 0025, to check the
short-string counters of those revisions against (tests of old migrations; at head the count
engine folds by Unicode's simple case folding on both databases: tests/service/counters.py).

Terms of three characters and more were matched by each database's own means: on SQLite the
FTS5 trigram index, which folds every character by a table of its own; on PostgreSQL `lower()`
(both sides of ILIKE, and the lower-cased copy in `query_texts`). The folds here are asked of
those means directly — of a trigram index made in memory, and of `lower()` — not of the
service's code or tables.
"""

from __future__ import annotations

import sqlite3
from collections import Counter

from sqlalchemy import text


def fts5_folds(characters) -> dict[str, str]:
    """How SQLite's trigram tokenizer folds each of `characters`: each is indexed three times
    in a row ("ÄÄÄ"), and the trigram found at its place says what it became ("äää")."""
    chars = sorted(set(characters))
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        connection.execute("INSERT INTO t (x) VALUES (?)", ("".join(c * 3 for c in chars),))
        folds = {}
        for term, offset in connection.execute("SELECT term, offset FROM v"):
            if offset % 3 == 0:
                assert len(term) == 3 and len(set(term)) == 1, term
                folds[chars[offset // 3]] = term[0]
        assert len(folds) == len(chars)
        return folds
    finally:
        connection.close()


def dialect(session_or_connection) -> str:
    if hasattr(session_or_connection, "get_bind"):
        return session_or_connection.get_bind().dialect.name
    return session_or_connection.dialect.name


def folded(session_or_connection, strings) -> dict[str, str]:
    """Each of `strings` folded as its database's long text filters fold it."""
    strings = sorted(set(strings))
    if dialect(session_or_connection) == "sqlite":
        folds = fts5_folds("".join(strings))
        return {s: "".join(folds[c] for c in s) for s in strings}
    rows = session_or_connection.execute(
        text("SELECT s, lower(s) FROM unnest(CAST(:strings AS text[])) AS s"),
        {"strings": strings})
    return dict(rows.all())


def grams(value: str, longest: int) -> set[str]:
    return {value[i:i + n] for n in range(1, longest + 1) for i in range(len(value) - n + 1)}


def folded_texts(session_or_connection) -> list[tuple[str, str]]:
    """(project, text folded as the long filters fold it) of every query."""
    rows = session_or_connection.execute(text("SELECT project_id, query FROM queries")).all()
    folds = folded(session_or_connection, [query for _project, query in rows])
    return [(project_id, folds[query]) for project_id, query in rows]


def expected_gram_counts(session_or_connection, longest: int) -> dict[tuple[str, str], int]:
    """How many of each project's queries contain each folded string of up to `longest`
    characters: what text_gram_counts must hold."""
    counts: Counter = Counter()
    for project_id, value in folded_texts(session_or_connection):
        counts.update((project_id, gram) for gram in grams(value, longest))
    return dict(counts)


def stored_gram_counts(session_or_connection) -> dict[tuple[str, str], int]:
    rows = session_or_connection.execute(
        text("SELECT project_id, gram, query_count FROM text_gram_counts")).all()
    return {(project_id, gram): count for project_id, gram, count in rows if count}
