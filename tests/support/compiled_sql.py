"""One cache of compiled SQL for every SQLAlchemy engine a test process makes.

Each test makes apps on a database of its own, each app its own engine, and SQLAlchemy keeps
compiled statements per engine: every test compiled the service's statements again (about a
tenth of a dashboard test's CPU). SQLAlchemy keys a compiled statement by the dialect object
that compiled it, the statement's cache key and how it is run; here the dialect object is
replaced in that key by what the dialect is (its class and its settings), so engines of the
same database kind and options find each other's statements. A dialect set up differently
(another server version, serializer or option) compiles its own. The cache is bounded.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from functools import cache

from sqlalchemy.engine import Engine
from sqlalchemy.util import LRUCache, memoized_property

# Per-dialect helpers and caches: objects of each dialect's own, made the same way for all.
_HELPERS = frozenset({"identifier_preparer", "type_compiler", "type_compiler_instance",
                      "_type_memos", "_psycopg_adapters_map"})
CAPACITY = 5000


def _setting(value) -> Hashable:
    return value if isinstance(value, Hashable) else ("object", id(value))


@cache
def _remembered(kind: type) -> frozenset[str]:
    """Values a dialect of this class works out on first use (while compiling), the same for
    every dialect of its class and settings."""
    return frozenset(name for name, value in inspect.getmembers_static(kind)
                     if isinstance(value, memoized_property))


def dialect_signature(dialect) -> tuple:
    """What a dialect is: its class and settings, whichever engine it belongs to."""
    kind = type(dialect)
    left_out = _HELPERS | _remembered(kind)
    return (kind, *sorted((name, _setting(value)) for name, value in vars(dialect).items()
                          if name not in left_out))


class SharedCompiledCache:
    """The compiled-statement cache of an engine, shared through signatures of dialects."""

    def __init__(self, store: LRUCache) -> None:
        self._store = store

    def get(self, key: tuple, default=None):
        return self._store.get((dialect_signature(key[0]), *key[1:]), default)

    def __setitem__(self, key: tuple, compiled) -> None:
        self._store[(dialect_signature(key[0]), *key[1:])] = compiled


@contextmanager
def shared_compiled_sql() -> Iterator[None]:
    """While open, each new engine keeps its compiled statements in one shared cache."""
    init = Engine.__init__
    store = LRUCache(CAPACITY)

    def sharing_init(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        if self._compiled_cache is not None:  # None: the engine was made not to cache
            self._compiled_cache = SharedCompiledCache(store)

    Engine.__init__ = sharing_init
    try:
        yield
    finally:
        Engine.__init__ = init
