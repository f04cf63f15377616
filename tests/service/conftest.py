"""The service suite runs on SQLite and, when TAGDESK_TEST_POSTGRES=1, on PostgreSQL too."""

import pytest
from sqlalchemy import event

from tests.support.databases import database_for
from tests.support.world import FOUR_QUERIES


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for(request.param, request, tmp_path, sqlite_template)


@pytest.fixture
def statements(service_app, monkeypatch):
    """Every statement the service runs (the live server runs in this process)."""
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        seen.append(" ".join(statement.split()))

    engine = service_app.extensions["tagdesk_engine"]
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def flask_cli(service_app):
    """The service's command line, in this process: `flask_cli("import-queries", …)`."""
    runner = service_app.test_cli_runner()
    return lambda *args: runner.invoke(args=[str(arg) for arg in args])


@pytest.fixture
def seeded(world):
    """The world with FOUR_QUERIES added (a module of its own rows defines its own)."""
    world.add_queries(FOUR_QUERIES)
    return world
