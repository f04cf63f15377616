"""The database: its engine and sessions (db.py), its tables (models.py) and their Alembic
migrations (migrations/)."""
