"""Create or upgrade the schema with Alembic (used by `init-db`, the demo and the tests)."""

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, Engine

MIGRATIONS = Path(__file__).parent / "store" / "migrations"


def alembic_config(connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@cache
def head_revision() -> str:
    """The newest revision of the migrations shipped with this code (read once a process)."""
    return ScriptDirectory.from_config(alembic_config(None)).get_current_head()


@contextmanager
def migrating(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction, for migrations to run in. On SQLite its foreign keys are
    off meanwhile (they cannot be switched inside a transaction), so that a migration that
    rebuilds a table (0024) does not delete, by cascade, what refers to the rows of the table
    it drops; such a migration checks the foreign keys of what it rebuilt before it ends."""
    if engine.dialect.name != "sqlite":
        with engine.begin() as connection:
            yield connection
        return
    with engine.connect() as connection:
        driver = connection.connection.driver_connection  # before any transaction begins
        driver.execute("PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                yield connection
        finally:
            driver.execute("PRAGMA foreign_keys = ON")


def upgrade(engine: Engine) -> bool:
    """Migrate to the newest revision, then build the bitmaps of every project that needs
    them (service/engine/rebuild.py); True when a migration ran."""
    before = revision(engine)
    if before == head_revision():  # at the newest already: nothing for Alembic to load or run
        rebuild_behind(engine)
        return False
    with migrating(engine) as connection:
        command.upgrade(alembic_config(connection), "head")
    rebuild_behind(engine)
    return revision(engine) != before


def rebuild_behind(engine: Engine) -> None:
    """Each project whose bitmaps are behind its rows built again, a transaction each."""
    from .engine.rebuild import projects_behind, rebuild

    with engine.connect() as connection:
        behind = projects_behind(connection)
    for project_id in behind:
        with engine.begin() as connection:
            rebuild(connection, project_id)


def analyze(engine: Engine) -> None:
    """Refresh the planner's statistics after large imports (SQLite has none until asked).
    On PostgreSQL also VACUUM, which marks the new rows all-visible so that counts can be
    answered from indexes alone; it cannot run inside a transaction."""
    if engine.dialect.name == "sqlite":
        with engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE")
        return
    _vacuum_analyze(engine, "")


def tidy_rewritten(engine: Engine, table: str) -> None:
    """After a table's rows were all written again (a project's suggestions, each learning):
    on PostgreSQL VACUUM ANALYZE it, so that its dead rows (6.8M at ten million queries) no
    longer slow each read of a few of its rows (577 ms for a page's suggestions, until
    autovacuum came) and the planner knows its rows again. SQLite reuses freed pages itself."""
    if engine.dialect.name == "postgresql":
        _vacuum_analyze(engine, table)


def _vacuum_analyze(engine: Engine, table: str) -> None:
    """PostgreSQL's VACUUM ANALYZE of `table` ("": every table), outside a transaction."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.exec_driver_sql(f"VACUUM ANALYZE {table}".strip())
