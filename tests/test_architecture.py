"""The layout holds: the import contracts in pyproject.toml (docs/architecture.md), and a
dashboard pointed at a remote API loads none of the service."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_the_import_contracts_are_kept():
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


def test_with_a_remote_api_the_dashboard_loads_no_service_module(tmp_path):
    program = (
        "import sys\n"
        "import app\n"
        "app.create_app({'INSTANCE_PATH': sys.argv[1]})\n"
        "print(sorted(name for name in sys.modules\n"
        "             if name.split('.')[0] in ('service', 'embedded')))\n"
    )
    environment = {**os.environ, "TAGDESK_API_URL": "http://127.0.0.1:9/",
                   "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path / "instance")],
                            cwd=ROOT, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout
