"""The signing key of the settings area's session cookie: TAGDESK_SERVICE_SECRET_KEY, or one
generated on first start and kept in the instance folder (mode 600)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

SECRET_KEY_FILE = "service-secret-key"  # noqa: S105 (a file name, not a secret)


def _write_private(path: Path, text: str) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, 0o600)


def instance_secret_key(instance_path: str) -> str:
    """The key kept in the instance folder, created if missing. Several workers starting at
    once agree on the first one written (the file appears whole, by a hard link)."""
    folder = Path(instance_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SECRET_KEY_FILE
    if not path.exists():
        candidate = folder / f".{SECRET_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        _write_private(candidate, secrets.token_hex(32) + "\n")
        try:
            os.link(candidate, path)  # fails if another process won the race
        except FileExistsError:
            pass
        finally:
            candidate.unlink(missing_ok=True)
    return path.read_text(encoding="utf-8").strip()
