"""The jobs database's schema, migrated with Alembic (jobs/migrations/) like the service's.

`upgrade(connection)` brings the tables to the newest revision, inside the caller's
transaction (`Store.upgrade` holds the schema lock around it, so several workers starting at
once on a fresh database migrate it once). The revisions are recorded in `jobs_alembic_version`,
not Alembic's default table, so the jobs tables may live in the service's database too.

A database made before the jobs tables had migrations (by `metadata.create_all`, which made
exactly what the first revision makes) is adopted: with all its tables there and no version
recorded, it is stamped at that first revision, its rows untouched, then upgraded from there.

A new revision: `command.revision(alembic_config(connection), "message", autogenerate=True)`
against a database at head writes one into jobs/migrations/versions/ to complete by hand.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).parent / "migrations"
VERSION_TABLE = "jobs_alembic_version"
# The revision that made the tables `metadata.create_all` used to make, and those tables.
BASELINE = "jobs_0001"
BASELINE_TABLES = frozenset({"edits", "edit_changes", "project_locks", "lock_waiters"})


class UnknownLayout(RuntimeError):
    """Some of the jobs tables exist, but not all, and no revision is recorded."""


def alembic_config(connection: Connection | None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@cache
def head_revision() -> str:
    """The newest revision of the jobs migrations shipped with this code (read once a process)."""
    return ScriptDirectory.from_config(alembic_config(None)).get_current_head()


def revision(connection: Connection) -> str | None:
    """The revision recorded in the database (None: never migrated)."""
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


def upgrade(connection: Connection) -> bool:
    """Migrate to the newest revision, adopting a database `create_all` made; True when
    anything was done (a migration ran, or the database was stamped)."""
    before = revision(connection)
    if before == head_revision():  # at the newest already: nothing for Alembic to load or run
        return False
    if before is None:
        present = BASELINE_TABLES & set(inspect(connection).get_table_names())
        if present == BASELINE_TABLES:
            command.stamp(alembic_config(connection), BASELINE)
        elif present:
            raise UnknownLayout(
                f"The jobs database holds some of the jobs tables ({', '.join(sorted(present))}) "
                f"but not all, and no {VERSION_TABLE}: it was not made by Tagdesk, so it is "
                "left alone.")
    command.upgrade(alembic_config(connection), "head")
    return revision(connection) != before
