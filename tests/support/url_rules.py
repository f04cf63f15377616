"""One cache of URL builders for every Flask app a test process makes.

Each test makes its own apps, and werkzeug compiles two URL-building functions for each rule
an app adds (it writes them as Python syntax trees and compiles them): about three quarters of
the CPU of making an app, some 200 rules a dashboard with its embedded service. A builder's
code depends only on the rule's parsed parts, its defaults and which kind it is: it reads the
rule's converters from the rule it is bound to when called, so the same function serves every
rule of the same text. Rules differing in any of those get builders of their own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from werkzeug.routing import Rule

_compile_builder = Rule._compile_builder


def _key(rule: Rule, append_unknown: bool) -> tuple:
    defaults = tuple(sorted((name, repr(value)) for name, value in (rule.defaults or {}).items()))
    converters = tuple((name, type(converter), getattr(converter, "regex", None))
                       for name, converter in rule._converters.items())
    return (rule.rule, tuple(rule._trace), defaults, converters, append_unknown)


@contextmanager
def shared_url_builders() -> Iterator[None]:
    """While open, rules of the same text, parts and defaults share compiled builders."""
    builders: dict[tuple, object] = {}
    lock = threading.Lock()

    def compile_builder(self: Rule, append_unknown: bool = True):
        key = _key(self, append_unknown)
        builder = builders.get(key)
        if builder is None:
            builder = _compile_builder(self, append_unknown)
            with lock:
                builders[key] = builder
        return builder

    Rule._compile_builder = compile_builder
    try:
        yield
    finally:
        Rule._compile_builder = _compile_builder
