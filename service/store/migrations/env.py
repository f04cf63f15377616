"""Alembic environment: the app hands over its engine through config attributes."""

from alembic import context

from service.store.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
