"""Headless Debian Chromium driven by Playwright, one per test run.

Playwright's sync API runs its own event loop in the thread that starts it, and a second
`sync_playwright()` while the first is alive fails: every browser test (tests/e2e,
tests/security) shares this session fixture, registered in tests/conftest.py.

Playwright cannot download its browsers here: the tests use Debian's /usr/bin/chromium. They
are skipped (with the reason) when it is absent, unless TAGDESK_TEST_BROWSER=1 asks for them,
in which case a missing Chromium is a failure.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import wanted

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def require_browser() -> None:
    if os.path.exists(CHROMIUM):
        return
    if wanted("TAGDESK_TEST_BROWSER"):
        pytest.fail(f"TAGDESK_TEST_BROWSER=1 but Chromium is missing at {CHROMIUM} "
                    "(apt-get install chromium)")
    pytest.skip(f"Chromium is not installed at {CHROMIUM}; browser tests are skipped "
                "(install it, or set TAGDESK_TEST_BROWSER=1 to make its absence a failure)")


@pytest.fixture(scope="session")
def browser():
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
