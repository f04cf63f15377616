"""One cache of compiled templates for every Flask app a test process makes.

Each test makes its own apps, and each app its own Jinja environment, which compiled every
template it rendered again (in the dashboard's tests, a quarter of the time). Jinja's bytecode
cache (its public `BytecodeCache`) keeps the compiled code instead; a template is compiled
again when its source changes (Jinja checks a checksum of the source), and code compiled under
other options of the environment is never used (they are part of the key). Only the compiled
code is shared: every app still has its own environment, globals and filters.
"""

from __future__ import annotations

import threading

from jinja2 import BytecodeCache


def _code_options(environment) -> tuple:
    """What, besides the source, decides the code a template compiles to."""
    autoescape = environment.autoescape
    return (
        environment.block_start_string, environment.block_end_string,
        environment.variable_start_string, environment.variable_end_string,
        environment.comment_start_string, environment.comment_end_string,
        environment.line_statement_prefix, environment.line_comment_prefix,
        environment.trim_blocks, environment.lstrip_blocks, environment.newline_sequence,
        environment.keep_trailing_newline, tuple(sorted(environment.extensions)),
        environment.optimized, environment.is_async, environment.finalize,
        getattr(autoescape, "__func__", autoescape),  # Flask's: the same method of every app
    )


class CompiledTemplates(BytecodeCache):
    def __init__(self) -> None:
        self._code: dict[tuple, bytes] = {}
        self._lock = threading.Lock()

    def load_bytecode(self, bucket) -> None:
        code = self._code.get((bucket.key, _code_options(bucket.environment)))
        if code is not None:
            bucket.bytecode_from_string(code)  # a stale checksum leaves it to be compiled

    def dump_bytecode(self, bucket) -> None:
        with self._lock:
            self._code[(bucket.key, _code_options(bucket.environment))] = (
                bucket.bytecode_to_string())

    def clear(self) -> None:
        with self._lock:
            self._code.clear()
