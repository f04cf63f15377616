"""Alembic environment of the jobs database: the store hands over its connection (inside the
transaction that holds the schema lock, jobs/schema.py) through config attributes. The
revisions are recorded in a version table of their own, so the jobs tables may share a
database with the service (whose Alembic keeps `alembic_version`)."""

from alembic import context

from jobs.schema import VERSION_TABLE
from jobs.store import metadata


def only_the_jobs_tables(name, type_, parent_names) -> bool:
    """Autogenerate looks at the jobs tables only (the service's may share the database)."""
    return type_ != "table" or name in metadata.tables


connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata,
                  version_table=VERSION_TABLE, include_name=only_the_jobs_tables,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
