"""gunicorn.conf.py: read by gunicorn from the root, where the service and the dashboard are
started, and its hook keeps each worker's loaded objects out of the collector's full passes."""

import gc
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gunicorn_reads_the_hook_from_the_root():
    printed = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--print-config", "service:create_app()"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True).stdout
    settings = {name.strip(): value.strip() for name, value in (
        line.split(" = ", 1) for line in printed.splitlines() if " = " in line)}
    assert settings["config"] == "./gunicorn.conf.py"
    assert settings["post_worker_init"] == "<post_worker_init()>"


def test_the_hook_freezes_what_the_worker_has_loaded():
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    assert gc.get_freeze_count() == 0
    try:
        conf.post_worker_init(worker=None)
        assert gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
