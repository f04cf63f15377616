"""gunicorn.conf.py: read by gunicorn from the root, where the service and the dashboard are
started, and its hook keeps each worker's loaded objects out of the collector's full passes."""

import gc
import importlib.util
import subprocess
import sys
from pathlib import Path

from weblib.collector import YOUNG_OBJECTS

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


def test_the_hook_collects_the_young_generation_less_often():
    """A request's short-lived rows (a walk of thousands) die before a collection sees them,
    so they never grow the older generations toward a full pass."""
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    before = gc.get_threshold()
    try:
        conf.post_worker_init(worker=None)
        assert gc.get_threshold() == (YOUNG_OBJECTS, *before[1:])
        assert YOUNG_OBJECTS >= 16_384  # a walk's rows at ten million queries
        gc.collect(0)  # the young generation empty: its count starts at nothing
        collections = gc.get_stats()[0]["collections"]
        batches = [[(row, str(row)) for row in range(4096)] for _ in range(4)]
        del batches
        assert gc.get_stats()[0]["collections"] == collections
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
