"""Whether an optional suite was asked for. tests/conftest.py decides the skips (OPT_IN and
its collection hook); tests that start a suite of their own ask here too."""

from __future__ import annotations

import os


def wanted(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "no")
