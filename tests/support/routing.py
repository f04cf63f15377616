"""One cache of compiled URL builders for every Flask app a test process makes.

Werkzeug compiles a small function for each rule of each app, twice (the builder with and
without unknown arguments): it writes the function as a syntax tree and passes it to Python's
`compile`. Each test makes its own apps, so a process compiled the same few hundred trees over
and over (a fifth of making the service's app). `compile` of a tree gives the same code each
time, so the code is kept by the tree's full dump (every node and value, so two rules share
code only when their trees are equal); werkzeug still builds each tree and makes a function
of its own from the code, for each rule of each app.
"""

from __future__ import annotations

import ast
import builtins
import threading

_COMPILE = builtins.compile
FILENAME = "<werkzeug routing>"  # what werkzeug names the code of its builders


class CompiledRules:
    def __init__(self) -> None:
        self._code: dict[str, object] = {}
        self._lock = threading.Lock()

    def __call__(self, source, filename, mode, *args, **kwargs):
        if filename != FILENAME or not isinstance(source, ast.AST) or args or kwargs:
            return _COMPILE(source, filename, mode, *args, **kwargs)
        key = f"{mode}:{ast.dump(source, include_attributes=True)}"
        code = self._code.get(key)
        if code is None:
            code = _COMPILE(source, filename, mode)
            with self._lock:
                self._code[key] = code
        return code
