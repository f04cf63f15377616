"""The README's test command passes anywhere: the optional suites run only when asked for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SWITCHES = ("TAGDESK_TEST_POSTGRES", "TAGDESK_TEST_REDIS", "TAGDESK_TEST_BROWSER",
            "TAGDESK_TEST_PROXY")


def run_pytest(*args: str, **switches: str) -> str:
    env = {name: value for name, value in os.environ.items() if name not in SWITCHES}
    env.update(switches)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    return result.stdout + result.stderr


def test_without_switches_the_optional_suites_are_skipped_with_their_reason():
    output = run_pytest("tests/e2e/test_restart_browser.py", "tests/dashboard/test_redis.py",
                        "tests/service/test_query_texts_migration.py",
                        "tests/proxy/test_slow_clients.py")
    assert "failed" not in output and " passed" not in output, output
    assert "browser (Chromium) tests are off (set TAGDESK_TEST_BROWSER=1" in output
    assert "Redis tests are off (set TAGDESK_TEST_REDIS=1" in output
    assert "PostgreSQL tests are off (set TAGDESK_TEST_POSTGRES=1" in output
    assert "reverse proxy (nginx) tests are off (set TAGDESK_TEST_PROXY=1" in output


@pytest.mark.redis
def test_a_switch_turns_on_its_own_suite_and_no_other():
    output = run_pytest("tests/dashboard/test_redis.py",
                        "tests/service/test_query_texts_migration.py", TAGDESK_TEST_REDIS="1")
    assert " passed" in output and "failed" not in output, output
    assert "Redis tests are off" not in output
    assert "PostgreSQL tests are off (set TAGDESK_TEST_POSTGRES=1" in output


def test_every_browser_test_carries_the_browser_marker():
    """A file of tests/e2e without the marker would drive Chromium in the README's run."""
    output = run_pytest("--collect-only", "-m", "not browser", "tests/e2e")
    assert "no tests collected" in output and "deselected" in output, output
