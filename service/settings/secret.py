"""The signing key of the settings area's session cookie: TAGDESK_SERVICE_SECRET_KEY, or one
generated on first start and kept in the instance folder (mode 600)."""

from __future__ import annotations

from weblib.private_files import instance_secret

SECRET_KEY_FILE = "service-secret-key"  # noqa: S105 (a file name, not a secret)


def instance_secret_key(instance_path: str) -> str:
    """The key kept in the instance folder, created if missing."""
    return instance_secret(instance_path, SECRET_KEY_FILE)
