"""Fixtures for the hostile-input and access tests: live servers on loopback, organizations
made through the service's admin layer, and a browser-like HTTP visitor that can come from a
client address of its choosing (any 127.x.y.z reaches a server bound to 127.0.0.1); those
helpers are in tests/support/security.py.

The API tests (`world`, `live_service`) run on SQLite and, with TAGDESK_TEST_POSTGRES=1, on
PostgreSQL too. The dashboard tests run against a live dashboard with its embedded service on
a SQLite file of their own.
"""

from __future__ import annotations

import pytest

from tests.support.databases import database_for


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for(request.param, request, tmp_path, sqlite_template)
