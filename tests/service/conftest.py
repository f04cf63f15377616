"""The service suite runs on SQLite and, when TAGDESK_TEST_POSTGRES=1, on PostgreSQL too."""

import pytest
from sqlalchemy import event

from service import bitmap_index
from tests.support.databases import database_for


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    return database_for(request.param, request, tmp_path, sqlite_template)


@pytest.fixture
def statements(service_app, monkeypatch):
    """Every statement the service runs (the live server runs in this process), including
    the bitmap index's reads, which run on a binary cursor of the driver's own
    (service/bitmap_index.py) and so pass no SQLAlchemy event."""
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        seen.append(" ".join(statement.split()))

    read_bitmaps = bitmap_index.matches

    def recorded_bitmaps(*args, **kwargs):
        record(None, None, bitmap_index.MATCHES)
        return read_bitmaps(*args, **kwargs)

    monkeypatch.setattr(bitmap_index, "matches", recorded_bitmaps)
    engine = service_app.extensions["tagdesk_engine"]
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)
