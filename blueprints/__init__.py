"""The dashboard's pages (Flask blueprints) and their small helper modules."""
