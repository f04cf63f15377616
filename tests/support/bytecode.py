"""Bytecode for the whole run, kept out of the source tree: loaded with `-p` (pyproject's
addopts), before pytest imports any other plugin.

Where the environment sets PYTHONDONTWRITEBYTECODE, every process of a run (the first, each
xdist worker, and each server or command line a test starts) compiled the project and the
packages it imports again (seconds of CPU each; a run starts dozens). The run's processes
write and read bytecode under .pytest_cache/ instead (PYTHONPYCACHEPREFIX), never next to the
sources. Set when this module is imported: before the other plugins, so that the first
process too finds its bytecode, and the assertion-rewritten code of hypothesis and
schemathesis (pytest rewrites every plugin's package), which it otherwise rewrote and
compiled again at every run (set later, in a conftest, it came after them); and before the
workers start, which inherit the environment.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PREFIX = Path(__file__).resolve().parents[2] / ".pytest_cache" / "bytecode"

if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(PREFIX)
    sys.dont_write_bytecode = False
    sys.pycache_prefix = str(PREFIX)
