"""A thread that works while a `with` block runs: a server accepting connections, a client
calling again and again."""

from __future__ import annotations

import threading
from typing import Self


class Background:
    """`_run` in a daemon thread from the start of the `with` block; at its end `_stop` is set,
    which `_run` looks at to return, and the thread is given `join_seconds` to do so."""

    join_seconds = 2.0

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(self.join_seconds)
