"""The service suite runs on SQLite and, when TAGDESK_TEST_POSTGRES=1, on PostgreSQL too."""

import pytest

from tests.conftest import database_for


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for(request.param, request, tmp_path, sqlite_template)
