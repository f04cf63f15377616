"""Headless Debian Chromium driven by Playwright, one per test run, and the accessibility check.

Playwright's sync API runs its own event loop in the thread that starts it, and a second
`sync_playwright()` while the first is alive fails: every browser test (tests/e2e,
tests/security) shares this session fixture, registered in tests/conftest.py.

Playwright cannot download its browsers here: the tests use Debian's /usr/bin/chromium. Whether
they run at all is decided in tests/conftest.py (the `browser` marker, TAGDESK_TEST_BROWSER=1);
once asked for, a missing Chromium is a failure, never a silent skip.
"""

from __future__ import annotations

import os

import pytest
from axe_playwright_python.sync_playwright import Axe

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# axe-core as the Python package bundles it: one toolchain (uv) for the whole suite.
_axe = Axe()


def axe_serious(page) -> list[str]:
    """Serious or critical axe-core violations of the page (axe is injected through DevTools,
    which the page's CSP does not govern)."""
    violations = _axe.run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} — "
            f"{[node['target'] for node in v['nodes']][:3]}"
            for v in violations if v["impact"] in ("serious", "critical")]


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Browser tests were asked for but Chromium is missing at {CHROMIUM} "
                    "(apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
